"""torchrun's ``error.json`` (written by ``@record`` through the elastic ``ErrorHandler``).

Shape (``torch/distributed/elastic/multiprocessing/errors/error_handler.py``)::

    {"message": {"message": "KeyError: 'missing_batch_key'",
                 "extraInfo": {"py_callstack": "Traceback (most recent call last):\\n ...",
                               "timestamp": "1795315347"},
                 "errorCode": -9}}          # errorCode only when the agent copied it

``message`` may also be a plain string (the "new message format" the handler tolerates).
The file sits at ``<log_dir>/<run_id>_*/attempt_<k>/<local_rank>/error.json``.

``timestamp`` is Unix seconds; ``ts`` is that instant in UTC (naive), and ``value`` keeps the raw
seconds so a later stage can re-anchor it to the job's local time.
"""

from __future__ import annotations

import json
from datetime import datetime, timezone

from nccllens import lazy_regex
from nccllens.parse.python import dataloader_facts
from nccllens.parse.tracebacks import fold_traceback

_ATTEMPT = lazy_regex.compile(r"attempt_(?P<attempt>\d+)/(?P<lr>\d+)/[^/]*$")
_TYPE = lazy_regex.compile(r"^(?P<type>(?:[A-Za-z_]\w*\.)*[A-Za-z_]\w*)(?::|$)")


def _utc(seconds: str | int | float | None) -> datetime | None:
    try:
        return datetime.fromtimestamp(int(float(seconds)), tz=timezone.utc).replace(tzinfo=None)
    except (TypeError, ValueError, OverflowError, OSError):
        return None


def _event(data: dict, path: str) -> dict:
    outer = data.get("message")
    info = outer if isinstance(outer, dict) else {}
    text = info.get("message") if info else outer
    text = text if isinstance(text, str) else ""
    extra = info.get("extraInfo") if isinstance(info.get("extraInfo"), dict) else {}
    callstack = extra.get("py_callstack") if isinstance(extra.get("py_callstack"), str) else ""
    event = {
        "file": path, "line": 1, "raw": text.split("\n", 1)[0], "family": "torchrun",
        "kind": "torchrun.error_file", "level": "error", "message": text.split("\n", 1)[0].strip(),
    }
    m = _TYPE.match(text.strip())
    if m:
        event["exc_type"] = m["type"]
    lines = callstack.split("\n")
    if lines and lines[0].startswith("Traceback"):
        folded = fold_traceback(lines[1:])
        event["exc_type"] = folded.exc_type or event.get("exc_type")
        event["detail"] = folded.detail()
        event.update(dataloader_facts(folded.texts))
    stamp = extra.get("timestamp")
    ts = _utc(stamp)
    if ts is not None:
        event["ts"], event["ts_kind"], event["value"] = ts, "absolute", str(stamp)
    code = info.get("errorCode")
    if isinstance(code, int) and not isinstance(code, bool):
        event["exit_code"] = code
    where = _ATTEMPT.search(path.replace("\\", "/"))
    if where:
        event["attempt"], event["local_rank"] = int(where["attempt"]), int(where["lr"])
    return event


def parse_error_json(data: bytes, path: str) -> list[dict]:
    """One ``torchrun.error_file`` event for an error.json, or [] when it is not one."""
    try:
        parsed = json.loads(data.decode("utf-8", errors="replace"))
        if not isinstance(parsed, dict) or "message" not in parsed:
            return []
        return [_event(parsed, path)]
    except Exception:  # noqa: BLE001 - a bad file is reported as skipped, never raised
        return []
