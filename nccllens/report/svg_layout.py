"""Geometry of the two HTML pictures, as plain data the template draws (so all text stays escaped):
the rank grid (one rect per rank, grouped by host) and the first-failures swimlane (hosts x time)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from nccllens.rank_ranges import compact_ranks
from nccllens.report.first_failures import alike, error_marks, first_failures
from nccllens.report.grid import by_host, cells, host_range
from nccllens.report.labels import alike_note, label, paren, state_label
from nccllens.report.model import Report
from nccllens.report.view import clock as clock_text

WIDTH = 1100
LABEL_W = 170
LANE_H = 22
MAX_LANES = 40


@dataclass
class Rect:
    """One rank's square in the grid picture."""

    x: int
    y: int
    rank: int
    state: str
    title: str


@dataclass
class Block:
    """One host's block of squares in the grid picture."""

    host: str
    x: int
    y: int
    w: int
    h: int
    rects: list[Rect] = field(default_factory=list)


@dataclass
class GridPicture:
    """The rank grid as a picture: size, cell size and host blocks."""

    width: int
    height: int
    cell: int
    blocks: list[Block]
    row_labels: list[tuple[int, str]]  # (y of the text baseline, host or host range)


def _title(c, lang: str) -> str:
    parts = [f"{label('rank', lang)} {c.rank}", f"{label('host', lang)} {c.host or label('no_host', lang)}"]
    if c.status.last_seq is not None:  # an unknown SeqNum is left out, not "?"
        parts.append(f"{label('last_seq', lang)} {c.status.last_seq}")
    state = state_label(c.status.state, lang)
    if c.state == "culprit":
        state += paren(state_label("culprit", lang), lang, " ")
    parts.append(f"{label('state', lang)} {state}")
    return " · ".join(parts)


def _rows(groups: list, per_row: int) -> list[list]:
    """``per_row`` groups a row; the ranks of no known host start rows of their own (their label is no host's)."""
    hosted = [g for g in groups if any(c.host is not None for c in g[1])]
    hostless = [g for g in groups if all(c.host is None for c in g[1])]
    return [part[i : i + per_row] for part in (hosted, hostless) for i in range(0, len(part), per_row)]


def _row_label(row: list, lang: str) -> str:
    if all(c.host is None for _, g in row for c in g):
        return f"{label('rank', lang)} {compact_ranks([c.rank for _, g in row for c in g])}"
    return host_range([name for name, _ in row])


def grid_picture(report: Report, lang: str) -> GridPicture | None:
    groups = by_host(cells(report))
    if not groups:
        return None
    total = sum(len(g) for _, g in groups)
    cell = 12 if total <= 512 else 8 if total <= 2048 else 6
    step = cell + 1
    widest = max(len(g) for _, g in groups)
    cols = min(widest, 32)
    block_w = cols * step + 6
    plot_w = WIDTH - LABEL_W
    per_row = 1 if len(groups) <= 32 else max(1, plot_w // block_w)
    blocks: list[Block] = []
    labels: list[tuple[int, str]] = []
    y = 1
    for row in _rows(groups, per_row):
        row_h = max(max(math.ceil(len(g) / cols) for _, g in row) * step + 4, 14)
        labels.append((y + 10, _row_label(row, lang)))
        for i, (name, group) in enumerate(row):
            block = Block(name, LABEL_W + i * block_w, y, block_w - 6, row_h - 4)
            for j, c in enumerate(group):
                block.rects.append(Rect(block.x + (j % cols) * step, y + (j // cols) * step, c.rank, c.state,
                                        _title(c, lang)))
            blocks.append(block)
        y += row_h
    width = max(b.x + b.w for b in blocks) + 2
    return GridPicture(width, y, cell, blocks, labels)


@dataclass
class Lane:
    """One host's lane in the timeline picture."""

    host: str
    y: int
    first_x: float
    first_title: str
    ticks: list[float]
    more: int = 0  # hosts whose first error reads the same, folded into this lane


@dataclass
class Swimlane:
    """The timeline picture: size and one lane per host."""

    width: int
    height: int
    lanes: list[Lane]
    clock: bool
    start: str
    end: str
    more: int


def swimlane(report: Report, lang: str) -> Swimlane | None:
    failures = first_failures(report)
    if not failures:
        return None
    folded = alike(failures)[:MAX_LANES]  # 40 identical victim timeouts are one lane, as in the table
    shown = [f for f, _ in folded]
    more_of = [n for _, n in folded]
    marks = error_marks(report)
    times = [f.when for f in shown if f.when] + [t for f in shown for t in marks.get(f.host, [])]
    clock = bool(times)
    plot_w = WIDTH - LABEL_W - 20
    if clock:
        t0, t1 = min(times), max(times)
        span = max((t1 - t0).total_seconds(), 1.0)

        def x_of(when) -> float:
            return round(LABEL_W + plot_w * (when - t0).total_seconds() / span, 1)
    lanes = []
    for i, f in enumerate(shown):
        y = 20 + i * LANE_H
        if clock and f.when is not None:
            first_x = x_of(f.when)
        else:
            first_x = round(LABEL_W + plot_w * (i + 0.5) / len(shown), 1)
        ticks = [x_of(t) for t in marks.get(f.host, [])] if clock else []
        host = f.host if f.host != "?" else label("no_host", lang)
        alike_hosts = alike_note(more_of[i], lang) if more_of[i] else ""
        title = " · ".join(str(p) for p in (clock_text(f.ts) or label("no_clock", lang), host + (" " + alike_hosts if alike_hosts else ""),
                                            f.text.strip()[:300]) if p)
        lanes.append(Lane(host, y, first_x, title, ticks, more_of[i]))
    return Swimlane(WIDTH, 30 + len(shown) * LANE_H, lanes, clock,
                    clock_text(min(times).isoformat()) if clock else "", clock_text(max(times).isoformat()) if clock else "",
                    len(failures) - len(shown) - sum(more_of))
