"""What every renderer shows, worked out once: the verdict sentence, causes with their symptoms,
the inventory. Renderers only lay these out (terminal, HTML, Markdown)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from nccllens import lazy_regex
from nccllens.rank_ranges import compact_ranks  # noqa: F401 - re-exported
from nccllens.report.labels import category_label, colon, label, paren
from nccllens.report.model import Finding, InputFile, Report

_NUMBERED = lazy_regex.compile(r"^\s*(?:\d+[.)]|[-*])\s+")


def compact_hosts(hosts: list[str], limit: int = 3) -> str:
    if len(hosts) <= limit:
        return ", ".join(hosts)
    return ", ".join(hosts[:limit]) + f" (+{len(hosts) - limit})"


def shown_role(f: Finding, nested: bool) -> str:
    """The role a reader sees: a finding folded under a cause's symptoms is a symptom there, even when
    the ranking kept it as a (narrower) cause; the JSON keeps the ranking's role."""
    return "symptom" if nested and f.role == "cause" else f.role


def clock(ts: str | None) -> str:
    """A timestamp as shown: ISO 8601 to the second, every one alike (``2026-11-22T03:49:45``, not
    ``…T03:49:45.387000``); the JSON keeps the full value."""
    if not ts:
        return ""
    return ts[:19] if len(ts) > 19 and ts[10:11] in ("T", " ") and ts[16:17] == ":" else ts


def first_step(remediation: str) -> str:
    """The first thing to do: the first non-empty line of the remediation, without its list number."""
    for line in remediation.splitlines():
        line = _NUMBERED.sub("", line).strip()
        if line:
            return line
    return ""


def top_finding(report: Report) -> Finding | None:
    if report.verdict.finding:
        for f in report.findings:
            if f.id == report.verdict.finding:
                return f
    if report.verdict.category in ("none", "unknown"):
        return None
    return next((f for f in report.findings if f.role == "cause"), None)


def where(f: Finding, lang: str) -> str:
    parts = []
    if f.hosts:
        parts.append(compact_hosts(f.hosts))
    if f.ranks:
        parts.append(f"{label('rank', lang)} {compact_ranks(f.ranks)}")
    return " / ".join(parts)


def verdict_sentence(report: Report, lang: str | None = None) -> str:
    """One sentence: what went wrong, where, when, and what to do first."""
    lang = lang or report.lang
    v = report.verdict
    top = top_finding(report)
    summary = v.summary_in(lang) if lang != report.lang else v.summary
    if top is None:  # the summary says it all ("No known failure pattern in ...", "The logs do not show ...")
        return summary or category_label(v.category, lang)
    zh = lang == "zh"
    sep = "，" if zh else ", "
    parts = [f"{category_label(top.category, lang)}{colon(lang)}{top.text('title', lang)}"]
    title = top.text("title", lang)
    # say each datum once: what the title names already (its hosts, its ranks) is not repeated
    hosts = [] if top.hosts and all(h in title for h in top.hosts) else top.hosts
    ranks = [] if top.ranks and re.search(r"\b(?:rank|Rank)(?:\(s\)|s)?\s+" + re.escape(compact_ranks(top.ranks))
                                          + r"(?![\d,-])", title) else top.ranks
    place = " / ".join(filter(None, [compact_hosts(hosts) if hosts else "",
                                     f"{label('rank', lang)} {compact_ranks(ranks)}" if ranks else ""]))
    if place:
        parts.append(f"{label('on', lang)} {place}")
    if top.first_seen:
        guessed = paren(label("year_guessed", lang), lang, " ") if report.job.year_guessed else ""
        parts.append(f"{label('at', lang)} {clock(top.first_seen)}{guessed}")
    sentence = sep.join(parts)
    step = first_step(top.text("remediation", lang))
    if step:
        sentence += ("。首先：" if zh else ". First: ") + step
    return sentence


@dataclass
class CauseGroup:
    """A finding and the symptoms it accounts for (empty for symptoms nothing explains)."""

    finding: Finding
    explains: list[Finding] = field(default_factory=list)


def finding_tree(report: Report) -> list[CauseGroup]:
    """Findings in ranked order; a symptom explained by a cause is folded under that cause."""
    by_id = {f.id: f for f in report.findings}
    parent: dict[str, str] = {}
    for f in report.findings:
        if f.explained_by and f.explained_by in by_id and f.explained_by != f.id:
            parent[f.id] = f.explained_by
    for f in report.findings:
        for child in f.explains:
            if child in by_id and child != f.id and child not in parent:
                parent[child] = f.id
    def root(fid: str) -> str:
        start, seen = fid, {fid}
        while fid in parent:
            fid = parent[fid]
            if fid in seen:
                return start  # a cycle: nobody owns it
            seen.add(fid)
        return fid

    groups: dict[str, CauseGroup] = {}
    order: list[CauseGroup] = []
    for f in report.findings:
        if root(f.id) == f.id:
            groups[f.id] = CauseGroup(f)
            order.append(groups[f.id])
    for f in report.findings:
        owner = root(f.id)
        if owner != f.id and owner in groups:
            groups[owner].explains.append(f)
    return order


@dataclass
class Inventory:
    """The inputs as the report lists them: read, skipped, and totals."""

    read: list[InputFile]
    skipped: list[InputFile]
    lines: int
    events: int


def inventory(report: Report) -> Inventory:
    read = [i for i in report.inputs if not i.skipped]
    skipped = [i for i in report.inputs if i.skipped]
    return Inventory(read, skipped, sum(i.lines for i in read), sum(i.events for i in read))


def inventory_line(inv: Inventory, lang: str) -> str:
    """``14 files read (250 lines, 38 events), 1 skipped`` / ``已读取 14 个文件（250 行，38 个事件），跳过 1 个``."""
    if lang == "zh":
        return (f"已读取 {len(inv.read)} 个文件（{inv.lines} 行，{inv.events} 个事件），"
                f"跳过 {len(inv.skipped)} 个")
    files = "file" if len(inv.read) == 1 else "files"
    return f"{len(inv.read)} {files} read ({inv.lines} lines, {inv.events} events), {len(inv.skipped)} skipped"


def evidence_location(file: str, line: int) -> str:
    return f"{file}:{line}" if line else file
