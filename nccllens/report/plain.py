"""A plain-text summary (no colour), used when rich output is unavailable."""

from __future__ import annotations

from nccllens.report.model import Report


def render(report: Report, **_: object) -> str:
    zh = report.lang == "zh"
    out = [("结论: " if zh else "Verdict: ") + f"[{report.verdict.category}] {report.verdict.summary}", ""]
    for f in report.findings:
        where = ", ".join(filter(None, [
            ("ranks " + ",".join(map(str, f.ranks))) if f.ranks else "",
            ("hosts " + ",".join(f.hosts)) if f.hosts else "",
        ]))
        out.append(f"{f.id} {f.severity.upper():8} {f.role:7} {f.category:20} {f.rule}: {f.title}"
                   + (f"  ({where})" if where else ""))
        for e in f.evidence[:3]:
            out.append(f"    {e.file}:{e.line}: {e.text[:200]}")
    skipped = [i for i in report.inputs if i.skipped]
    out.append("")
    out.append(f"{len(report.inputs)} files read, {len(skipped)} skipped")
    for i in skipped:
        out.append(f"  skipped {i.path}: {i.skipped}")
    return "\n".join(out) + "\n"
