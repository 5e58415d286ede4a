"""Cross-rank analyses: each a function of the event table (and the job model) → findings.

``run_all(events, lang)`` runs them all; every finding's id is ``AN-...`` and its texts live in
``texts.toml`` (English and Chinese), not in Python.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import TYPE_CHECKING

import polars as pl

from nccllens.analyses.reads import can_find
from nccllens.report.model import Finding, JobModel, RankStatus

if TYPE_CHECKING:
    from nccllens.job import WorldSize

PROBLEMS: list[str] = []  # analyses that raised (a bug): reported by tests, never fatal to a run


def run_all(events: pl.DataFrame, lang: str = "en", job: JobModel | None = None,
            status: list[RankStatus] | None = None, summaries: pl.DataFrame | None = None,
            ws: WorldSize | None = None, skip: bool = True) -> list[Finding]:
    """Every analysis's findings. ``job``, ``status`` and ``ws`` are ``build_job(events)``,
    ``rank_status(events, job)`` and ``world_size(events)`` when the caller has them already
    (``run_analysis`` does); ``summaries`` is the summary table of the dense families
    (``nccllens.summaries``), when the caller has one. An analysis whose declared inputs are all absent
    (``analyses.reads``) is skipped, unless ``skip`` is False (tests compare both)."""
    from nccllens.timeline import normalize

    if not events.height:
        return []
    events = normalize(events)
    kinds = set(events.get_column("kind").cast(pl.String).unique().drop_nulls().to_list())
    families: set[str] = set()
    if summaries is not None and summaries.height:
        families = set(summaries.get_column("family").cast(pl.String).unique().drop_nulls().to_list())
    found: list[Finding] = []
    for fn, args in steps(events, lang, job, status, summaries, ws):
        if skip and not can_find(fn, kinds, families):
            continue
        try:
            found += fn(*args())
        except Exception as exc:  # one broken analysis must not cost the others
            PROBLEMS.append(f"analysis failed: {type(exc).__name__}: {exc}")
    return found


def steps(events: pl.DataFrame, lang: str, job: JobModel | None = None, status: list[RankStatus] | None = None,
          summaries: pl.DataFrame | None = None, ws: WorldSize | None = None) -> list[tuple[Callable, Callable]]:
    """Each analysis and what it is called with (computed when it runs: nothing for a skipped one), in the
    order ``run_all`` runs them. ``events`` is normalized (``timeline.normalize``)."""
    from nccllens.analyses import (
        activity,
        bench_members,
        collectives,
        config_diff,
        ctrl_c,
        divergence,
        first_collective,
        first_failure,
        flight_dumps,
        inner_error,
        ipoib_sockets,
        main_first,
        masked_exit,
        missing,
        net_facts,
        opcounts,
        progress,
        seq_split,
        slow_steps,
        stacks,
        stragglers,
    )
    from nccllens.job import build_job, world_size
    from nccllens.rank_status import rank_status

    ws = world_size(events) if ws is None else ws
    job = build_job(events, ws) if job is None else job
    status = rank_status(events, job) if status is None else status
    hosts = {int(r): h for r, h in job.rank_hosts.items()}  # ``job.rank_hosts(events)``, keyed by rank
    seen = set(job.ranks_seen)
    dead = functools.cache(lambda: activity.dead_ranks(events, status))  # gone on their own, not stopped or left behind
    out: list[tuple[Callable, Callable]] = [
        (collectives.absent_from_collective, lambda: (events, ws.size, hosts, seen, lang, dead())),
        (collectives.op_divergence, lambda: (events, hosts, lang)),
        (seq_split.seq_split, lambda: (events, hosts, lang)),
        (collectives.enqueue_lead, lambda: (events, hosts, lang)),
        (collectives.ras_mismatch, lambda: (events, hosts, lang)),
        (missing.node_never_joined, lambda: (events, ws, lang)),
        (missing.store_key_rank, lambda: (events, hosts, lang)),
        (missing.store_barrier_stuck, lambda: (events, hosts, lang)),
        (missing.silent_ranks, lambda: (events, status, lang)),
        (missing.silent_hosts, lambda: (events, ws, status, lang)),
        (missing.no_logs, lambda: (events, status, lang)),
        (divergence.fingerprint_mismatch, lambda: (events, hosts, lang)),
        (divergence.running_mismatch, lambda: (events, hosts, lang)),
        (divergence.traceback_divergence, lambda: (events, hosts, lang)),
        (flight_dumps.not_reached, lambda: (events, hosts, lang)),
        (flight_dumps.mismatched, lambda: (events, hosts, lang)),
        (flight_dumps.missing_dumps, lambda: (events, ws.size, hosts, dead(), lang)),
        (flight_dumps.analyser_report, lambda: (events, hosts, lang)),
        (first_failure.first_failure, lambda: (events, lang)),
        (stragglers.late_hosts, lambda: (events, lang)),
        (activity.busy_while_waiting, lambda: (events, ws.seen, status, hosts, lang, summaries)),
        (main_first.waiting_for_main, lambda: (events, hosts, dead(), lang)),
        (activity.gloo_absent, lambda: (events, ws.size, status, hosts, lang)),
        (slow_steps.slow_steps, lambda: (events, hosts, lang)),
        (first_collective.first_collective_hang, lambda: (events, hosts, lang, ws.size, summaries)),
        (first_collective.wallclock_kill, lambda: (events, lang)),
        (config_diff.config_mismatch, lambda: (events, lang)),
        (config_diff.transport_mismatch, lambda: (events, lang)),
        (net_facts.net_mismatch, lambda: (events, lang)),
        (net_facts.shared_hostname, lambda: (events, lang)),
        (bench_members.separate_processes, lambda: (events, lang)),
        (masked_exit.masked_exit, lambda: (events, lang)),
        (inner_error.inner_over_wrapper, lambda: (events, lang)),
        (stacks.stuck_stacks, lambda: (events, hosts, lang)),
        (ctrl_c.interrupted_elsewhere, lambda: (events, hosts, lang)),
    ]
    if summaries is not None and summaries.height:
        out += [
            (opcounts.behind, lambda: (summaries, events, hosts, lang)),
            (opcounts.divergence, lambda: (summaries, events, hosts, lang)),
            (progress.stopped_first, lambda: (summaries, events, hosts, lang)),
            (progress.socket_fallback, lambda: (summaries, events, lang)),
            (ipoib_sockets.sockets_beside_ipoib, lambda: (summaries, events, lang)),
        ]
    return out
