"""Training progress per rank and NCCL transports per host, from the summaries of the dense families.

- The rank whose progress stopped first: each rank's last training step (``step N``, Megatron
  ``iteration N/``, tqdm) and its time; a minority whose last step is behind everyone else's, or
  whose last progress line is long before everyone else's, is where the hang began. Alive after it
  (its log goes on): a straggler; its log ends there: it died (peer_exited).
- Transports per host: the NCCL connections every host set up (IB, Socket, SHM, P2P), from the
  ``Channel … via …`` summaries; a host that connected over sockets where the others used IB fell
  back (``AN-TRANSPORT-MISMATCH`` says the same from ``Using network`` lines, when the logs have them).
"""

from __future__ import annotations

import polars as pl

from nccllens.analyses.common import NONE, alive_after, hosts_of, make_finding, rank_list, summary_evidence
from nccllens.analyses.reads import reads
from nccllens.report.model import Finding

STOPPED_SHARE = 0.25  # more ranks than this behind: no single place where the hang began
MIN_GAP_S = 60.0  # a rank's last progress this much before the others' (and 3 of its own intervals)


def _per_rank(summaries: pl.DataFrame) -> pl.DataFrame:
    """One progress row per rank: the shape it printed most."""
    prog = summaries.filter((pl.col("family") == "progress") & pl.col("rank").is_not_null())
    return (prog.sort("count", descending=True).group_by("rank", maintain_order=True).agg(pl.all().first())
            .rename({"rank": "member"}).sort("member"))


def _stopped(ranks: pl.DataFrame) -> tuple[list[int], str]:
    """The minority that stopped first, and how that shows (by step, or by time)."""
    top = ranks["last_seq"].drop_nulls()
    if len(top):
        usual = top.mode().max()
        late = ranks.filter(pl.col("last_seq") < usual)
        if late.height and (ranks["last_seq"] == usual).sum() > ranks.height / 2:
            return sorted(int(r) for r in late["member"]), f"step {usual}"
    timed = ranks.filter(pl.col("last_ts").is_not_null() & pl.col("first_ts").is_not_null() & (pl.col("count") > 1))
    if timed.height < 3:
        return [], ""
    interval = ((pl.col("last_ts") - pl.col("first_ts")).dt.total_microseconds() / 1e6 / (pl.col("count") - 1))
    timed = timed.with_columns(interval.alias("interval"))
    latest = timed["last_ts"].max()
    gap = (pl.lit(latest) - pl.col("last_ts")).dt.total_microseconds() / 1e6
    early = timed.filter(gap > pl.max_horizontal(pl.lit(MIN_GAP_S), 3 * pl.col("interval")))
    return sorted(int(r) for r in early["member"]), f"{latest}"


@reads(summaries=("progress",))
def stopped_first(summaries: pl.DataFrame, events: pl.DataFrame, rank_hosts: dict[int, str],
                  lang: str) -> list[Finding]:
    ranks = _per_rank(summaries)
    if ranks.height < 3:
        return []
    stopped, reached = _stopped(ranks)
    if not stopped or len(stopped) > max(1, STOPPED_SHARE * ranks.height):
        return []
    rows = ranks.filter(pl.col("member").is_in(stopped))
    dead = [r for r in stopped if r not in alive_after(summaries, events, rows)]
    others = ranks.filter(~pl.col("member").is_in(stopped)).sort("last_seq", descending=True, nulls_last=True)
    last = ", ".join(f"{r}: {s if s is not None else '?'}" for r, s in rows.select("member", "last_seq").iter_rows())
    return [make_finding(
        "AN-PROGRESS-STOPPED", lang, summary_evidence(pl.concat([rows, others.head(2)])), ranks=stopped,
        hosts=hosts_of(stopped, rank_hosts), category="peer_exited" if dead else "straggler", last=last,
        reached=reached, others=others.height, state=rank_list(dead) if dead else NONE,
        confidence=0.6 if len(stopped) == 1 else 0.5)]


def transport_class(via: pl.Expr) -> pl.Expr:
    """``NET/IB/0/GDRDMA`` → IB, ``NET/Socket/1`` → Socket, ``SHM/direct/direct`` → SHM, ``P2P/…`` → P2P;
    another net plugin keeps its name (``NET/AWS Libfabric`` → AWS Libfabric)."""
    return (pl.when(via.str.starts_with("NET/IB")).then(pl.lit("IB"))
            .when(via.str.starts_with("NET/Socket")).then(pl.lit("Socket"))
            .when(via.str.starts_with("SHM/") | via.str.starts_with("direct")).then(pl.lit("SHM"))
            .when(via.str.starts_with("P2P/")).then(pl.lit("P2P"))
            .otherwise(via.str.extract(r"^NET/([^/]+)", 1)))


def transports_by_host(summaries: pl.DataFrame) -> dict[str, list[str]]:
    """The transports each host's NCCL connections used, as the transport summaries show them."""
    rows = summaries.filter((pl.col("family") == "nccl.transport") & pl.col("host").is_not_null())
    if not rows.height:
        return {}
    per = rows.group_by("host").agg(transport_class(pl.col("key")).drop_nulls().unique().sort().alias("t"))
    return {str(h): list(t) for h, t in per.iter_rows()}


@reads(summaries=("nccl.transport",))
def socket_fallback(summaries: pl.DataFrame, events: pl.DataFrame, lang: str) -> list[Finding]:
    """Hosts whose network connections went over sockets while other hosts' went over IB."""
    used = transports_by_host(summaries)
    ib = sorted(h for h, t in used.items() if "IB" in t)
    socket = sorted(h for h, t in used.items() if "Socket" in t and "IB" not in t)
    if not ib or not socket:
        return []
    told = events.filter((pl.col("kind") == "nccl.using_network") & pl.col("host").is_in(socket))
    if told.height:  # the Using network lines already say it (AN-TRANSPORT-MISMATCH)
        return []
    rows = summaries.filter((pl.col("family") == "nccl.transport") & pl.col("host").is_in(socket)
                            & pl.col("key").str.starts_with("NET/Socket"))
    values = ", ".join(f"{h}={'+'.join(used[h])}" for h in sorted(used)[:8])
    return [make_finding("AN-TRANSPORT-FALLBACK", lang, summary_evidence(rows.head(5)), hosts=socket,
                         values=values, ib_hosts=len(ib))]
