"""Per communicator, the ranks' last NCCL opCount (``NCCL_DEBUG_SUBSYS=COLL`` summaries).

Every rank of a communicator issues the same collectives in the same order, so their opCounts
advance together (shared/reference/nccl_logs.md §2: "the last opCount per (rank, comm) is the best
log-only straggler signal"). At the end of the logs:

- ranks whose last opCount is behind every other rank's never issued the collective the others
  wait in: absent. A rank whose log goes on after its last operation was alive (a straggler: data
  loading, checkpointing, a slow GPU); one whose log ends there died or hung with it (peer_exited);
- ranks at the same last opCount whose op, count or datatype differ took different code paths: the
  minority diverged (rank_divergence).

A communicator is recognised across ranks by the ``commId`` of the Init lines of each process (the
``comm`` pointer printed per operation is process-local); without Init lines, by its size when a
process has one communicator of that size. A member is its rank; where no line states the ranks of a
communicator's processes (a paste of the COLL lines alone, whose ``[dev]`` is a CUDA device, never a rank), the
divergence is still told by process (``host:pid``), and named so.
"""

from __future__ import annotations

import polars as pl

from nccllens.analyses.common import (
    NONE,
    PerLang,
    alive_after,
    hosts_of,
    majority,
    make_finding,
    rank_list,
    summary_evidence,
)
from nccllens.analyses.reads import reads
from nccllens.engine.findings import compact_ranks
from nccllens.report.model import Finding

ABSENT_SHARE = 0.25  # more ranks behind than this share of a communicator: no single culprit


def _communicators(coll: pl.DataFrame, events: pl.DataFrame) -> pl.DataFrame:
    """``coll`` with ``comm`` (the communicator, the same on every member) and ``member`` (its rank)."""
    init = (events.filter(pl.col("kind").is_in(["nccl.init_start", "nccl.init_complete"])
                          & pl.col("detail").is_not_null() & pl.col("pid").is_not_null())
            .select(pl.col("host"), pl.col("pid"), pl.col("detail").str.extract(r"^comm (\S+)").alias("key"),
                    pl.col("comm_id").cast(pl.String).alias("comm_id"),
                    pl.col("detail").str.extract(r" rank (\d+)").cast(pl.Int32).alias("comm_rank"))
            .filter(pl.col("key").is_not_null()).unique(["host", "pid", "key"], keep="last"))
    out = coll.join(init, on=["host", "pid", "key"], how="left", maintain_order="left") if init.height else \
        coll.with_columns(pl.lit(None, pl.String).alias("comm_id"), pl.lit(None, pl.Int32).alias("comm_rank"))
    # without an Init line: one communicator of that size in the process stands for itself
    alone = pl.col("key").n_unique().over(["file", "pid", "nranks"]) == 1
    by_size = pl.when(alone).then(pl.format("nranks={}", pl.col("nranks")))
    return out.with_columns(pl.coalesce(pl.col("comm_id"), by_size).alias("comm"),
                            pl.coalesce(pl.col("rank"), pl.col("comm_rank")).alias("member"),
                            pl.format("{}:{}", pl.col("host").cast(pl.String), pl.col("pid")).alias("proc"))


@reads(summaries=("nccl.coll",))
def behind(summaries: pl.DataFrame, events: pl.DataFrame, rank_hosts: dict[int, str], lang: str) -> list[Finding]:
    """Ranks whose last opCount on a communicator is behind every other member's."""
    coll = summaries.filter((pl.col("family") == "nccl.coll") & pl.col("last_seq").is_not_null())
    if not coll.height:
        return []
    coll = _communicators(coll, events).filter(pl.col("comm").is_not_null() & pl.col("member").is_not_null())
    found: dict[tuple[int, ...], list] = {}  # the same ranks behind on several communicators: one finding
    for (comm,), group in coll.group_by(["comm"], maintain_order=True):
        last = group.sort("last_seq").group_by("member", maintain_order=True).agg(pl.all().last())
        if last.height < 3:
            continue
        top = int(last["last_seq"].max())
        late = last.filter(pl.col("last_seq") < top)
        if not late.height or late.height > max(1, ABSENT_SHARE * last.height):
            continue
        ranks = tuple(sorted(int(r) for r in late["member"]))
        if ranks not in found:
            found[ranks] = [comm, top, last.height, late, last.filter(pl.col("last_seq") == top).head(2), []]
        else:
            found[ranks][5].append(comm)
    out = []
    for ranks, (comm, top, members, late, ahead, more) in found.items():
        dead = [r for r in ranks if r not in alive_after(summaries, events, late)]
        also = f" (and {len(more)} more: {', '.join(more[:4])})" if more else ""
        out.append(make_finding(
            "AN-OPCOUNT-BEHIND", lang, summary_evidence(pl.concat([late, ahead])), ranks=ranks,
            hosts=hosts_of(ranks, rank_hosts), category="peer_exited" if dead else "straggler", comm=comm + also,
            top=f"{top:x}", members=members, state=rank_list(dead) if dead else NONE,
            behind=", ".join(f"{r}:{int(s):x}" for r, s in list(zip(late["member"], late["last_seq"], strict=True))[:16]),
            confidence=0.75 if len(ranks) == 1 else 0.65))
    return out


@reads(summaries=("nccl.coll",))
def divergence(summaries: pl.DataFrame, events: pl.DataFrame, rank_hosts: dict[int, str],
               lang: str) -> list[Finding]:
    """Ranks at the same last opCount of a communicator with a different op, count or datatype."""
    coll = summaries.filter((pl.col("family") == "nccl.coll") & pl.col("last_seq").is_not_null())
    if not coll.height:
        return []
    coll = _communicators(coll, events).filter(pl.col("comm").is_not_null()
                                               & (pl.col("member").is_not_null() | pl.col("proc").is_not_null()))
    # only the (communicator, opCount) groups where a majority can have a minority are read in Python: three
    # rows or more, holding more than one call (a job of many small files has thousands of groups, nearly all not)
    can_differ = coll.group_by(["comm", "last_seq"]).agg(
        ((pl.len() >= 3) & (pl.struct("op", "size", "dtype").n_unique() > 1)).alias("may_differ")).filter("may_differ")
    coll = coll.join(can_differ.select("comm", "last_seq"), on=["comm", "last_seq"], how="semi", maintain_order="left")
    out = []
    for (comm, seq), group in coll.group_by(["comm", "last_seq"], maintain_order=True):
        ranked = group["member"].is_not_null().all()  # else every member by its process
        who = "member" if ranked else "proc"
        calls = {(int(r) if ranked else str(r)): f"{op} count {size} datatype {dt}" for r, op, size, dt in
                 group.select(who, "op", "size", "dtype").iter_rows()}
        if len(calls) < 3:
            continue
        usual, odd = majority(calls)
        if usual is None or not odd:
            continue
        odd_rows = group.filter(pl.col(who).is_in(odd))
        evidence = summary_evidence(odd_rows.vstack(group.filter(~pl.col(who).is_in(odd)).head(2)))
        ranks = odd if ranked else []
        hosts = hosts_of(ranks, rank_hosts) if ranked else odd_rows["host"].cast(pl.String).drop_nulls().to_list()
        out.append(make_finding(
            "AN-OPCOUNT-DIVERGENCE", lang, evidence, ranks=ranks, hosts=hosts, comm=comm,
            seq=f"{int(seq):x}", usual=usual, odd_calls="; ".join(f"{r}: {calls[r]}" for r in odd[:8]),
            odd=_named(odd, ranked, lower=True), odd_title=_named(odd, ranked, lower=False)))
    return out


def _named(odd: list, ranked: bool, lower: bool) -> PerLang:
    """The odd members in prose: ranks, or the processes (``host:pid``) where no rank is stated."""
    if ranked:
        ranks = compact_ranks(sorted(odd))
        return PerLang(en=f"{'r' if lower else 'R'}ank(s) {ranks}", zh=f"rank {ranks}")
    procs = ", ".join(str(p) for p in odd[:8])
    return PerLang(en=f"{'p' if lower else 'P'}rocess(es) {procs}", zh=f"进程 {procs}")
