"""Cross-rank analyses: each a function of the event table (and the job model) → findings.

``run_all(events, lang)`` runs them all; every finding's id is ``AN-...`` and its texts live in
``texts.toml`` (English and Chinese), not in Python.
"""

from __future__ import annotations

import polars as pl

from nccllens.report.model import Finding, JobModel, RankStatus

PROBLEMS: list[str] = []  # analyses that raised (a bug): reported by tests, never fatal to a run


def run_all(events: pl.DataFrame, lang: str = "en", job: JobModel | None = None,
            status: list[RankStatus] | None = None, summaries: pl.DataFrame | None = None) -> list[Finding]:
    """Every analysis's findings. ``job`` and ``status`` are ``build_job(events)`` and
    ``rank_status(events, job)`` when the caller has them already (``run_analysis`` does); ``summaries``
    is the summary table of the dense families (``nccllens.summaries``), when the caller has one."""
    from nccllens.analyses import (
        activity,
        collectives,
        config_diff,
        divergence,
        first_failure,
        flight_dumps,
        inner_error,
        main_first,
        masked_exit,
        missing,
        net_facts,
        opcounts,
        progress,
        stacks,
        stragglers,
    )
    from nccllens.job import build_job, rank_hosts, rank_status, world_size
    from nccllens.timeline import normalize

    if not events.height:
        return []
    events = normalize(events)
    job = build_job(events) if job is None else job
    status = rank_status(events, job) if status is None else status
    ws = world_size(events)
    hosts = rank_hosts(events)
    seen = set(job.ranks_seen)
    dead = activity.dead_ranks(events, status)  # gone on their own, not stopped or left behind
    found: list[Finding] = []
    steps = [
        lambda: collectives.absent_from_collective(events, ws.size, hosts, seen, lang, dead),
        lambda: collectives.op_divergence(events, hosts, lang),
        lambda: collectives.enqueue_lead(events, hosts, lang),
        lambda: collectives.ras_mismatch(events, hosts, lang),
        lambda: missing.node_never_joined(events, ws, lang),
        lambda: missing.store_key_rank(events, hosts, lang),
        lambda: missing.store_barrier_stuck(events, hosts, lang),
        lambda: missing.silent_ranks(events, status, lang),
        lambda: missing.silent_hosts(events, ws, status, lang),
        lambda: missing.no_logs(events, status, lang),
        lambda: divergence.fingerprint_mismatch(events, hosts, lang),
        lambda: divergence.traceback_divergence(events, hosts, lang),
        lambda: flight_dumps.not_reached(events, hosts, lang),
        lambda: flight_dumps.mismatched(events, hosts, lang),
        lambda: flight_dumps.missing_dumps(events, ws.size, hosts, dead, lang),
        lambda: flight_dumps.analyser_report(events, hosts, lang),
        lambda: first_failure.first_failure(events, lang),
        lambda: stragglers.late_hosts(events, lang),
        lambda: activity.busy_while_waiting(events, ws.seen, status, hosts, lang, summaries),
        lambda: main_first.waiting_for_main(events, hosts, dead, lang),
        lambda: activity.gloo_absent(events, ws.size, status, hosts, lang),
        lambda: activity.slow_steps(events, hosts, lang),
        lambda: activity.first_collective_hang(events, hosts, lang),
        lambda: activity.wallclock_kill(events, lang),
        lambda: config_diff.config_mismatch(events, lang),
        lambda: config_diff.transport_mismatch(events, lang),
        lambda: net_facts.net_mismatch(events, lang),
        lambda: masked_exit.masked_exit(events, lang),
        lambda: inner_error.inner_over_wrapper(events, lang),
        lambda: stacks.stuck_stacks(events, hosts, lang),
    ]
    if summaries is not None and summaries.height:
        steps += [
            lambda: opcounts.behind(summaries, events, hosts, lang),
            lambda: opcounts.divergence(summaries, events, hosts, lang),
            lambda: progress.stopped_first(summaries, events, hosts, lang),
            lambda: progress.socket_fallback(summaries, events, lang),
        ]
    for step in steps:
        try:
            found += step()
        except Exception as exc:  # one broken analysis must not cost the others
            PROBLEMS.append(f"analysis failed: {type(exc).__name__}: {exc}")
    return found
