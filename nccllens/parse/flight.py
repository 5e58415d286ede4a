"""Flight-recorder dumps (JSON or pickle) → ``flight.entry`` and ``flight.pg_status`` events.

Every dump generation is accepted (shared/reference/pytorch_c10d.md §8.4): a bare list of entries
(2.2-dev), a dict with ``version`` 1.x (``seq_id``, no ``process_group``) or 2.x
(``collective_seq_id``/``p2p_seq_id``, ``process_group``, ``pg_status``), JSON dumps (strings for
numbers, ``0`` for unset times, lists for tuples) and gloo's broken ``pg_config``. Nothing is
required: a missing key leaves its column null.

The rank comes from the dump's ``rank`` key, else the file name's trailing number
(``fr_trace_rank_3``, ``nccl_trace_rank_host-a_12``, ``comm_lib_trace_rank_7.json``). An entry's
``line`` is its position in the dump (1-based), so evidence can point at it.
"""

from __future__ import annotations

import json
import re
from datetime import datetime
from typing import Any

from nccllens import data_bounds, lazy_regex
from nccllens.safe_pickle import loads as safe_loads

_RANK_IN_NAME = lazy_regex.compile(r"(\d+)(?:\.json)?(?:\.gz)?$", re.I)


def _int(value: Any) -> int | None:
    if isinstance(value, bool) or value is None:
        return None
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


def rank_from_name(path: str) -> int | None:
    base = path.rsplit("!", 1)[-1].rsplit("/", 1)[-1]
    m = _RANK_IN_NAME.search(base)
    return int(m.group(1)) if m else None


def _op_name(profiling_name: Any) -> str | None:
    """``nccl:all_reduce`` → ``all_reduce``; ``nccl:send 0->1`` → ``send``."""
    if not isinstance(profiling_name, str) or not profiling_name:
        return None
    name = profiling_name.split(":", 1)[-1].strip()
    return name.split(" ", 1)[0] or None


def _wall_clock(ns: Any) -> datetime | None:
    value = _int(ns)
    if not value or value <= 0:
        return None
    try:
        return datetime.fromtimestamp(value / 1e9)
    except (OverflowError, OSError, ValueError):
        return None


def _group(entry: dict) -> tuple[str | None, str | None]:
    pg = entry.get("process_group")
    if isinstance(pg, (list, tuple)) and pg:
        name = str(pg[0]) if pg[0] is not None else None
        desc = str(pg[1]) if len(pg) > 1 and pg[1] is not None else None
        return name, desc
    pg_id = entry.get("pg_id")
    return (str(pg_id) if pg_id is not None else None), None


_LIBRARY_FRAMES = ("/torch/distributed/", "/torch/nn/parallel/", "/torch/utils/", "/site-packages/torch/")


def _frames(entry: dict, keep: int = 4) -> list[str]:
    """The entry's Python frames (innermost first) as ``name at file:line``, the job's own frames first:
    the c10d wrappers say nothing about which code path issued the collective."""
    frames = entry.get("frames")
    if not isinstance(frames, (list, tuple)):
        return []
    shown = []
    for f in frames:
        if isinstance(f, dict) and f.get("name") is not None:
            shown.append((str(f.get("filename") or "?"), f"{f['name']} at {f.get('filename') or '?'}:{f.get('line') or '?'}"))
    own = [text for path, text in shown if not any(lib in path for lib in _LIBRARY_FRAMES)]
    return (own or [text for _, text in shown])[:keep]


def _sizes(entry: dict) -> str:
    parts = []
    for key in ("input_sizes", "output_sizes", "input_dtypes", "output_dtypes"):
        if key in entry and entry[key] is not None:
            parts.append(f"{key}={entry[key]}")
    return " ".join(parts)


def _entry_event(entry: dict, index: int, rank: int | None, path: str) -> dict:
    name, desc = _group(entry)
    is_p2p = bool(entry.get("is_p2p"))
    seq = _int(entry.get("collective_seq_id", entry.get("seq_id")))
    if is_p2p:
        seq = _int(entry.get("p2p_seq_id"))
    op = _op_name(entry.get("profiling_name"))
    state = entry.get("state")
    if entry.get("retired") and state != "completed":
        state = f"{state or 'scheduled'}, retired"
    sizes = _sizes(entry)
    where = f"{name}:{desc}" if desc else (name or "?")
    shown = entry.get("profiling_name") if isinstance(entry.get("profiling_name"), str) else None
    message = f"{shown or op or '?'}({sizes}, state={state}) pg {where} seq {seq}"
    frames = _frames(entry)
    return {
        "file": path, "line": index + 1, "raw": message, "message": message, "rank": rank,
        "family": "flight", "level": "info", "kind": "flight.entry", "pg": name, "seq": seq, "op": op,
        # detail: the sizes on its first line, then the Python frames that issued the collective
        "value": state, "detail": "\n".join([sizes, *frames]), "key": "p2p" if is_p2p else "collective",
        "timeout_ms": _int(entry.get("timeout_ms")), "ts": _wall_clock(entry.get("time_created_ns")),
        "ts_kind": "absolute" if entry.get("time_created_ns") else None,
    }


def _completed_seqs(entries: list[dict]) -> dict[str, int]:
    """Per process group id, the highest collective whose entry says ``completed``. ``pg_status`` lags
    its entries: the watchdog updates it when it retires work, so a dump taken at a normal exit can say
    24 of 300 collectives completed while every entry says completed."""
    done: dict[str, int] = {}
    for entry in entries:
        seq = _int(entry.get("collective_seq_id"))
        if entry.get("state") == "completed" and not entry.get("is_p2p") and seq is not None:
            key = str(entry.get("pg_id"))
            done[key] = max(done.get(key, seq), seq)
    return done


def _status_events(data: dict, names: dict[str, str], rank: int | None, path: str,
                   entries: list[dict]) -> list[dict]:
    status = data.get("pg_status")
    if not isinstance(status, dict):
        return []
    out = []
    completed = _completed_seqs(entries)
    for pg_id, values in status.items():
        if not isinstance(values, dict):
            continue
        pg = names.get(str(pg_id), str(pg_id))
        enq, done = _int(values.get("last_enqueued_collective")), _int(values.get("last_completed_collective"))
        seen = completed.get(str(pg_id))
        if seen is not None and (enq is None or seen <= enq) and (done is None or seen > done):
            done = seen
        message = f"pg {pg} status: last enqueued {enq}, last completed {done}"
        out.append({"file": path, "line": 1, "raw": message, "message": message, "rank": rank,
                    "family": "flight", "level": "info", "kind": "flight.pg_status", "pg": pg,
                    "last_enqueued": enq, "last_completed": done,
                    "value": str(values.get("last_started_collective"))})
    return out


def _config_events(data: dict, rank: int | None, path: str) -> list[dict]:
    """``pg_config``: the members of each process group (gloo writes an empty one: nothing to say)."""
    config = data.get("pg_config")
    if not isinstance(config, dict):
        return []
    out = []
    for pg_id, values in config.items():
        if not isinstance(values, dict):
            continue
        ranks = values.get("ranks")
        members = sorted({int(r) for r in re.findall(r"\d+", str(ranks))}) if ranks is not None else []
        if not members:
            continue
        name = str(values.get("name") or pg_id)
        message = f"pg {name} ({values.get('desc') or '?'}) members {members}"
        out.append({"file": path, "line": 1, "raw": message, "message": message, "rank": rank, "family": "flight",
                    "level": "info", "kind": "flight.pg_config", "pg": name, "value": str(values.get("desc") or ""),
                    "detail": ",".join(map(str, members)), "nranks": len(members)})
    return out


def _decode(data: bytes, kind: str) -> Any:
    if kind == "flight_json":
        data_bounds.scan_json(data)
        value = json.loads(data.decode("utf-8", errors="replace"))
        data_bounds.check_tree(value)
        return value
    return safe_loads(data)


def parse_flight(data: bytes, path: str, kind: str) -> list[dict]:
    """Events from one dump; raises only on undecodable data (the pipeline reports it)."""
    dump = _decode(data, kind)
    if isinstance(dump, list):
        dump = {"entries": dump}
    if not isinstance(dump, dict):
        return []
    rank = _int(dump.get("rank"))
    if rank is None:
        rank = rank_from_name(path)
    entries = [e for e in dump.get("entries") or [] if isinstance(e, dict)]
    events = [_entry_event(e, i, rank, path) for i, e in enumerate(entries)]
    names = {}
    for e in entries:
        name, _ = _group(e)
        if e.get("pg_id") is not None and name is not None:
            names.setdefault(str(e["pg_id"]), name)
    events += _status_events(dump, names, rank, path, entries)
    events += _config_events(dump, rank, path)
    version = dump.get("version")
    lib = dump.get("comm_lib_version") or dump.get("nccl_version")
    for e in events:
        e["version"] = f"flight {version}" if version else None
        if lib and e["kind"] == "flight.pg_status":
            e["version"] = f"nccl {lib}"
    return events
