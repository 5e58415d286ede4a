"""The whole analysis, from paths to a Report: extract → rules and analyses → ranking → report."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from nccllens import __version__
from nccllens.report.model import InputFile, Report


@dataclass
class Options:
    """What one analysis is asked for: language, rule folders, selection and --host/--rank."""

    lang: str = "en"
    rules_dirs: Sequence[str] = ()
    select: Sequence[str] = ()
    ignore: Sequence[str] = ()
    host: str | None = None
    rank: int | None = None
    extra: dict = field(default_factory=dict)


def load_rules(options: Options):
    from nccllens.engine import load_rules as _load
    from nccllens.selection import choose_rules

    rules = _load([*options.rules_dirs])
    return choose_rules(rules, select=list(options.select), ignore=list(options.ignore))


def run_analysis(paths: Sequence[str] | str, *, lang: str = "en", rules_dirs: Sequence[str] = (),
                 select: Sequence[str] = (), ignore: Sequence[str] = (), host: str | None = None,
                 rank: int | None = None, progress=None, config: str | None = None) -> Report:
    from nccllens.engine import evaluate, finding_from_hit
    from nccllens.extract import extract_tables
    from nccllens.ranking import rank_findings
    from nccllens.timeline import normalize

    if isinstance(paths, str):
        paths = [paths]
    options = Options(lang, rules_dirs, select, ignore, host, rank)
    from nccllens.report.life import mark_last_seen, year_guessed
    from nccllens.report.outcome import FINISHED_PATTERNS, settle_verdict

    rules = load_rules(options)
    patterns = [r.match.pattern for r in rules if r.match.pattern] + list(FINISHED_PATTERNS)
    events, inputs, summaries = extract_tables(list(paths), patterns, host, rank, progress=progress)
    from nccllens.cut_tracebacks import complete_cut_tracebacks

    events = complete_cut_tracebacks(events)  # a traceback cut before its exception: the same one printed whole
    hits = evaluate(rules, events)
    findings = [finding_from_hit(hit, lang) for hit in hits]
    table = normalize(events)  # once: the analyses, the job model and the ranking all read it
    ws, job, ranks = _job(table)
    from nccllens.analyses import run_all

    findings += run_all(table, lang, job, ranks, summaries=summaries, ws=ws)
    findings += _ends_connecting(table, lang)
    findings += _unclaimed(table, hits, findings, lang)
    findings += _rank0_suspect(findings, table, job, lang)
    findings += _silent_death(findings, table, lang)
    from nccllens.analyses.shutdown import quiet_after_finish, recovered_by_restart

    findings = _selected(findings, select, ignore)
    quiet_after_finish(findings, table, ranks)  # shutdown noise after a finished job is context
    recovered = recovered_by_restart(findings, table, ranks)  # a failed attempt the agent restarted, then it finished
    from nccllens.analyses.went_on import quiet_went_on

    quiet_went_on(findings, table, ranks, summaries)  # errors a rank trained on past
    from nccllens.analyses.agent_kills import quiet_agent_kills

    quiet_agent_kills(findings, table, ranks)  # the launcher's own SIGKILL is no OOM
    _node_wide(findings, job)
    _only_host(findings, job, summaries)
    from nccllens.analyses.one_node import (
        quiet_fallback_without_rdma,
        quiet_idle_socket_iface,
        quiet_one_node_fallback,
        raise_ipoib_fallback,
    )

    quiet_one_node_fallback(findings, table, job, summaries)  # no RDMA is harmless inside one node
    raise_ipoib_fallback(findings, table, job, summaries)  # ...and a fallback between nodes that have InfiniBand
    quiet_idle_socket_iface(findings, table)  # a socket interface list is idle where NCCL runs over IB
    quiet_fallback_without_rdma(findings, table)  # no IB device is no fallback where no node shows RDMA
    from nccllens.analyses.latent import quiet_latent

    quiet_latent(findings, {r.id for r in rules if r.latent}, table, ranks)  # a condition, in a run that did not fail
    verdict, ranked = rank_findings(findings, table, job, lang, recovered, harmless=_harmless(hits, table))
    if config is not None:  # the configuration used is named with the inputs
        inputs.append(InputFile(path=config, kind="configuration", notes=["read as nccllens configuration"]))
    inputs = sorted(inputs, key=lambda i: i.path)  # the inventory reads the same whatever the argument order
    verdict = settle_verdict(verdict, table, ranks, inputs, select, lang)  # "no failure" only with proof
    mark_last_seen(ranks, table)  # each rank's last sign of life
    job.year_guessed = year_guessed(table)
    return Report(verdict=verdict, findings=ranked, job=job, ranks=ranks, inputs=inputs, lang=lang,
                  version=__version__, events=events)


def _selected(findings, select, ignore):
    """The analyses' findings that ``--select``/``--ignore`` leave (the rules' were chosen before they ran)."""
    from nccllens.selection import keep_finding

    return [f for f in findings if not f.rule.startswith("AN-") or keep_finding(f.rule, f.category, select, ignore)]


def _ends_connecting(table, lang):
    from nccllens.analyses.last_words import ends_connecting

    return ends_connecting(table, lang) if table.height else []


def _rank0_suspect(findings, table, job, lang):
    """Timeouts that no cause explains, reported by ranks other than 0: rank 0 is the first suspect."""
    from nccllens.analyses.rank0_quiet import rank0_not_waiting

    return rank0_not_waiting(findings, table, {int(r): h for r, h in job.rank_hosts.items()}, lang)


POINTERS = ("AN-FIRST-FAILURE",)  # findings that point at a failure line without reading it: they claim none


def _silent_death(findings, table, lang):
    """A launcher's teardown with no error line anywhere: the worker that ended said nothing."""
    from nccllens.analyses.silent_death import silent_worker_death

    return silent_worker_death(findings, table, lang)


def _unclaimed(table, hits, findings, lang):
    """Failure lines that no rule matched and no finding quotes: low-confidence causes of their own."""
    import polars as pl

    from nccllens.analyses.unclaimed import unclaimed_causes

    readers = [f for f in findings if f.rule not in POINTERS]
    quoted = pl.DataFrame({"file": [e.file for f in readers for e in f.evidence],
                           "line": [e.line for f in readers for e in f.evidence]},
                          schema={"file": pl.String, "line": pl.Int64})
    matched = [hit.events.select(pl.col("file").cast(pl.String), pl.col("line").cast(pl.Int64)) for hit in hits]
    recognised = any(f.role == "cause" and f.severity in ("error", "critical") for f in findings)
    return unclaimed_causes(table, pl.concat([quoted, *matched]), lang, recognised=recognised)


NODE_WIDE = ("job_killed", "straggler")  # what happens to a node happens to every rank on it


def _ranks_of_host(host: str, job) -> list[int]:
    """The ranks a host ran: as the logs say, or, for the one host that printed no rank, the ranks
    nobody else claimed when every other host ran the same number of ranks (torchrun's layout)."""
    owned = sorted(int(r) for r, h in job.rank_hosts.items() if h == host)
    if owned:
        return owned
    counts: dict[str, int] = {}
    for h in job.rank_hosts.values():
        counts[h] = counts.get(h, 0) + 1
    rankless = [h for h in job.hosts if h not in counts]
    if rankless != [host] or len(set(counts.values())) != 1:
        return []
    per_node = next(iter(counts.values()))
    seen = {int(r) for r in job.rank_hosts}
    return sorted(set(range(per_node * len(job.hosts))) - seen)


def _node_wide(findings, job) -> None:
    """A node-level cause (its agent was killed, it joined late) names the ranks that node hosted."""
    for f in findings:
        if f.role == "cause" and f.category in NODE_WIDE and f.hosts and not f.ranks:
            f.ranks = sorted(r for h in f.hosts for r in _ranks_of_host(h, job))


def _only_host(findings, job, summaries) -> None:
    """A cause whose lines name no host happened on the job's host when the logs (summarised lines too)
    name exactly one."""
    hosts = set(job.hosts)
    if summaries is not None and summaries.height:
        hosts |= {str(h) for h in summaries["host"].drop_nulls().unique().to_list()}
    if len(hosts) != 1:
        return
    for f in findings:
        if f.role == "cause" and not f.hosts:
            f.hosts = sorted(hosts)


def _job(events):
    """(world size, job model, rank status) of the normalized ``events``: each computed once."""
    from nccllens.job import build_job, world_size
    from nccllens.rank_status import rank_status

    ws = world_size(events)
    job = build_job(events, ws)
    return ws, job, rank_status(events, job)


def _harmless(hits, table):
    """(file, line) of the events that only info-severity rules matched: lines the rules call noise."""
    import polars as pl

    noise = [h.events.select("file", "line") for h in hits if h.rule.severity == "info" and h.events.height]
    if not noise:
        return None
    told = [h.events.select("file", "line") for h in hits if h.rule.severity != "info" and h.events.height]
    keys = pl.concat(noise).unique()
    if told:
        keys = keys.join(pl.concat(told).unique(), on=["file", "line"], how="anti")
    return keys.with_columns(pl.col("file").cast(table.schema["file"]), pl.col("line").cast(table.schema["line"]))
