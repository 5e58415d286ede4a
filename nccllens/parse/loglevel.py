"""Error lines of any logger (family ``log``): a failure said by a program no other family knows.

Only lines no other family claimed reach it (it is offered lines last). Shapes, by their header:

- Python ``logging`` with its default format: ``ERROR:root:message``, ``CRITICAL:trainer:message``;
- a timestamped header, then the level: ``2024-05-01 10:00:00,123 - trainer - ERROR - message``,
  ``[2023-07-14 18:21:31,182][__main__][ERROR] - message``, loguru ``2024-05-01 10:00:00.123 | ERROR | mod:fn:12 - message``;
- a bracketed level first: ``[ERROR] message``;
- glog / absl error and fatal lines of a C++ component: ``E1125 02:50:00.000000  4242 file.cc:12] message``
  (not c10d's bracketed ``[E212 02:14:01.179080356 ProcessGroupNCCL.cpp:607]``: the torch family and the rules
  read those, and the wrapped pieces of its long records are no failures of their own);
- vLLM's logger, the level first: ``ERROR 08-14 12:08:39 [core.py:654] message`` (before 0.8 ``... worker_base.py:574] message``);
- TensorFlow's C++ logging: ``2019-08-26 18:41:15.943905: E tensorflow/stream_executor/cuda/cuda_driver.cc:828] message``;
- UCX (the transport under Open MPI, UCC and HPC stacks): ``[1716920651.160157] [gpu1:2592420:0]            sock.c:323  UCX
  ERROR   connect(fd=85, dest_addr=172.17.0.1:39289) failed: Connection refused``.

→ ``log.error`` (level ``error``; ``critical`` for CRITICAL / FATAL / glog ``F``), ``message`` = the text
after the header; ``log.fragment`` (same levels) for a line of a traceback the logger printed line by line (an
indented frame, code or caret line, or the traceback's head): an error was printed, but the line alone does not
say which. An error nothing else explains becomes a low-confidence cause (``AN-UNCLAIMED``), so a
log whose only failure is such a line is never called healthy.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from nccllens import lazy_regex
from nccllens.parse.base import FileContext, Line, event_for

FAMILY = "log"

_LEVEL = r"(?P<lvl>ERROR|CRITICAL|FATAL)"
_STAMP = r"\[?\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d(?:[.,]\d+)?\]?"
_SHAPES = (
    r"^" + _LEVEL + r":[\w.<>-]*:(?P<rest>.*)$",
    r"^" + _STAMP + r"(?:\s*[-|]\s*[\w.<>-]+)?(?:\s*\[[^\]\n]+\])*\s*[-|]?\s*\[?" + _LEVEL + r"\]?\s*[-|:]\s*(?P<rest>.*)$",
    r"^\[" + _LEVEL + r"\]\s*(?P<rest>.*)$",
    r"^(?P<glog>[EF])\d{4} \d\d:\d\d:\d\d\.\d{6}\s+\d+ [^\s\]]+:\d+\] (?P<rest>.*)$",
    # vLLM before 0.8 wrote the source without its opening bracket: ERROR 02-12 02:14:01 worker_base.py:574] message
    r"^" + _LEVEL + r" \d\d-\d\d \d\d:\d\d:\d\d(?:\.\d+)? \[?[\w.+-]+:\d+\] (?P<rest>.*)$",
    r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d+: (?P<glog>[EF]) [^\s\]]+:\d+\] (?P<rest>.*)$",
    # UCX's logger (ucs/debug/log.c): [seconds.micro] [host:pid:thread] file.c:line  UCX  LEVEL message
    r"^\[\d+\.\d+\] \[[^\]\n]+\]\s+[\w.-]+:\d+\s+UCX\s+" + _LEVEL + r"\s+(?P<rest>.*)$",
)
PREFILTER = "|".join(re.sub(r"\(\?P<\w+>", "(?:", shape) for shape in _SHAPES)
_COMPILED = [lazy_regex.compile(shape) for shape in _SHAPES]
# a line of a multi-line record the logger printed one line at a time (vLLM's engine core logs a traceback so:
# ``ERROR 09-05 01:24:34 [core.py:1403]   File "...", line 99, in result``): the traceback's head, its frames,
# code and carets (indented) say nothing of the failure alone; its exception line, not indented, does
_FRAGMENT = lazy_regex.compile(r"\s|Traceback \(most recent call last\):\s*$")
# an error record's text as rules see it: long enough for the facts at the end of a long line (Ray's OOM line
# names the node, its usage and the threshold past character 300), bounded all the same
MESSAGE_CHARS = 2000


def parse(lines: list[Line], ctx: FileContext) -> Iterator[dict]:
    for line in lines:
        text = line.message.strip()
        for shape in _COMPILED:
            m = shape.match(text)
            if m is None:
                continue
            groups = m.groupdict()
            critical = groups.get("glog") == "F" or groups.get("lvl") in ("CRITICAL", "FATAL")
            raw_rest = groups.get("rest") or ""
            rest = raw_rest.strip()
            if rest:
                kind = "log.fragment" if _FRAGMENT.match(raw_rest) else "log.error"
                yield event_for(line, kind, family=FAMILY, level="critical" if critical else "error",
                                message=rest[:MESSAGE_CHARS])
            break
