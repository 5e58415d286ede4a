"""The CUDA sample ``p2pBandwidthLatencyTest`` (family ``p2ptest``): GPU peer-to-peer that works on paper only.

People run this test when collectives between the GPUs of one node hang or crawl, and paste its matrices. Its
``P2P=Enabled Latency (P2P Writes) Matrix (us)`` has one row per GPU: the diagonal is a GPU writing its own
memory (a few µs), the other cells a write to a peer. Where peer writes take a hundred times longer than local
ones and over a millisecond, peer-to-peer is broken (ACS or IOMMU redirection, a PCIe switch that does not
forward peer traffic), whatever the topology promises.

- ``p2ptest.slow_p2p`` (level error): ``value`` = the median peer latency in µs, ``detail`` = peer against local
  (``49206.6 us between GPUs, 2.1 us on one GPU``), ``nranks`` = the GPUs in the matrix.
- ``p2ptest.stopped`` (level warning): the test's output ends inside a measurement: a matrix title
  (``Unidirectional P2P=Disabled Bandwidth Matrix (GB/s)``) with no row after it, or a matrix with fewer rows than
  its header has GPUs, and nothing after it in the file. The test prints a row as soon as it is measured, so it
  stopped (hung) moving data between GPUs: ``detail`` names the matrix and how far it got. A paste cut there on
  purpose reads the same, hence a warning.
"""

from __future__ import annotations

from collections.abc import Iterator

from nccllens import lazy_regex
from nccllens.parse.base import FileContext, Line, event_for

FAMILY = "p2ptest"
_PEER_LATENCY = r"P2P=Enabled Latency (?:\(P2P Writes\) )?Matrix \(us\)"  # the matrix ``_slow`` reads
PREFILTER = (_PEER_LATENCY
             + r"|^\s*(?:Unidirectional|Bidirectional) P2P=(?:Enabled|Disabled) Bandwidth Matrix \(GB/s\)"
             r"|^\s*P2P=(?:Enabled|Disabled) Latency (?:\((?:P2P|CE) (?:Writes|Reads)\) )?Matrix \(us\)")

_HEAD = lazy_regex.compile(_PEER_LATENCY)
_TITLE = lazy_regex.compile(PREFILTER)
_COLUMNS = lazy_regex.compile(r"^\s*(?:GPU|D\\D)(?:\s+\d+)+\s*$")
_ROW = lazy_regex.compile(r"^\s*(\d{1,3})((?:\s+\d+(?:\.\d+)?)+)\s*$")
SLOWER = 100  # peer writes this many times slower than local ones
SLOW_US = 1000.0  # and slower than this


def _matrix(line: Line, ctx: FileContext) -> tuple[list[list[float]], int | None, bool]:
    """The matrix under a title: its rows, the GPUs its header names (None: no header line), and whether the
    file ends inside or right after it (no other line but blank ones follows its rows)."""
    rows: list[list[float]] = []
    columns = None
    blank = False  # blank lines at a file's end (a paste's trailing newline, wrapped or quoted) end nothing
    for nxt in ctx.lines_after(line, 40):
        text = nxt.message
        if not text.strip():
            blank = True
            continue
        if blank:
            return rows, columns, False
        if not rows and columns is None and _COLUMNS.match(text):
            columns = len(text.split()) - 1
            continue
        m = _ROW.match(text)
        if not m or int(m[1]) != len(rows):
            return rows, columns, False
        rows.append([float(v) for v in m[2].split()])
    return rows, columns, True


def _stopped(title: str, rows: int, columns: int | None, ends: bool) -> str | None:
    """How far a matrix got when the file ends inside it (None: it is whole, lines follow it, or rows without a
    header say nothing of how many to expect)."""
    if not ends or (rows if columns is None else rows >= columns):
        return None
    shown = f"{rows} of {columns} rows" if columns else "no row"
    return f"{title.strip()[:120]}: {shown}, then the output ends"


def _median(values: list[float]) -> float:
    """The median (``statistics`` is not imported at start-up: every run loads the parsers)."""
    v = sorted(values)
    mid = len(v) // 2
    return v[mid] if len(v) % 2 else (v[mid - 1] + v[mid]) / 2


def _slow(rows: list[list[float]]) -> tuple[float, float] | None:
    n = len(rows)
    if n < 2 or any(len(r) != n for r in rows):
        return None
    local = _median([rows[i][i] for i in range(n)])
    peer = _median([rows[i][j] for i in range(n) for j in range(n) if i != j])
    if peer >= SLOW_US and peer >= SLOWER * max(local, 0.01):
        return peer, local
    return None


def parse(lines: list[Line], ctx: FileContext) -> Iterator[dict]:
    for line in lines:
        if not _TITLE.search(line.message):
            continue
        try:
            rows, columns, ends = _matrix(line, ctx)
            stopped = _stopped(line.message, len(rows), columns, ends)
            found = None if stopped is not None or not _HEAD.search(line.message) else _slow(rows)
        except (ValueError, OverflowError):
            continue
        if stopped is not None:
            event = event_for(line, "p2ptest.stopped", level="warning", message=line.message.strip()[:300],
                              detail=stopped)
        elif found is not None:
            peer, local = found
            event = event_for(line, "p2ptest.slow_p2p", level="error", message=line.message.strip()[:300],
                              value=f"{peer:.0f}", detail=f"{peer:.1f} us between GPUs, {local:.1f} us on one GPU",
                              nranks=len(rows))
        else:
            continue
        event["family"] = FAMILY
        yield event
