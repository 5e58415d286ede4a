"""The verdict on ranked findings: the root cause, or "unknown" saying what is missing, or "no failure" only
when nothing in the logs shows one."""

from __future__ import annotations

from nccllens.engine.findings import compact_ranks
from nccllens.report.model import Finding, JobModel, Verdict

SERIOUS = ("critical", "error")
WEAK = 0.5  # a rule cause this unsure, naming no rank, is a consequence-like summary (exit code 1...)


def generic(f: Finding, job: JobModel) -> bool:
    """A finding that says nothing of where in the job: no rank, and no host or every host (or it is unsure)."""
    all_hosts = set(job.hosts or [])
    return not f.ranks and (not f.hosts or f.confidence <= WEAK
                            or (len(all_hosts) > 1 and set(f.hosts) >= all_hosts))


def failure_signs(events) -> tuple[bool, bool]:
    """Whether any error line was printed at all, and whether one of them says too little to classify (a
    traceback cut before its exception, a terminate without its what())."""
    from nccllens.analyses.unclaimed import failure_counts

    if events is None or not getattr(events, "height", 0):
        return False, False
    every, classifiable = failure_counts(events)
    return every > 0, every > classifiable


def _missing_summary(ranked: list[Finding], job: JobModel, lang: str, untold: bool = False) -> str:
    zh = lang == "zh"
    parts = []
    never = sorted(set(range(job.world_size or 0)) - set(job.ranks_seen))
    if never and job.ranks_seen:
        parts.append(f"没有 rank {compact_ranks(never)} 的日志" if zh else f"no logs from ranks {compact_ranks(never)}")
    serious = [f for f in ranked if f.severity in SERIOUS]
    if not serious and (untold or not ranked):
        parts.append("有报错行，但没有一条能归类（例如 traceback 在异常那一行之前就被截断了）" if zh else
                     "error lines were printed, but none says enough to classify (e.g. a traceback cut before its "
                     "exception line)")
    if serious and all(f.category == "collective_timeout" for f in serious) and any(
            f.rule != "AN-UNCLAIMED" for f in serious):
        parts.append("只有 watchdog 超时：停止发起集合通信的那个 rank 没有留下日志" if zh else
                     "only watchdog timeouts: the rank that stopped issuing collectives left no log")
    elif serious and all(f.category == "collective_timeout" for f in serious):
        # errors no rule reads that point to a wait: a watchdog's C++ exception, a Ctrl-C inside a collective
        parts.append("只看到卡在集合通信里的进程（超时或被中断），看不到是谁先停下的" if zh else
                     "only processes stuck in collectives (timed out or interrupted); nothing shows who stopped first")
    elif ranked:
        seen = (serious or ranked)[0].title
        parts.append(f"能看到的只是症状（{seen}）" if zh else f"only symptoms are visible ({seen})")
    head = "日志中看不到根因：" if zh else "The logs do not show the cause: "
    return head + ("；".join(parts) if zh else "; ".join(parts))


def verdict_of(ranked: list[Finding], job: JobModel, lang: str, saw_failure: bool = False,
             untold: bool = False) -> Verdict:
    serious = [f for f in ranked if f.severity in SERIOUS]
    causes = [f for f in ranked if f.role == "cause" and not f.explained_by and f.severity != "info"]
    # a warning-level symptom (a peer closed its connection, a proxy operation failed) is evidence of a
    # failure too: without a cause it makes the verdict "unknown", never "no failure"
    symptoms = [f for f in ranked if f.role == "symptom" and f.severity == "warning"]
    if not serious and not causes and not symptoms and not saw_failure:
        return Verdict("none", "日志中未发现故障。" if lang == "zh" else "No failure found in the logs.", 0.8)
    top = ranked[0] if ranked else None
    if top is not None and top.role == "cause" and top.severity != "info":
        confidence = top.confidence * (0.8 if generic(top, job) else 1.0)
        summary = top.title
        if top.explains:
            summary += (f"（可解释另外 {len(top.explains)} 项发现）" if lang == "zh"
                        else f" (explains {len(top.explains)} other finding(s))")
        return Verdict(top.category, summary, round(confidence, 2), top.id)
    return Verdict("unknown", _missing_summary(ranked, job, lang, untold), 0.3)
