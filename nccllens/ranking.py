"""Causal ranking: causes above the symptoms they explain, earliest and most specific first (the verdict on the
ranked findings is ``nccllens.verdict``).

A cause C explains a finding X when C's rule names X's rule or category (``explains``), when C
refines X (same category, narrower culprit ranks), or when X only locates the failure (an absent or
silent rank) and C happened on the same rank or host. C must not come after X (within the clock
slack). Roots are the causes nothing else explains; each is followed by what it explains.
Confidence grows with independent findings naming the same culprit.
"""

from __future__ import annotations

from datetime import datetime, timedelta

import polars as pl

from nccllens.analyses.common import LOCATORS
from nccllens.report.model import Finding, JobModel, Verdict
from nccllens.taxonomy import CATEGORIES
from nccllens.timeline import normalize
from nccllens.verdict import SERIOUS, WEAK, failure_signs, generic, verdict_of

_SEVERITY = {"critical": 0, "error": 0, "warning": 1, "info": 2}
_ROLE = {"cause": 0, "symptom": 1, "context": 2}
SLACK = timedelta(seconds=2)


BORROW_SPAN = timedelta(seconds=60)  # an untimed line between timed lines further apart has no time to show


def _times(findings: list[Finding], events) -> tuple[dict[int, datetime | None], dict[int, datetime | None]]:
    """Each finding's time for ordering: its evidence lines' (normalized) times, else the nearest earlier
    timed line of the same file (else the nearest later one). And the time to show: the same, except
    for an untimed line between two timed lines more than BORROW_SPAN apart (a C++ line of torch <= 2.3
    between the rendezvous and a timeout 30 minutes later has no time of its own, and showing the
    rendezvous's would mislead); None leaves the finding's own."""
    order: dict[int, datetime | None] = {}
    shown: dict[int, datetime | None] = {}
    timed = None
    if events is not None and getattr(events, "height", 0):
        timed = (normalize(events).filter(pl.col("ts").is_not_null()).select("file", "line", "ts")
                 .sort(["file", "line"]))
    for i, f in enumerate(findings):
        best = show = None
        if timed is not None and f.evidence:
            probe = pl.DataFrame({"file": [e.file for e in f.evidence], "line": [e.line for e in f.evidence]},
                                 schema={"file": pl.String, "line": pl.UInt32}).cast({"file": timed["file"].dtype}).sort(["file", "line"])
            back = probe.join_asof(timed, on="line", by="file", strategy="backward", check_sortedness=False)["ts"]
            ahead = probe.join_asof(timed, on="line", by="file", strategy="forward", check_sortedness=False)["ts"]
            rows = list(zip(back.to_list(), ahead.to_list(), strict=True))
            earlier = [b for b, _ in rows if b is not None]
            if earlier:
                best = min(earlier)
                sure = [b for b, a in rows if b is not None and (a is None or a - b <= BORROW_SPAN)]
            else:
                sure = [a for _, a in rows if a is not None]
                best = min(sure) if sure else None
            show = min(sure) if sure else None
        if best is None and f.first_seen:
            try:
                best = datetime.fromisoformat(f.first_seen)
            except ValueError:
                best = None
        order[i], shown[i] = best, show
    return order, shown


FALLBACKS = ("AN-UNCLAIMED",)  # a failure no rule recognises: below every recognised cause
# a job stopped because it ran out of time: what stopped it from finishing came before, so a serious cause that
# surely came before the kill explains it (``_before``; one the job went on past is demoted before ranking:
# ``analyses.went_on``)
TIME_LIMITS = ("NL-JOB-020", "AN-WALLCLOCK-KILL")
# a worker's exit status and nothing more ("failed (exitcode: 1)": an uncaught exception ended it): any serious
# cause on the same rank that did not come after it says what that exception was
EXIT_STATUS = ("NL-APP-016",)


def _tier(f: Finding, job: JobModel) -> int:
    """0: says where (ranks, or hosts that single out part of the job); 1: finds the culprit by comparing
    ranks (``LOCATORS``), or says nothing of where in logs that name one host or none (there it is as
    specific as the logs allow); 2: says nothing of where in a job of several hosts, or a fallback."""
    if f.rule in FALLBACKS:
        return 2
    if generic(f, job):
        unplaced = not f.ranks and not f.hosts and f.confidence > WEAK and len(set(job.hosts or [])) <= 1
        return 1 if unplaced else 2
    return 1 if f.rule in LOCATORS else 0


def _overlap(a: Finding, b: Finding) -> bool:
    if a.ranks and b.ranks and set(a.ranks) & set(b.ranks):
        return True
    return bool(a.hosts and b.hosts and set(a.hosts) & set(b.hosts))


def _reads_same_line_closer(a: Finding, b: Finding) -> bool:
    """``a`` recognises a line that ``b`` knows only as an exception in the training code (``ValueError:
    host not found: Name or service not known``): the more specific reading explains the generic one."""
    if b.category != "application_error" or a.category == "application_error" or a.rule.startswith("AN-"):
        return False  # an analysis quotes lines as context; a rule's first line is the one it matched
    if not a.evidence or not b.evidence:
        return False
    return (a.evidence[0].file, a.evidence[0].line) == (b.evidence[0].file, b.evidence[0].line)


def _first_line(f: Finding) -> tuple[str, int]:
    """Where a finding's first evidence line is: the earlier of two otherwise equal findings comes first."""
    return (str(f.evidence[0].file or ""), int(f.evidence[0].line or 0)) if f.evidence else ("", 0)


def _before(a: Finding, ta: datetime | None, b: Finding, tb: datetime | None) -> bool:
    """``a`` surely came before ``b``: earlier by more than the clock slack, or, where the times cannot tell them
    apart (untimed lines borrow their neighbours' times), earlier in the same file. The errors a kill itself
    causes (peers losing each other as the processes stop) come seconds after it, or after its line."""
    if ta is not None and tb is not None and ta < tb - SLACK:
        return True
    if ta is not None and tb is not None and ta > tb + SLACK:
        return False
    return bool(a.evidence and b.evidence) and a.evidence[0].file == b.evidence[0].file \
        and a.evidence[0].line < b.evidence[0].line


def _exit_statuses_told(findings: list[Finding], times) -> list[int]:
    """Exit statuses (``EXIT_STATUS``) whose own rank shows a serious finding no later than them, cause or
    symptom: that finding (a watchdog timeout whose exception ended the worker, an NCCL error) says what the
    uncaught exception was, so the status is its consequence, not a cause of its own."""
    told = []
    for j, b in enumerate(findings):
        if b.rule not in EXIT_STATUS or b.role != "cause" or not b.ranks:
            continue
        if any(i != j and a.rule not in EXIT_STATUS and a.severity in SERIOUS and a.role in ("cause", "symptom")
               and set(a.ranks) & set(b.ranks) and (times[i] is None or times[j] is None or times[i] <= times[j] + SLACK)
               for i, a in enumerate(findings)):
            told.append(j)
    return told


def _refines(a: Finding, b: Finding) -> bool:
    return a.category == b.category and bool(a.ranks) and (not b.ranks or set(a.ranks) < set(b.ranks))


def rank_findings(findings: list[Finding], events, job: JobModel | None, lang: str,
                  recovered: bool = False, harmless=None) -> tuple[Verdict, list[Finding]]:
    """The findings in causal order and the verdict. ``recovered``: the job failed once and the launcher's
    restart then finished it (``analyses.shutdown.recovered_by_restart``): its error lines are no failure
    of the job. ``harmless``: (file, line) of error lines an info rule claimed (known noise, such as NCCL's
    proxy thread reading closed connections at exit): they are no sign of a failure either."""
    job = job or JobModel()
    times, shown = _times(findings, events)
    for j in _exit_statuses_told(findings, times):
        findings[j].role = "symptom"
    specs = [set(f.explains) for f in findings]
    for i, f in enumerate(findings):
        f.explains = []
        if shown[i] is not None:
            f.first_seen = shown[i].isoformat()

    def key(i: int):
        f, t = findings[i], times[i]
        # ends with what tells two findings of one rule apart, so that the order is total: findings
        # made in an order polars does not fix (a group_by) still come out the same every run
        # how precisely a finding places its culprit orders causes; symptoms and context come in the order
        # of their severity, time and confidence (a relay that names its writer's rank is no better placed)
        tier = _tier(f, job) if f.role == "cause" else 0
        return (_ROLE.get(f.role, 3), tier, _SEVERITY.get(f.severity, 3), t is None, t or datetime.max,
                -f.confidence, _first_line(f), f.rule, f.ranks, f.hosts, f.title, [(e.file, e.line) for e in f.evidence])

    def can_explain(i: int, j: int) -> bool:
        a, b = findings[i], findings[j]
        if i == j or a.role != "cause":
            return False
        if _reads_same_line_closer(a, b):
            return True
        ta, tb = times[i], times[j]
        in_time = ta is None or tb is None or ta <= tb + SLACK
        if b.rule in TIME_LIMITS and a.rule not in TIME_LIMITS and a.severity in SERIOUS and a.category != "job_killed" \
                and _before(a, ta, b, tb):
            return True  # the hang (or failure) the time limit ended
        if b.rule in EXIT_STATUS and a.rule not in EXIT_STATUS and a.severity in SERIOUS and in_time and _overlap(a, b):
            return True
        named = b.rule in specs[i] or (b.category in specs[i] and b.category in CATEGORIES)
        locator = b.rule in LOCATORS and a.rule not in LOCATORS and _overlap(a, b)
        if b.role != "cause":
            return (named and in_time) or locator
        if _refines(a, b) or (locator and in_time):
            return True
        # a cause that names the other finding's rule by id explains it whatever their tiers (an exception
        # no rule recognised still explains the "worker exited with code 1" that it caused)
        if not (named and in_time and (_tier(a, job) <= _tier(b, job) or b.rule in specs[i])):
            return False
        mutual = a.rule in specs[j] or (a.category in specs[j] and a.category != b.category)
        return not mutual or key(i) < key(j)

    order = sorted(range(len(findings)), key=key)
    explainers = {j: [i for i in order if can_explain(i, j)] for j in order}
    roots = [i for i in order if findings[i].role == "cause" and not explainers[i]]
    parent: dict[int, int] = {}
    for j in order:
        if j in roots or not explainers[j]:
            continue
        direct_roots = [i for i in explainers[j] if i in roots]
        parent[j] = (direct_roots or explainers[j])[0]
    ranked: list[int] = []

    def place(i: int) -> None:
        if i in ranked:
            return
        ranked.append(i)
        for j in order:
            if parent.get(j) == i:
                place(j)

    for i in roots:
        place(i)
    for i in order:
        place(i)
    out = [findings[i] for i in ranked]
    for n, f in enumerate(out, 1):
        f.id = f"F{n}"
    for j, i in parent.items():
        findings[j].explained_by = findings[i].id
        findings[i].explains.append(findings[j].id)
    for f in out:
        f.explains.sort(key=lambda fid: int(fid[1:]))
    # a root cause named by host only: the ranks that ran there, when the node's rank set is known (no rank of
    # a known world size left unplaced: it may have run on that host, so the list would name the wrong ranks)
    placed = not job.world_size or len(job.rank_hosts) >= job.world_size
    for f in out:
        if f.role == "cause" and not f.explained_by and not f.ranks and f.hosts and placed and not generic(f, job):
            f.ranks = sorted(int(r) for r, h in job.rank_hosts.items() if h in f.hosts)
    _agreement(out, job)
    if harmless is not None and harmless.height and events is not None and getattr(events, "height", 0):
        events = events.join(harmless, on=["file", "line"], how="anti")
    saw, untold = (False, False) if recovered else failure_signs(events)
    return verdict_of(out, job, lang, saw, untold), out


def _agreement(ranked: list[Finding], job: JobModel) -> None:
    """Independent findings naming the same culprit raise the top causes' confidence."""
    for f in ranked:
        if f.role != "cause" or f.explained_by or generic(f, job):
            continue
        agree = {g.rule for g in ranked if g is not f and g.rule != f.rule and g.role in ("cause", "context")
                 and _names_same(f, g)}
        for _ in agree:
            f.confidence = round(min(0.99, f.confidence + (1 - f.confidence) * 0.3), 2)


def _names_same(f: Finding, g: Finding) -> bool:
    if f.ranks and g.ranks:
        return set(g.ranks) <= set(f.ranks)
    return bool(f.hosts and g.hosts and set(g.hosts) <= set(f.hosts))
