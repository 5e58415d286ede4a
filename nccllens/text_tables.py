"""Plain-text tables (``events``, ``ranks``, ``rules list`` when piped): one row per line, never
hard-wrapped. Piped output (or ``-v``) is never shortened; in a terminal, long cells are cut with ``…`` and
the table ends with a line saying how many were cut and how to see them whole."""

from __future__ import annotations

import sys
from collections.abc import Sequence

ELLIPSIS = "…"


def piped() -> bool:
    """Standard output is not a terminal (a pipe, a file): tables are then written whole."""
    try:
        return not sys.stdout.isatty()
    except (AttributeError, ValueError):
        return True


def _cut(cell: str, limit: int, from_left: bool) -> str:
    if len(cell) <= limit:
        return cell
    return ELLIPSIS + cell[-(limit - 1):] if from_left else cell[:limit - 1] + ELLIPSIS


def width(text: str) -> int:
    """Columns ``text`` takes in a terminal: East Asian wide and full-width characters take two."""
    import unicodedata

    return sum(2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1 for ch in text)


def _pad(text: str, to: int, right: bool) -> str:
    fill = " " * max(0, to - width(text))
    return fill + text if right else text + fill


def layout(rows: Sequence[Sequence[str]], *, limits: dict[int, int] | None = None, full: bool = True,
           from_left: Sequence[int] = (), right: Sequence[int] = ()) -> tuple[list[str], int]:
    """``rows`` (the first is the heading) in padded columns, the last column unpadded; and how many cells
    were shortened. ``full``: none is. Otherwise a cell of column ``i`` longer than ``limits[i]`` is cut
    with ``…`` (at its start for the columns in ``from_left``, paths, whose end says most)."""
    limits = {} if full else (limits or {})
    cut = 0
    shown: list[list[str]] = []
    for row in rows:
        cells = []
        for i, cell in enumerate(row):
            short = _cut(cell, limits[i], i in from_left) if i in limits else cell
            cut += short != cell
            cells.append(short)
        shown.append(cells)
    if not shown:
        return [], 0
    count = len(shown[0])
    widths = [max(width(r[i]) for r in shown) for i in range(count)]
    lines = []
    for r in shown:
        padded = [_pad(c, w, i in right) for i, (c, w) in enumerate(zip(r, widths, strict=True))]
        padded[-1] = r[-1] if count - 1 not in right else padded[-1]
        lines.append("  ".join(padded).rstrip())
    return lines, cut


def cut_note(cut: int, lang: str = "en") -> str:
    """The line under a table whose cells were shortened: how many, and how to see them whole."""
    if lang == "zh":
        return f"（有 {cut} 处内容过长，已用 … 截断；加 -v 或通过管道输出可看到完整内容。）"
    return f"({cut} cell(s) shortened with …; use -v, or pipe the output, to see them whole)"


EVENT_HEADING = ("time", "file:line", "kind", "rank", "host", "message")
EVENT_LIMITS = {1: 48, 2: 28, 4: 16, 5: 160}  # in a terminal: path, kind, host, message


def _when(ts, ts_rel) -> str:
    if ts is not None:
        return ts.isoformat(sep=" ", timespec="milliseconds")
    return f"boot+{ts_rel:.3f}s" if ts_rel is not None else ""


def events_table(events, full: bool) -> str:
    """The event table as text: a time column (to the millisecond; seconds since boot when the log gave
    no wall clock), paths whole unless shortened in a terminal, which the last lines then say."""
    from nccllens.terminal import shown

    rows = [EVENT_HEADING]
    for ts, ts_rel, file, line, kind, rank, host, message in events.select(
            "ts", "ts_rel", "file", "line", "kind", "rank", "host", "message").iter_rows():
        rows.append((_when(ts, ts_rel), shown(f"{file}:{line}"), str(kind), "" if rank is None else str(rank),
                     shown(host or ""), shown(message or "")))
    lines, cut = layout(rows, limits=EVENT_LIMITS, full=full, from_left=(1,), right=(3,))
    lines.append(f"{events.height} events")
    if cut:
        lines.append(cut_note(cut))
    return "\n".join(lines) + "\n"
