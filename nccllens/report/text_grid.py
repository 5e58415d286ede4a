"""The rank grid and the first-failures timeline for the terminal, as lines of the console's ``Text`` (rich's,
or ``plain_console.PlainText`` where nothing is coloured)."""

from __future__ import annotations

from nccllens.report.first_failures import alike, first_failures
from nccllens.report.grid import HostRow, host_rows, row_counts, state_counts
from nccllens.report.labels import alike_note, colon, label, state_colour, state_label, state_letter
from nccllens.report.model import Report
from nccllens.report.view import clock

LABEL_MAX = 36


def _ink(hex_colour: str) -> str:
    """Black or white letters, whichever reads on this background."""
    r, g, b = (int(hex_colour[i : i + 2], 16) for i in (1, 3, 5))
    return "black" if 0.299 * r + 0.587 * g + 0.114 * b > 140 else "white"


def cell_style(state: str) -> str:
    colour = state_colour(state)
    return f"bold {_ink(colour)} on {colour}"


def legend(report: Report, lang: str, Text) -> object:
    text = Text(f"{label('legend', lang)}{colon(lang)}")
    for i, (state, n) in enumerate(state_counts(report)):
        if i:
            text.append("  ")
        text.append(state_letter(state), style=cell_style(state))
        text.append(f" {state_label(state, lang)} ({n})")
    return text


def _suffix(row: HostRow, lang: str) -> str:
    if row.state is not None:
        text = state_label(row.state, lang)
    else:
        text = ", ".join(f"{n} {state_label(s, lang)}" for s, n in row_counts(row))
    if row.collapsed > 1:
        text = f"({row.collapsed} {label('host_rows', lang)}) {text}"
    return text


def grid_lines(report: Report, width: int, lang: str, Text) -> list:
    """One line per host row (long rows wrap under themselves); collapsed rows say how many hosts."""
    rows = host_rows(report, max_rows=max(8, min(40, width // 3)))
    if not rows:
        return [Text(label("no_ranks", lang))]
    name_width = min(LABEL_MAX, max(len(r.label) for r in rows))
    room = max(8, width - name_width - 2)
    lines = [legend(report, lang, Text)]
    for row in rows:
        name = row.label if len(row.label) <= name_width else row.label[: name_width - 1] + "…"
        suffix = _suffix(row, lang)
        per_line = room if len(row.cells) + len(suffix) + 1 > room else len(row.cells)
        for start in range(0, len(row.cells), per_line):
            line = Text((name if start == 0 else "").ljust(name_width) + "  ")
            for c in row.cells[start : start + per_line]:
                line.append(state_letter(c.state), style=cell_style(c.state))
            lines.append(line)
        if per_line == len(row.cells):
            lines[-1].append(" " + suffix, style="dim")
        else:
            lines.append(Text(" " * (name_width + 2) + suffix, style="dim"))
    return lines


def timeline_lines(report: Report, width: int, lang: str, Text, limit: int = 10) -> list:
    failures = first_failures(report)
    if not failures:
        return [Text(label("no_failures", lang))]
    lines = []
    folded = alike(failures)
    shown = [f for f, _ in folded[:limit]]
    more = [n for _, n in folded[:limit]]
    hosts = [f.host if f.host != "?" else label("no_host", lang) for f in shown]
    host_width = min(LABEL_MAX, max(len(h) for h in hosts))
    ts_width = max(len(clock(f.ts) or "-") for f in shown)
    for f, host, alike_hosts in zip(shown, hosts, more, strict=True):
        line = Text(f"{(clock(f.ts) or '-'):<{ts_width}}  ", style="cyan")
        line.append(f"{host:<{host_width}}  ", style="bold")
        if f.rank is not None:
            line.append(f"{label('rank', lang)} {f.rank} ")
        if alike_hosts:
            line.append(alike_note(alike_hosts, lang) + " ", style="dim")
        line.append(f.text.strip())
        line.truncate(width, overflow="ellipsis")
        lines.append(line)
    if len(folded) > limit:
        rest = sum(1 + n for _, n in folded[limit:])
        lines.append(Text(f"… +{rest} {label('host_rows', lang)}", style="dim"))
    return lines
