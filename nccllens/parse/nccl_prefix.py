"""The NCCL log-line prefix, every generation (shared/reference/nccl_logs.md §1.1).

``split_prefix(message)`` returns a :class:`NcclPrefix` (or None when the line is not an NCCL line):

- INFO   ``host:pid:tid [dev] NCCL INFO <body>``
- WARN   ``host:pid:tid [dev] FILE:LINE NCCL WARN <body>``; 2.30.7 adds ``(FUNC)`` after FILE:LINE
- TRACE  ``host:pid:tid [dev] <elapsed ms> FUNC:LINE NCCL TRACE <body>``
- CALL   ``host:pid:tid NCCL CALL <body>`` (2.13+, no ``[dev]``)
- 2.26+: an optional ``[YYYY-MM-DD HH:MM:SS(.f)] `` wall-clock stamp before the host
- a paste that kept only ``[dev] NCCL INFO <body>`` of the prefix (no host, pid or tid), or none of it
  (``NCCL INFO <body>`` at the start of the line)
- the bare banner ``NCCL version 2.x.y+cudaX.Y`` (no host prefix; 2.26+ may stamp it too)
- before 2.3, the level without ``NCCL``: ``host:pid:tid [dev] INFO <body>``,
  ``host:pid:tid [dev] FILE:LINE WARN <body>`` (only with the whole ``host:pid:tid [dev]`` prefix)

``[dev]`` is the CUDA device of the calling thread, never the rank: it is parsed and dropped.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from nccllens import lazy_regex
from nccllens.parse.prefix_time import parse_ts

_STAMP = r"\[(?P<ts>\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d(?:[.,]\d+)?)\] ?"

_LINE = lazy_regex.compile(
    r"(?:" + _STAMP + r")?"
    r"(?:(?P<host>[^\s:\[\]]+):(?P<pid>\d+):(?P<tid>\d+) (?:\[(?P<dev>-?\d+)\] )?"
    r"|(?<![\w:])\[(?P<dev2>-?\d+)\] "  # a paste that kept only the [dev] of the prefix
    r"|^\s*)"  # ...or none of it: the line starts with the level
    r"(?:(?P<elapsed>\d+\.\d+) )?"
    r"(?:(?P<src>[^\s:]+):(?P<srcline>\d+) (?:\((?P<func>[^)]*)\) )?)?"
    r"NCCL (?P<lvl>INFO|WARN|TRACE|CALL)(?: (?P<body>.*))?$"
)
# NCCL 2.0-2.2 printed the level without "NCCL"; the full prefix (host, pid, tid, device) must be there
_OLD = lazy_regex.compile(
    r"(?:^|\s)(?P<host>[^\s:\[\]]+):(?P<pid>\d+):(?P<tid>\d+) \[(?P<dev>-?\d+)\] "
    r"(?:(?P<src>[^\s:]+\.(?:cu|cc|cpp|h)):(?P<srcline>\d+) (?=WARN))?(?P<lvl>INFO|WARN) (?P<body>.*)$"
)
_BANNER = lazy_regex.compile(r"^(?:" + _STAMP + r")?(?P<body>NCCL version \d+\.\d+\.\d+\S*\+cuda\d+\.\d+.*)$")

_LEVELS = {"INFO": "info", "WARN": "warning", "TRACE": "trace", "CALL": "info"}


@dataclass(slots=True)
class NcclPrefix:
    """The ``host:pid:tid [dev] NCCL INFO/WARN`` prefix of a line and its body."""

    kind: str  # INFO, WARN, TRACE, CALL or BANNER
    body: str
    host: str | None = None
    pid: int | None = None
    tid: int | None = None
    src: str | None = None  # WARN: FILE:LINE; TRACE: FUNC:LINE
    func: str | None = None  # 2.30.7 WARN (FUNC)
    elapsed_ms: float | None = None  # TRACE
    ts: datetime | None = None  # 2.26+ wall clock, local time as printed

    @property
    def level(self) -> str:
        return _LEVELS.get(self.kind, "info")


def parse_stamp(text: str | None) -> datetime | None:
    """The wall-clock stamp NCCL 2.26+ prints (``prefix_time.parse_ts``), or None."""
    return parse_ts(text) if text else None


def split_prefix(message: str) -> NcclPrefix | None:
    """Find the NCCL prefix anywhere in ``message`` (a launcher prefix may remain in front)."""
    m = _LINE.search(message)
    if m is None and (" INFO " in message or " WARN " in message):
        m = _OLD.search(message)
    if m is None:
        b = _BANNER.match(message.strip())
        if b is None:
            return None
        return NcclPrefix("BANNER", b["body"].strip(), ts=parse_stamp(b["ts"]))
    src = f"{m['src']}:{m['srcline']}" if m["src"] else None
    elapsed = float(m["elapsed"]) if m.groupdict().get("elapsed") else None
    return NcclPrefix(
        kind=m["lvl"],
        body=(m["body"] or "").rstrip(),
        host=m["host"],
        pid=int(m["pid"]) if m["pid"] else None,
        tid=int(m["tid"]) if m["tid"] else None,
        src=src,
        func=m.groupdict().get("func"),
        elapsed_ms=elapsed,
        ts=parse_stamp(m.groupdict().get("ts")),
    )
