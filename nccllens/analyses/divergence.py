"""Ranks that stopped issuing the same collectives: fingerprint mismatches and the op each rank died in."""

from __future__ import annotations

import polars as pl

from nccllens.analyses.common import hosts_of, majority, make_finding, odd_side
from nccllens.analyses.reads import reads
from nccllens.events import earliest_first
from nccllens.report.model import Finding

# The c10d function a rank was inside when it failed, from the last frames of its traceback
# (``torch/distributed/distributed_c10d.py:3252 in all_reduce``) or a failure table's traceback.
C10D_FRAME = r"distributed_c10d\.py:\d+ in (\w+)"
TRACEBACK_KINDS = ("python.traceback", "torchrun.failure", "torchrun.root_cause")
# the collectives a rank can be inside when it fails (not the set-up functions: a process group that
# could not be created on a restart is no different collective)
COLLECTIVES = ("all_reduce", "all_gather", "all_gather_into_tensor", "all_gather_object", "reduce_scatter",
               "reduce_scatter_tensor", "broadcast", "broadcast_object_list", "barrier", "monitored_barrier",
               "reduce", "gather", "gather_object", "scatter", "scatter_object_list", "all_to_all",
               "all_to_all_single", "send", "recv", "isend", "irecv", "batch_isend_irecv")


@reads("torch.fingerprint_mismatch", "torch.fingerprint_peer")
def fingerprint_mismatch(events: pl.DataFrame, rank_hosts: dict[int, str], lang: str) -> list[Finding]:
    """``TORCH_DISTRIBUTED_DEBUG=DETAIL``: each rank states the op it ran at the mismatching SequenceNumber."""
    hits = events.filter((pl.col("kind") == "torch.fingerprint_mismatch") & pl.col("rank").is_not_null()
                         & pl.col("op").is_not_null())
    # what a rank was told another runs stands for that rank when it printed nothing itself
    told = events.filter((pl.col("kind") == "torch.fingerprint_peer") & pl.col("rank").is_not_null()
                         & pl.col("op").is_not_null() & ~pl.col("rank").is_in(hits["rank"].implode()))
    if told.height:
        hits = pl.concat([hits, told.unique(["rank"], keep="first", maintain_order=True)], how="vertical_relaxed")
    behind = _behind(hits)
    if behind is not None:
        return [behind_finding(behind, hits, rank_hosts, lang)]
    out = []
    for (seq,), group in hits.group_by(["seq"], maintain_order=True):
        ops = dict(group.group_by("rank").agg(pl.col("op").first()).iter_rows())
        if len(set(ops.values())) < 2:
            continue
        out.append(_odd_finding(ops, group, seq, rank_hosts, lang, confidence=(0.9, 0.55)))
    return out


@reads("torch.fingerprint_running", "torch.fingerprint_mismatch")
def running_mismatch(events: pl.DataFrame, rank_hosts: dict[int, str], lang: str) -> list[Finding]:
    """DETAIL at INFO level prints each rank's fingerprint of every collective it starts (``Running collective``):
    at the first sequence number where the ranks' op, shapes or dtypes differ, the minority went its own way."""
    runs = events.filter((pl.col("kind") == "torch.fingerprint_running") & pl.col("rank").is_not_null()
                         & pl.col("seq").is_not_null() & pl.col("value").is_not_null())
    if runs.height < 2 or events.filter(pl.col("kind") == "torch.fingerprint_mismatch").height:
        return []  # (the mismatch error itself says it, from the ranks that raised it)
    differ = (runs.group_by("seq").agg(pl.col("value").n_unique().alias("n"), pl.col("rank").n_unique().alias("r"))
              .filter((pl.col("n") > 1) & (pl.col("r") > 1)))
    if not differ.height:
        return []
    seq = int(differ["seq"].min())
    group = runs.filter(pl.col("seq") == seq)
    keys = dict(group.group_by("rank").agg(pl.col("value").first()).iter_rows())
    return [_odd_finding(keys, group, seq, rank_hosts, lang, confidence=(0.85, 0.5))]


def _odd_finding(ops: dict, group: pl.DataFrame, seq: int, rank_hosts: dict[int, str], lang: str,
                 confidence: tuple[float, float]) -> Finding:
    """AN-FINGERPRINT-MISMATCH for the ranks that went their own way at ``seq`` (``confidence``: with a majority,
    without one)."""
    ranks, op, decided = odd_side(ops)
    return make_finding("AN-FINGERPRINT-MISMATCH", lang, group.filter(pl.col("rank").is_in(ranks)), ranks=ranks,
                        hosts=hosts_of(ranks, rank_hosts), seq=seq, op=op,
                        odd_op=", ".join(sorted({ops[r] for r in ranks})), confidence=confidence[0 if decided else 1])


def _behind(hits: pl.DataFrame) -> int | None:
    """The one rank whose fingerprint counts fewer collectives than every other rank's (its SequenceNumber is
    the lowest, each of the others at one same higher number): it skipped collectives the others issued."""
    seqs = dict(hits.filter(pl.col("seq").is_not_null()).group_by("rank").agg(pl.col("seq").first()).iter_rows())
    if len(seqs) < 2 or len(set(seqs.values())) != 2:
        return None
    low = min(seqs.values())
    lows = [r for r, s in seqs.items() if s == low]
    return lows[0] if len(lows) == 1 else None


def behind_finding(rank: int, hits: pl.DataFrame, rank_hosts: dict[int, str], lang: str) -> Finding:
    mine = hits.filter(pl.col("rank") == rank).row(0, named=True)
    others = hits.filter((pl.col("rank") != rank) & pl.col("seq").is_not_null())
    top = others.row(0, named=True)
    return make_finding("AN-FINGERPRINT-MISMATCH", lang, hits, ranks=[rank], hosts=hosts_of([rank], rank_hosts),
                        seq=top["seq"], op=f"{top['op']}", odd_op=f"{mine['op']} (SequenceNumber {mine['seq']})",
                        confidence=0.6)


@reads(*TRACEBACK_KINDS)
def traceback_divergence(events: pl.DataFrame, rank_hosts: dict[int, str], lang: str) -> list[Finding]:
    """Failed ranks whose tracebacks end in different c10d collectives: the odd one out diverged."""
    frames = (events.filter(pl.col("kind").is_in(TRACEBACK_KINDS) & pl.col("rank").is_not_null()
                            & pl.col("detail").is_not_null())
              .with_columns(pl.col("detail").str.extract_all(C10D_FRAME).list.last().alias("frame"))
              .filter(pl.col("frame").is_not_null())
              .with_columns(pl.col("frame").str.extract(C10D_FRAME, 1).alias("collective"))
              .filter(pl.col("collective").is_in(COLLECTIVES)))
    if not frames.height:
        return []
    # one attempt at a time: after a restart the ranks fail somewhere else, which is no divergence
    first_attempt = frames["attempt"].drop_nulls().min()
    if first_attempt is not None:
        frames = frames.filter(pl.col("attempt").is_null() | (pl.col("attempt") == first_attempt))
    ops = dict(frames.sort(earliest_first(), nulls_last=True).group_by("rank").agg(
        pl.col("collective").first()).iter_rows())
    if len(ops) < 3 or len(set(ops.values())) < 2:
        return []
    top, odd = majority(ops)
    if top is None or not odd:
        return []
    evidence = frames.filter(pl.col("rank").is_in(odd)).unique(["rank"], keep="first", maintain_order=True)
    return [make_finding(
        "AN-TRACEBACK-DIVERGENCE", lang, evidence, ranks=odd, hosts=hosts_of(odd, rank_hosts), op=top,
        odd_op=", ".join(sorted({ops[r] for r in odd})), others=len(ops) - len(odd))]
