"""Causal ranking and the verdict: causes above the symptoms they explain, earliest first."""

from __future__ import annotations

from nccllens.report.model import Finding, Verdict

_SEVERITY = {"critical": 0, "error": 1, "warning": 2, "info": 3}
_ROLE = {"cause": 0, "symptom": 1, "context": 2}


def _key(f: Finding):
    return (_ROLE.get(f.role, 3), _SEVERITY.get(f.severity, 4), f.first_seen or "9999", -f.confidence, f.rule)


def rank_findings(findings: list[Finding], events, job, lang: str) -> tuple[Verdict, list[Finding]]:
    ranked = sorted(findings, key=_key)
    for i, f in enumerate(ranked, 1):
        f.id = f"F{i}"
    serious = [f for f in ranked if f.severity in ("critical", "error")]
    if not serious:
        return Verdict("none", "No failure found in the logs." if lang == "en" else "日志中未发现故障。", 0.8), ranked
    top = ranked[0]
    if top.role != "cause":
        return Verdict("unknown", top.title, round(top.confidence * 0.5, 2), top.id), ranked
    return Verdict(top.category, top.title, top.confidence, top.id), ranked
