"""The terminal report: the verdict sentence, causes with the symptoms they explain, evidence
as ``file:line``, the rank grid, the first failures, and what was read. Rich lays it out in a terminal (colour,
wrapping); piped output, neither coloured nor wrapped, gets the same lines from ``plain_console`` without
importing rich."""

from __future__ import annotations

import io
import os
import shutil
import sys

from nccllens import lazy_regex
from nccllens.report.labels import category_label, colon, label, paren, skip_reason
from nccllens.report.life import life_lines
from nccllens.report.model import Finding, Report
from nccllens.report.next_steps import next_steps, skip_reasons, summary_line
from nccllens.report.plain_console import NeedsRich, PlainConsole
from nccllens.report.text_grid import grid_lines, timeline_lines
from nccllens.report.view import (
    clock,
    evidence_location,
    finding_tree,
    inventory,
    inventory_line,
    shown_role,
    verdict_sentence,
    where,
)

SEVERITY_STYLE = {"critical": "bold white on red", "error": "bold red", "warning": "yellow", "info": "dim"}
EVIDENCE_LINES = {"cause": 3, "symptom": 1, "context": 1}
INVENTORY_LIMIT = 12
NUMBERED = lazy_regex.compile(r"^(\s*(?:\d+[.)]|[-*])\s+)")


def want_colour(color: bool | None, env: dict[str, str] | None = None, isatty: bool | None = None) -> bool:
    """``color`` if given; else NO_COLOR (any value) says no, FORCE_COLOR says yes, else stdout's tty."""
    if color is not None:
        return color
    env = os.environ if env is None else env
    if env.get("NO_COLOR"):
        return False
    if env.get("FORCE_COLOR"):
        return True
    return sys.stdout.isatty() if isatty is None else isatty


def _console(color: bool, width: int, wrap: bool = True):
    """Rich's console (colour, or wrapping to a terminal's width), its ``Text`` as ``console.Text``."""
    from rich.console import Console
    from rich.text import Text

    truecolor = os.environ.get("COLORTERM", "") in ("truecolor", "24bit")
    console = Console(file=io.StringIO(), width=width, force_terminal=color, no_color=not color,
                      color_system=("truecolor" if truecolor else "256") if color else None,
                      highlight=False, emoji=False, markup=False, soft_wrap=False, record=True)
    console.wrap = wrap  # type: ignore[attr-defined]  # False: piped, a line stays one line
    console.Text = Text  # type: ignore[attr-defined]
    return console


def _heading(console, text: str) -> None:
    console.print()
    console.print(console.Text(text, style="bold underline"))


def _out(console, text, indent: int) -> None:
    """Print ``text`` wrapped under its own indentation (a hanging indent); unwrapped when piped, so
    that a command copied from it is still one line."""
    if not getattr(console, "wrap", True):
        console.print(console.Text(" " * indent) + text, soft_wrap=True)
        return
    from rich.padding import Padding

    console.print(Padding(text, (0, 0, 0, indent), expand=False), overflow="fold")


def _hang(console, prefix, body, indent: int) -> None:
    """``prefix`` then ``body``, wrapped lines of ``body`` under its own start (a hanging indent)."""
    if not getattr(console, "wrap", True):
        console.print(console.Text(" " * indent) + prefix + body, soft_wrap=True)
        return
    from rich.table import Table

    grid = Table.grid()
    if indent:
        grid.add_column(width=indent)
    grid.add_column(no_wrap=True)
    grid.add_column(overflow="fold")
    grid.add_row(*([console.Text("")] if indent else []), prefix, body)
    console.print(grid)


def _numbered(console, line: str, indent: int) -> None:
    m = NUMBERED.match(line)
    if m:
        _hang(console, console.Text(m.group(1)), console.Text(line[m.end(1):]), indent)
    else:
        _out(console, console.Text(line), indent)


def _finding(console, f: Finding, lang: str, indent: int, nested: bool = False) -> None:
    head = console.Text()
    head.append(f" {label(f.severity, lang).upper()} ", style=SEVERITY_STYLE.get(f.severity, ""))
    head.append(f" {label(shown_role(f, nested), lang)} · {category_label(f.category, lang)} · {f.rule}  ", style="dim")
    head.append(f.text("title", lang), style="bold")
    place = where(f, lang)
    if place:
        head.append(f"  [{place}]", style="magenta")
    if f.first_seen:
        head.append(f"  {clock(f.first_seen)}", style="cyan")
    _hang(console, console.Text(f"{f.id} ", style="bold"), head, indent)
    pad = indent + 4
    if f.role == "cause":
        summary = f.text("summary", lang)
        if summary:
            _out(console, console.Text(summary), pad)
        remediation = f.text("remediation", lang).strip()
        if remediation:
            _out(console, console.Text(label("remediation", lang) + colon(lang).rstrip(), style="bold green"), pad)
            for line in remediation.splitlines():
                _numbered(console, line, pad + 2)
    shown = EVIDENCE_LINES.get(f.role, 1)
    for e in f.evidence[:shown]:
        line = console.Text(evidence_location(e.file, e.line), style="blue")
        line.append("  " + e.text.rstrip(), style="default")
        _out(console, line, pad)
    more = max(f.count, len(f.evidence)) - min(shown, len(f.evidence))
    if more > 0:
        _out(console, console.Text(f"… +{more} {label('lines', lang)}", style="dim"), pad)


def _findings(console, report: Report, lang: str) -> None:
    _heading(console, label("findings", lang))
    groups = finding_tree(report)
    if not groups:
        console.print(console.Text(label("no_findings", lang)))
    for group in groups:
        _finding(console, group.finding, lang, 0)
        if group.explains:
            console.print(console.Text(f"    └ {label('symptoms', lang)}{paren(str(len(group.explains)), lang, ' ')}",
                               style="dim"))
            for child in group.explains:
                _finding(console, child, lang, 6, nested=True)


def _inputs(console, report: Report, lang: str, verbose: bool) -> None:
    inv = inventory(report)
    _heading(console, label("inputs", lang))
    console.print(console.Text(inventory_line(inv, lang)))
    if not verbose:  # counts only (and what needs a look: the configuration used, files with notes); -v lists all
        for i in inv.read:
            if i.kind == "configuration" or i.notes:
                extra = ", ".join(filter(None, [i.kind, *i.notes]))
                _out(console, console.Text(f"{label('read', lang)}    {i.path}  ({extra})"), 2)
        for reason, n in skip_reasons(report):
            said = f"跳过 {n} 个：{skip_reason(reason, lang)}" if lang == "zh" else f"{n} skipped: {reason}"
            _out(console, console.Text(said, style="yellow"), 2)
        return
    for i in inv.read[:INVENTORY_LIMIT]:
        detail = f"{i.lines} {label('lines', lang)}, {i.events} {label('events', lang)}"
        extra = ", ".join(filter(None, [i.kind, i.host, *i.notes]))
        _out(console, console.Text(f"{label('read', lang)}    {i.path}  ({detail}{', ' + extra if extra else ''})"), 2)
    if len(inv.read) > INVENTORY_LIMIT:
        console.print(console.Text(f"  … +{len(inv.read) - INVENTORY_LIMIT} {label('files', lang)}", style="dim"))
    for i in inv.skipped:
        _out(console, console.Text(f"{label('skipped', lang)} {i.path}{colon(lang)}{skip_reason(i.skipped or '', lang)}",
                           style="yellow"), 2)


def _next_steps(console, report: Report, lang: str) -> None:
    steps = next_steps(report, lang)
    if steps:
        _heading(console, label("remediation", lang))
        for n, step in enumerate(steps, 1):
            _numbered(console, f"{n}. {step}", 2)


def build(report: Report, color: bool, width: int, lang: str, verbose: bool = False, quiet: bool = False,
          wrap: bool = True, console=None):
    """The report printed on ``console`` (rich's, made here unless given: a ``PlainConsole`` prints the same
    lines when nothing is coloured or wrapped); returns it."""
    console = _console(color, width, wrap) if console is None else console
    verdict = console.Text(f"{label('verdict', lang)}{colon(lang)}", style="bold")
    style = "bold green" if report.verdict.category == "none" else "bold red"
    verdict.append(verdict_sentence(report, lang), style=style)
    verdict.append(paren(f"{label('confidence', lang)} {report.verdict.confidence:.2f}", lang), style="dim")
    _out(console, verdict, 0)
    if report.job.year_guessed and not quiet:
        _out(console, console.Text(label("year_note", lang), style="yellow"), 0)
    if not quiet:
        _next_steps(console, report, lang)
        _findings(console, report, lang)
        _heading(console, label("ranks", lang))
        for line in grid_lines(report, width, lang, console.Text):
            console.print(line, no_wrap=True, overflow="ellipsis")
        signs = life_lines(report, lang)
        if signs:
            _heading(console, label("last_signs", lang))
            for line in signs:
                _out(console, console.Text(line), 0)
        _heading(console, label("timeline", lang))
        for line in timeline_lines(report, width, lang, console.Text):
            console.print(line, no_wrap=True, overflow="ellipsis")
        _inputs(console, report, lang, verbose)
    console.print()
    _out(console, console.Text(summary_line(report, lang), style="bold"), 0)
    return console


def render(report: Report, color: bool | None = None, width: int | None = None, lang: str | None = None,
           verbose: bool = False, quiet: bool = False, wrap: bool | None = None, **_: object) -> str:
    """The report for a terminal. ``color``: None decides from NO_COLOR / FORCE_COLOR / isatty.
    ``wrap``: None wraps when a ``width`` is given or stdout is a terminal (piped output is not
    wrapped: a pasted command must stay whole). ``verbose`` lists every input file; ``quiet`` prints
    the verdict and the summary line only."""
    if wrap is None:
        wrap = width is not None or sys.stdout.isatty()
    width = width or shutil.get_terminal_size((100, 24)).columns
    color, width, lang = want_colour(color), max(40, width), lang or report.lang
    text = None
    if not color and not wrap:  # rich would only copy the lines: lay them out without importing it
        try:
            text = build(report, color, width, lang, verbose, quiet, wrap, console=PlainConsole(width)).getvalue()
        except NeedsRich:
            text = None
    if text is None:
        text = build(report, color, width, lang, verbose, quiet, wrap).file.getvalue()  # type: ignore[attr-defined]
    return "\n".join(line.rstrip() for line in text.split("\n"))
