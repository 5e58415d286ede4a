"""A node that joins far later than the rest (first line, rendezvous, NCCL init)."""

from __future__ import annotations

import bisect

import polars as pl

from nccllens.analyses.common import make_finding
from nccllens.events import earliest_first
from nccllens.report.model import Finding

START_FAMILIES = ("torchrun", "nccl", "torch", "python")
LATE_SECONDS = 60.0  # always late
MIN_LATE_SECONDS = 10.0  # late if also > FACTOR x the others' typical lateness
FACTOR = 5.0


def typical_of_others(late: dict[str, float]) -> list[tuple[str, float, float]]:
    """(host, its lateness, the median lateness of the other hosts), by host. The others' median is read
    from one sorted list: leaving out a value at or before the middle moves the middle one place on."""
    ordered = sorted(late.values())
    middle = (len(ordered) - 1) // 2
    out = []
    for host, seconds in sorted(late.items()):
        gone = bisect.bisect_left(ordered, seconds)
        out.append((host, seconds, ordered[middle + 1] if gone <= middle else ordered[middle]))
    return out


def late_hosts(events: pl.DataFrame, lang: str) -> list[Finding]:
    # a node's start: its first ordinary line; failure reports (tables, tracebacks, errors) say when it
    # ended, and a node whose first timestamp is its failure table did not start late
    starts = (events.filter(pl.col("family").is_in(START_FAMILIES) & pl.col("ts").is_not_null()
                            & pl.col("host").is_not_null() & ~pl.col("level").is_in(["error", "critical"])
                            & ~pl.col("kind").is_in(["torchrun.root_cause", "torchrun.failure",
                                                     "torchrun.worker_failed", "torchrun.sigterm_sent"]))
              .sort(earliest_first()).group_by("host", maintain_order=True).first())
    if starts.height < 2:
        return []
    earliest = starts["ts"].min()
    late = {h: (t - earliest).total_seconds() for h, t in starts.select("host", "ts").iter_rows()}
    out = []
    for host, seconds, typical in typical_of_others(late):
        if seconds > LATE_SECONDS or (seconds >= MIN_LATE_SECONDS and seconds > FACTOR * typical):
            evidence = pl.concat([starts.filter(pl.col("host") == host), starts.sort("ts").head(1)])
            rank_rows = events.filter((pl.col("host") == host) & pl.col("rank").is_not_null())
            ranks = sorted(set(rank_rows["rank"].to_list()))
            out.append(make_finding("AN-STRAGGLER", lang, evidence, ranks=ranks, hosts=[host],
                                    first_seen=starts.filter(pl.col("host") == host)["ts"][0],
                                    host=host, seconds=f"{seconds:.0f}", typical=f"{typical:.0f}"))
    return out
