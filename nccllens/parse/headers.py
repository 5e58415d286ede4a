"""Log-record headers that PyTorch and torchrun put before a message, every generation.

``split_header(message, year)`` returns ``(Header | None, rest)``. Family parsers call it on a
surviving line's message; it never raises.

Generations (shared/reference/pytorch_c10d.md §1):
- C++ c10 logging, ≤2.3:  ``[E ProcessGroupNCCL.cpp:737] ``
- C++ c10 logging, ≥2.4:  ``[E1122 02:47:18.374266894 ProcessGroupGloo.cpp:2901] `` (month not padded)
- C++ glog builds:        ``E0927 12:07:22.643702 1012209 ProcessGroupNCCL.cpp:1356] ``
- Python torch._logging, ≈2.3+: ``W1122 02:34:31.090000 10806 torch/distributed/run.py:874] ``
- Python logging ≈2.1–2.2: ``[2024-07-25 06:36:18,293] torch.distributed.elastic.multiprocessing.api: [WARNING] ``
- Python logging ≤2.0:     ``ERROR:torch.distributed.elastic.multiprocessing.api:``
- vLLM's logger (every line of a record, a traceback's too): ``ERROR 08-14 12:08:39 [core.py:654] ``
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from nccllens import lazy_regex

_LEVELS = {
    "V": "debug", "D": "debug", "I": "info", "W": "warning", "E": "error", "F": "critical", "C": "critical",
    "DEBUG": "debug", "INFO": "info", "WARNING": "warning", "WARN": "warning", "ERROR": "error",
    "CRITICAL": "critical", "FATAL": "critical",
}

_CPP = lazy_regex.compile(
    r"\[(?P<lvl>[IWEF])(?:(?P<md>\d{3,4}) (?P<hms>\d\d:\d\d:\d\d)\.(?P<frac>\d{1,9}))? "
    r"(?P<src>[\w.+-]+):(?P<lineno>\d+)\] ?"
)
_GLOG = lazy_regex.compile(
    r"(?P<lvl>[VIWEFC])(?P<md>\d{4}) (?P<hms>\d\d:\d\d:\d\d)\.(?P<frac>\d{1,9}) +(?P<pid>\d+) "
    r"(?P<src>[\w/.+-]+):(?P<lineno>\d+)\] ?"
)
_PY21 = lazy_regex.compile(
    r"\[(?P<date>\d{4}-\d\d-\d\d) (?P<hms>\d\d:\d\d:\d\d),(?P<frac>\d{3})\] (?P<src>[\w.]+): "
    r"\[(?P<lvl>DEBUG|INFO|WARNING|ERROR|CRITICAL)\] ?"
)
_VLLM = lazy_regex.compile(
    r"(?P<lvl>DEBUG|INFO|WARNING|ERROR|CRITICAL) (?P<md>\d\d-\d\d) (?P<hms>\d\d:\d\d:\d\d)(?:\.(?P<frac>\d{1,6}))? "
    r"\[(?P<src>[\w.+-]+):(?P<lineno>\d+)\] ?"
)
_PY20 = lazy_regex.compile(r"(?P<lvl>DEBUG|INFO|WARNING|ERROR|CRITICAL):(?P<src>(?:torch|__main__)[\w.]*):")


@dataclass(slots=True)
class Header:
    """The logging header of a line (glog, torch logging, Python logging) and what follows it."""

    level: str
    source: str  # file (C++/glog/torch logging) or logger name (Python logging)
    ts: datetime | None = None
    ts_kind: str | None = None
    pid: int | None = None  # pid or thread id as printed (glog / torch logging)
    generation: str = ""  # cpp-nots, cpp-ts, glog, pylog-2.3, pylog-2.1, pylog-2.0


def _month_day(md: str, hms: str, frac: str, year: int | None) -> datetime | None:
    try:
        month, day = int(md[:-2]), int(md[-2:])
        h, m, s = (int(x) for x in hms.split(":"))
        micro = int((frac + "000000")[:6])
        return datetime(year or 1970, month, day, h, m, s, micro)
    except (ValueError, IndexError):
        return None


def split_header(message: str, year: int | None = None) -> tuple[Header | None, str]:
    """Strip one PyTorch/torchrun log header from the start of ``message``."""
    m = _CPP.match(message)
    if m:
        ts = None
        if m["md"]:
            ts = _month_day(m["md"], m["hms"], m["frac"], year)
        gen = "cpp-ts" if m["md"] else "cpp-nots"
        return Header(_LEVELS[m["lvl"]], m["src"], ts, "no_year" if ts else None, None, gen), message[m.end():]
    m = _GLOG.match(message)
    if m:
        ts = _month_day(m["md"], m["hms"], m["frac"], year)
        gen = "pylog-2.3" if m["src"].endswith(".py") else "glog"
        hdr = Header(_LEVELS[m["lvl"]], m["src"], ts, "no_year" if ts else None, int(m["pid"]), gen)
        return hdr, message[m.end():]
    m = _PY21.match(message)
    if m:
        try:
            ts = datetime.strptime(f"{m['date']} {m['hms']}.{m['frac']}", "%Y-%m-%d %H:%M:%S.%f")
        except ValueError:
            ts = None
        return Header(_LEVELS[m["lvl"]], m["src"], ts, "absolute" if ts else None, None, "pylog-2.1"), message[m.end():]
    m = _VLLM.match(message)
    if m:
        ts = _month_day(m["md"].replace("-", ""), m["hms"], m["frac"] or "0", year)
        return Header(_LEVELS[m["lvl"]], m["src"], ts, "no_year" if ts else None, None, "vllm"), message[m.end():]
    m = _PY20.match(message)
    if m:
        return Header(_LEVELS[m["lvl"]], m["src"], None, None, None, "pylog-2.0"), message[m.end():]
    return None, message
