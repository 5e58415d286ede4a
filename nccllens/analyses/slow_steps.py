"""A straggler that fails nothing: a run whose ranks state per-step durations (``compute 0.60s``, ``forward:
123.4`` ms) where one rank's work per step is several times the others'. Waiting times (``sync``, ``wait``,
``comm``) are left out: the fast ranks are the ones that wait."""

from __future__ import annotations

import polars as pl

from nccllens import lazy_regex
from nccllens.analyses.common import hosts_of, make_finding
from nccllens.analyses.reads import reads
from nccllens.report.model import Finding

WAIT_LABEL = lazy_regex.compile(r"wait|sync|comm|idle|barrier|allreduce|all_reduce|block|stall")
SLOW_FACTOR = 3.0  # a rank's median work per step this many times the others' median
SLOW_MIN_SECONDS = 0.05  # and at least this much more per step, in absolute terms
MIN_STEPS = 3


def _step_work(events: pl.DataFrame) -> dict[str, dict[int, list[float]]]:
    """label → rank → seconds per step, for the work (not waiting) durations that step lines state."""
    rows = events.filter((pl.col("kind") == "progress.step") & pl.col("rank").is_not_null()
                         & pl.col("detail").is_not_null())
    out: dict[str, dict[int, list[float]]] = {}
    for rank, detail in rows.select("rank", "detail").iter_rows():
        for pair in detail.split():
            label, _, value = pair.partition("=")
            if not value or WAIT_LABEL.search(label):
                continue
            try:
                out.setdefault(label, {}).setdefault(int(rank), []).append(float(value))
            except ValueError:
                continue
    return out


def _slow_group(medians: dict[int, float], rank_hosts: dict[int, str]) -> list[int]:
    """The ranks above the widest gap between the per-rank medians (at least SLOW_FACTOR times and
    SLOW_MIN_SECONDS more): a minority of the ranks, or every rank of some node(s) but not of all."""
    ordered = sorted(medians.items(), key=lambda item: item[1])
    best, cut = 0.0, None
    for i in range(len(ordered) - 1):
        low, high = ordered[i][1], ordered[i + 1][1]
        ratio = high / max(low, 0.01)
        if high - low >= SLOW_MIN_SECONDS and ratio >= SLOW_FACTOR and ratio > best:
            best, cut = ratio, i + 1
    if cut is None:
        return []
    slow = sorted(r for r, _ in ordered[cut:])
    if len(slow) * 2 < len(ordered):
        return slow
    hosts = {rank_hosts.get(r) for r in medians}
    slow_hosts = {rank_hosts.get(r) for r in slow}
    whole = None not in hosts and all(rank_hosts.get(r) not in slow_hosts for r in medians if r not in slow)
    return slow if whole and slow_hosts < hosts else []


@reads("progress.step")
def slow_steps(events: pl.DataFrame, rank_hosts: dict[int, str], lang: str) -> list[Finding]:
    best: tuple[float, str, list[int], float, float] | None = None
    for label, per_rank in _step_work(events).items():
        enough = [(r, v) for r, v in per_rank.items() if len(v) >= MIN_STEPS]
        if len(enough) < 2:
            continue
        import statistics  # here, with fractions: 3-20 ms of start-up that most runs do not need

        medians = {r: statistics.median(v) for r, v in enough}
        slow = _slow_group(medians, rank_hosts)
        if not slow:
            continue
        mine = statistics.median(medians[r] for r in slow)
        typical = statistics.median(m for r, m in medians.items() if r not in slow)
        factor = mine / max(typical, 0.01)
        if best is None or factor > best[0]:
            best = (factor, label, slow, mine, typical)
    if best is None:
        return []
    factor, label, ranks, mine, typical = best
    evidence = (events.filter((pl.col("kind") == "progress.step") & pl.col("rank").is_in(ranks))
                .sort(["file", "line"]).tail(3))
    return [make_finding(
        "AN-SLOW-RANK", lang, evidence, ranks=ranks, hosts=hosts_of(ranks, rank_hosts), label=label,
        mine=f"{mine:.2f} s", typical=f"{typical:.2f} s", factor=f"{factor:.0f}")]
