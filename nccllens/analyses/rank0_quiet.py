"""Rank 0 missing from the ranks that timed out: the rank the others waited for is most likely rank 0.

A collective completes only when every member enters it, so a rank that never reports the timeout its
peers report was not waiting in it: it was late, elsewhere, or gone. When the logs show watchdog timeouts
from some ranks, none from rank 0, and no error from rank 0, rank 0 is the first suspect: it is where
training scripts put the work the others do not do (saving a checkpoint, evaluating, writing logs or
metrics, building a cache), and a paste of one rank's timeout seldom comes from rank 0 when rank 0 was the
one that was late. A suspect at low confidence, named only when nothing else explains the timeouts (no
error cause, and no analysis that found the absent rank from the world size): rank 0's own lines decide.
"""

from __future__ import annotations

import polars as pl

from nccllens.analyses.common import hosts_of, joined_ranks, make_finding, rank_list
from nccllens.report.model import Finding


def rank0_not_waiting(findings: list[Finding], events: pl.DataFrame, rank_hosts: dict[int, str],
                      lang: str) -> list[Finding]:
    """The suspicion, when no error-level cause among ``findings`` explains the timeouts already."""
    if any(f.role == "cause" and f.severity in ("error", "critical") for f in findings) or not events.height:
        return []
    waits = events.filter(pl.col("kind") == "torch.watchdog_timeout")
    ranks = waits["rank"].to_list()
    if not waits.height or any(r is None for r in ranks):
        return []  # a timeout whose rank the logs do not state may be rank 0's
    waiting = sorted({int(r) for r in ranks})
    if 0 in waiting or 0 in joined_ranks(events):
        return []  # rank 0 waited too (the desync report may be the only line that says so)
    own = events.filter((pl.col("rank") == 0) & pl.col("level").is_in(["error", "critical"]))
    if own.height:
        return []  # rank 0 failed on its own: that finding is the story
    first = waits.sort(["ts", "file", "line"], nulls_last=True).head(3)
    return [make_finding("AN-RANK0-NOT-WAITING", lang, first, ranks=[0], hosts=hosts_of([0], rank_hosts),
                         waiting=rank_list(waiting))]
