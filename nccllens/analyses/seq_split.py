"""Ranks of one process group that time out at different points of its sequence of collectives.

Each rank's watchdog names the work it timed out in (``WorkNCCL(SeqNum=S, OpType=...)``). Collectives are
matched by order: ranks in step time out in the same work. When they name different works of one group,
their sequences of collectives diverged: one rank issued collectives the other did not (an extra all-gather
on one side, a skipped one on the other), and each waits in a work its peers will never join. The taxonomy's
"differing last enqueued SeqNum across ranks". ``collectives.absent_from_collective`` already names ranks
that stay behind a work two or more others wait in; this is the rest: ranks ahead of the others, and splits
with no majority (two ranks, or halves), where rank 0 alone on its side is the one (``common.odd_side``).
"""

from __future__ import annotations

import polars as pl

from nccllens.analyses.collectives import BEHIND_AT_MOST, stuck_works
from nccllens.analyses.common import hosts_of, make_finding, odd_side
from nccllens.analyses.reads import reads
from nccllens.report.model import Finding

_P2P = "(?i)SEND|RECV"  # point-to-point works are numbered per pair: their numbers differ by design


@reads("torch.watchdog_timeout")
def seq_split(events: pl.DataFrame, rank_hosts: dict[int, str], lang: str) -> list[Finding]:
    """One finding per process group whose ranks time out in different works."""
    own = stuck_works(events).filter((pl.col("kind") == "torch.watchdog_timeout")
                                     & ~pl.col("op").cast(pl.String).fill_null("").str.contains(_P2P))
    out = []
    for (pgk, _), group in own.group_by(["pgk", "tmo"], maintain_order=True):
        first = group.sort("seq").group_by("rank", maintain_order=True).agg(pl.col("seq").first(), pl.col("op").first())
        seqs = dict(zip(first["rank"].to_list(), first["seq"].to_list(), strict=True))
        if len(seqs) < 2 or len(set(seqs.values())) < 2 or max(seqs.values()) - min(seqs.values()) > BEHIND_AT_MOST:
            continue
        ranks, top, decided = odd_side(seqs)
        majority_side = [r for r, s in seqs.items() if s == top]
        if decided and len(majority_side) >= 2 and all(seqs[r] < top for r in ranks):
            continue  # behind a work two or more others wait in: absent_from_collective names them
        ops = dict(zip(first["rank"].to_list(), first["op"].to_list(), strict=True))
        works = ", ".join(f"{r}:{seqs[r]}" + (f" ({ops[r]})" if ops[r] else "") for r in sorted(seqs)[:16])
        evidence = group.filter(pl.col("rank").is_in(sorted(seqs)))
        out.append(make_finding("AN-SEQ-SPLIT", lang, evidence, ranks=ranks, hosts=hosts_of(ranks, rank_hosts),
                                confidence=0.7 if decided else 0.5, pg=pgk, works=works))
    return out
