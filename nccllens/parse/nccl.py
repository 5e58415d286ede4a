"""The NCCL family: NCCL_DEBUG lines from every NCCL generation (2.7 to 2.30.7).

Kinds (docs/events.md): nccl.version, nccl.init_start, nccl.init_complete, nccl.bootstrap,
nccl.net_ib, nccl.net_ib_none, nccl.net_socket, nccl.using_network, nccl.env, nccl.connected,
nccl.teardown, nccl.warn, nccl.backtrace, nccl.call, nccl.info, nccl.ras.

``host`` and ``pid`` come from the NCCL prefix; ``[dev]`` (the CUDA device) is never a rank. The
communicator rank printed by Init/teardown lines fills ``rank`` only when the launcher prefix did
not already give the line a (global) rank; it is always kept in ``detail``/typed fields.
PyTorch's ``NCCL error in: ...`` wrapper and its ``Last error:`` payload belong to the torch family
and are not claimed here.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from nccllens import lazy_regex
from nccllens.parse.base import FileContext, Line
from nccllens.parse.nccl_info import PREFILTER_BODIES, classify
from nccllens.parse.nccl_prefix import NcclPrefix, split_prefix
from nccllens.parse.nccl_warn import warn_fields

FAMILY = "nccl"

PREFILTER = (
    r"NCCL WARN|NCCL CALL |NCCL version \d+\.\d+\.\d+\S*\+cuda"
    r"|NCCL (?:INFO|TRACE) (?:\[Rank \d+\] )?(?:" + PREFILTER_BODIES + r")"
    r"|^[^\s:\[\]]+:\d+:\d+ \[\d+\] (?:\S+\.(?:cu|cc|cpp|h):\d+ WARN |INFO (?:" + PREFILTER_BODIES + r"))"  # NCCL 2.0-2.2
)

_BANNER_VERSION = lazy_regex.compile(r"NCCL version (?P<ver>\d+\.\d+\.\d+\S*?\+cuda\d+\.\d+)")
_CALL = lazy_regex.compile(r"(?P<op>nccl\w+)\((?P<args>.*)")
_RANK_TAG = lazy_regex.compile(r"\[Rank (?P<rank>\d+)\] ")


def _event(line: Line, pre: NcclPrefix, kind: str, level: str, message: str) -> dict:
    ev = {
        "file": line.file, "line": line.line, "raw": line.raw, "family": FAMILY, "kind": kind,
        "level": level, "message": message, "host": pre.host or line.host, "pid": pre.pid,
    }
    if pre.ts is not None:
        ev["ts"], ev["ts_kind"] = pre.ts, "absolute"
    if pre.elapsed_ms is not None:
        ev["ts_rel"] = pre.elapsed_ms / 1000.0
        if pre.ts is None and line.ts is None:
            ev["ts_kind"] = "elapsed"
    return ev


def _info_event(line: Line, pre: NcclPrefix) -> dict | None:
    body = pre.body
    group_rank = None
    m = _RANK_TAG.match(body)
    if m:  # 2.29.7+ Init START: "[Rank R] ncclCommInitRank comm ..."
        group_rank = int(m["rank"])
    found = classify(body[m.end():] if m else body)
    if found is None:
        return None
    kind, fields = found
    ev = _event(line, pre, kind, "trace" if pre.kind == "TRACE" else "info", body)
    comm_rank = fields.pop("comm_rank", None)
    if comm_rank is None:
        comm_rank = group_rank
    if comm_rank is not None:
        ev["rank"] = line.rank if line.rank is not None else comm_rank
    if kind == "nccl.backtrace" and pre.kind != "TRACE":
        ev["level"] = "error"
    ev.update({k: v for k, v in fields.items() if v is not None})
    return ev


def _warn_event(line: Line, pre: NcclPrefix) -> dict:
    fields = warn_fields(pre.body)
    ev = _event(line, pre, "nccl.warn", fields.pop("level"), pre.body)
    own = fields.pop("own_rank", None)
    if own is not None:
        ev["rank"] = line.rank if line.rank is not None else own
    ev["key"] = pre.src
    if pre.func:
        ev["detail"] = pre.func
    ev.update(fields)
    return ev


def _one(line: Line) -> dict | None:
    message = line.message
    if "NCCL" not in message and " INFO " not in message and " WARN " not in message:
        return None
    pre = split_prefix(message)
    if pre is None:
        return None
    if pre.kind == "BANNER":
        m = _BANNER_VERSION.search(pre.body)
        ev = _event(line, pre, "nccl.version", "info", pre.body)
        if m:
            ev["version"] = f"nccl {m['ver']}"
        return ev
    if pre.kind == "WARN":
        return _warn_event(line, pre)
    if pre.kind == "CALL":
        ev = _event(line, pre, "nccl.call", "info", pre.body)
        m = _CALL.match(pre.body)
        if m:
            ev["op"], ev["detail"] = m["op"], m["args"].rstrip(")")
        return ev
    return _info_event(line, pre)


def parse(lines: Iterable[Line], ctx: FileContext) -> Iterator[dict]:
    """Events for the NCCL lines among ``lines``; lines that are not NCCL's are skipped."""
    for line in lines:
        try:
            ev = _one(line)
        except (ValueError, IndexError, TypeError):  # odd input never stops the file
            ev = None
        if ev is not None:
            yield {k: v for k, v in ev.items() if v is not None}
