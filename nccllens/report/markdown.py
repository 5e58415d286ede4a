"""Markdown for a GitHub / GitLab / Jira comment: verdict, findings table, evidence in fenced code
blocks (a fence longer than any backtick run inside), symptoms and inventory folded in <details>."""

from __future__ import annotations

from nccllens import lazy_regex
from nccllens.report.first_failures import alike, first_failures
from nccllens.report.grid import host_rows, row_counts, state_counts
from nccllens.report.labels import (
    alike_note,
    category_label,
    colon,
    label,
    paren,
    skip_reason,
    state_label,
    state_letter,
)
from nccllens.report.model import Finding, Report
from nccllens.report.next_steps import culprit, next_steps, summary_line
from nccllens.report.view import (
    clock,
    compact_hosts,
    compact_ranks,
    evidence_location,
    finding_tree,
    inventory,
    inventory_line,
    shown_role,
    top_finding,
    verdict_sentence,
)

_SPECIAL = lazy_regex.compile(r"([\\`*_\[\]|#~])")
_BACKTICKS = lazy_regex.compile(r"`+")
INVENTORY_ROWS = 200
EVIDENCE_LINES = {"cause": 5, "symptom": 2, "context": 1}


_CODE_SPAN = lazy_regex.compile(r"(`[^`]+`)")


def _escape(text: str) -> str:
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return _SPECIAL.sub(r"\\\1", text)


def inline(text: str, cell: bool = False) -> str:
    """Text safe in a Markdown paragraph (or a table ``cell``): one line, markup characters escaped,
    except inside `code spans`: a command stays a code span to copy, not escaped backticks (in a table
    cell its ``|`` is escaped, as GFM tables need)."""
    text = " ".join(text.split())
    if text.count("`") % 2:  # unbalanced: no code span to keep
        return _escape(text)
    pieces = _CODE_SPAN.split(text)
    return "".join((p.replace("|", "\\|") if cell else p) if i % 2 else _escape(p) for i, p in enumerate(pieces))


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
        cells = [f.id, label(f.severity, lang), label(shown_role(f, bool(f.explained_by)), lang), f"`{f.category}`", f"`{f.rule}`",
                 inline(f.text("title", lang), cell=True), _where(f), inline(clock(f.first_seen))]
        rows.append("| " + " | ".join(cells) + " |")
    return rows


def _finding(f: Finding, lang: str, level: str) -> list[str]:
    out = [f"{level} {f.id} · {inline(f.text('title', lang))}", ""]
    meta = [f"**{label(f.severity, lang)}**", label(shown_role(f, level != "####"), lang), inline(category_label(f.category, lang)),
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
    return [f"{label('legend', lang)}{colon(lang)}{inline(legend)}", "", fence(lines), ""]


def _steps(report: Report, lang: str) -> list[str]:
    top = top_finding(report)
    if top is not None:
        return [line for line in top.text("remediation", lang).strip().splitlines() if line.strip()]
    return [f"{n}. {step}" for n, step in enumerate(next_steps(report, lang), 1)]


def _ticket(report: Report, lang: str) -> list[str]:
    """The first screen: verdict, culprit, three evidence lines, next steps."""
    out = [f"## {inline(label('title', lang))}{colon(lang)}{inline(category_label(report.verdict.category, lang))}", ""]
    out += [f"**{label('verdict', lang)}{colon(lang).strip()}** {inline(verdict_sentence(report, lang))}"
            f"{paren(label('confidence', lang) + f' {report.verdict.confidence:.2f}', lang, ' ')}", ""]
    if report.job.year_guessed:
        out += [f"_{inline(label('year_note', lang))}_", ""]
    where = culprit(report, lang)
    if where:
        out += [f"**{label('culprit', lang)}{colon(lang).strip()}** {inline(where)}", ""]
    top = top_finding(report) or (report.findings[0] if report.findings else None)
    if top is not None and top.evidence:
        out += [fence([f"{evidence_location(e.file, e.line)}: {e.text.rstrip()}" for e in top.evidence[:3]]), ""]
    steps = _steps(report, lang)
    if steps:
        out += [f"**{label('remediation', lang)}**", "", *(inline(s) for s in steps), ""]
    return out


def render(report: Report, lang: str | None = None, **_: object) -> str:
    lang = lang or report.lang
    out = _ticket(report, lang)
    out += ["<details>", f"<summary>{inline(label('details', lang))}{colon(lang)}{inline(summary_line(report, lang))}"
            "</summary>", ""]
    if report.findings:
        out += [f"### {label('findings', lang)}", "", *_table(report, lang), ""]
    for group in finding_tree(report):
        out += _finding(group.finding, lang, "####")
        if group.explains:
            out += ["<details>", f"<summary>{inline(label('symptoms', lang))}{paren(str(len(group.explains)), lang, ' ')}</summary>", ""]
            for child in group.explains:
                out += _finding(child, lang, "#####")
            out += ["</details>", ""]
    out += [f"### {label('ranks', lang)}", "", *_ranks(report, lang)]
    failures = alike(first_failures(report))[:10]
    if failures:
        lines = [f"{clock(f.ts) or '-'}  {f.host if f.host != '?' else label('no_host', lang)}  "
                 + (alike_note(n, lang) + " " if n else "") + f.text.strip() for f, n in failures]
        out += [f"### {label('timeline', lang)}", "", fence(lines), ""]
    inv = inventory(report)
    out += ["<details>", f"<summary>{inline(label('inputs', lang))}{colon(lang)}{inline(inventory_line(inv, lang))}</summary>", ""]
    out += [f"| {label('file', lang)} | {label('lines', lang)} | {label('events', lang)} | {label('why', lang)} |",
            "|---|---|---|---|"]
    for i in report.inputs[:INVENTORY_ROWS]:
        out.append(f"| {inline(i.path, cell=True)} | {i.lines} | {i.events} | {inline(skip_reason(i.skipped or '', lang), cell=True)} |")
    if len(report.inputs) > INVENTORY_ROWS:
        out.append(f"| … +{len(report.inputs) - INVENTORY_ROWS} {label('files', lang)} | | | |")
    out += ["", "</details>", "", "</details>", ""]
    return "\n".join(out)
