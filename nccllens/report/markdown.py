"""Markdown for a GitHub / GitLab / Jira comment: verdict, findings table, evidence in fenced code
blocks (a fence longer than any backtick run inside), symptoms and inventory folded in <details>."""

from __future__ import annotations

import re

from nccllens.report.first_failures import first_failures
from nccllens.report.grid import host_rows, row_counts, state_counts
from nccllens.report.labels import category_label, label, state_label, state_letter
from nccllens.report.model import Finding, Report
from nccllens.report.view import (
    compact_hosts,
    compact_ranks,
    evidence_location,
    finding_tree,
    inventory,
    inventory_line,
    verdict_sentence,
)

_SPECIAL = re.compile(r"([\\`*_\[\]|#~])")
_BACKTICKS = re.compile(r"`+")
INVENTORY_ROWS = 200
EVIDENCE_LINES = {"cause": 5, "symptom": 2, "context": 1}


def inline(text: str) -> str:
    """Text safe in a Markdown paragraph or table cell: one line, markup characters escaped."""
    text = " ".join(text.split())
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return _SPECIAL.sub(r"\\\1", text)


def fence(lines: list[str], info: str = "text") -> str:
    """A fenced code block whose fence is longer than any run of backticks in ``lines``."""
    body = "\n".join(lines)
    longest = max((len(m.group(0)) for m in _BACKTICKS.finditer(body)), default=0)
    marks = "`" * max(3, longest + 1)
    return f"{marks}{info}\n{body}\n{marks}"


def _evidence(f: Finding) -> str:
    shown = f.evidence[: EVIDENCE_LINES.get(f.role, 1)]
    return fence([f"{evidence_location(e.file, e.line)}: {e.text.rstrip()}" for e in shown]) if shown else ""


def _where(f: Finding) -> str:
    parts = []
    if f.hosts:
        parts.append(compact_hosts(f.hosts))
    if f.ranks:
        parts.append(f"rank {compact_ranks(f.ranks)}")
    return inline(" / ".join(parts))


def _table(report: Report, lang: str) -> list[str]:
    heads = ["#", label("severity", lang), label("role", lang), label("category", lang), label("rule", lang),
             label("finding", lang), label("where", lang), label("since", lang)]
    rows = ["| " + " | ".join(heads) + " |", "|" + "---|" * len(heads)]
    for f in report.findings:
        cells = [f.id, label(f.severity, lang), label(f.role, lang), f"`{f.category}`", f"`{f.rule}`",
                 inline(f.text("title", lang)), _where(f), inline(f.first_seen or "")]
        rows.append("| " + " | ".join(cells) + " |")
    return rows


def _finding(f: Finding, lang: str, level: str) -> list[str]:
    out = [f"{level} {f.id} · {inline(f.text('title', lang))}", ""]
    meta = [f"**{label(f.severity, lang)}**", label(f.role, lang), inline(category_label(f.category, lang)),
            f"`{f.rule}`", f"{label('confidence', lang)} {f.confidence:.2f}"]
    where = _where(f)
    if where:
        meta.append(where)
    out += [" · ".join(meta), ""]
    summary = f.text("summary", lang)
    if summary and f.role == "cause":
        out += [inline(summary), ""]
    remediation = f.text("remediation", lang).strip()
    if remediation and f.role == "cause":
        out += [f"**{label('remediation', lang)}**", ""]
        out += [inline(line) if line.strip() else "" for line in remediation.splitlines()]
        out.append("")
    evidence = _evidence(f)
    if evidence:
        out += [evidence, ""]
    return out


def _ranks(report: Report, lang: str) -> list[str]:
    rows = host_rows(report)
    if not rows:
        return [label("no_ranks", lang), ""]
    legend = ", ".join(f"{state_letter(s)} = {state_label(s, lang)} ({n})" for s, n in state_counts(report))
    width = max(len(r.label) for r in rows)
    lines = []
    for r in rows:
        letters = "".join(state_letter(c.state) for c in r.cells)
        counts = ", ".join(f"{n} {state_label(s, lang)}" for s, n in row_counts(r))
        many = f" ({r.collapsed} {label('host_rows', lang)})" if r.collapsed > 1 else ""
        lines.append(f"{r.label:<{width}}  {letters}  {counts}{many}")
    return [f"{label('legend', lang)}: {inline(legend)}", "", fence(lines), ""]


def render(report: Report, lang: str | None = None, **_: object) -> str:
    lang = lang or report.lang
    out = [f"## {inline(label('title', lang))}: {inline(category_label(report.verdict.category, lang))}", ""]
    out += [f"**{label('verdict', lang)}:** {inline(verdict_sentence(report, lang))} "
            f"({label('confidence', lang)} {report.verdict.confidence:.2f})", ""]
    if report.findings:
        out += [f"### {label('findings', lang)}", "", *_table(report, lang), ""]
    for group in finding_tree(report):
        out += _finding(group.finding, lang, "####")
        if group.explains:
            out += ["<details>", f"<summary>{inline(label('symptoms', lang))} ({len(group.explains)})</summary>", ""]
            for child in group.explains:
                out += _finding(child, lang, "#####")
            out += ["</details>", ""]
    out += [f"### {label('ranks', lang)}", "", *_ranks(report, lang)]
    failures = first_failures(report, limit=10)
    if failures:
        lines = [f"{f.ts or '-'}  {f.host}  {f.text.strip()}" for f in failures]
        out += [f"### {label('timeline', lang)}", "", fence(lines), ""]
    inv = inventory(report)
    out += ["<details>", f"<summary>{inline(label('inputs', lang))}: {inline(inventory_line(inv, lang))}</summary>", ""]
    out += [f"| {label('file', lang)} | {label('lines', lang)} | {label('events', lang)} | {label('why', lang)} |",
            "|---|---|---|---|"]
    for i in report.inputs[:INVENTORY_ROWS]:
        out.append(f"| {inline(i.path)} | {i.lines} | {i.events} | {inline(i.skipped or '')} |")
    if len(report.inputs) > INVENTORY_ROWS:
        out.append(f"| … +{len(report.inputs) - INVENTORY_ROWS} {label('files', lang)} | | | |")
    out += ["", "</details>", ""]
    return "\n".join(out)
