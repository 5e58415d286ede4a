"""Who is absent from the collective everyone else waits in, and who issued a different one.

Signals (shared/reference/pytorch_c10d.md §2.2-2.4): the watchdog line names the stuck work
``SeqNum=S`` and its ``OpType``; the PG status line names S (``work sequence id``) and the rank's
last enqueued / completed work. A rank whose last enqueued work is below S never issued S; a rank
that every other rank waits for but that printed nothing at S is absent; ranks stuck at the same
S with different op types diverged.
"""

from __future__ import annotations

import polars as pl

from nccllens.analyses.common import (
    NONE,
    NOT_STATED,
    UNNAMED_OP,
    PerLang,
    hosts_of,
    majority,
    make_finding,
    odd_side,
    rank_list,
)
from nccllens.analyses.reads import reads
from nccllens.report.model import Finding

STUCK_KINDS = ("torch.watchdog_timeout", "torch.pg_status")
BEHIND_AT_MOST = 16  # collectives a rank's own timed-out work may trail the others' and still be this group's
NEVER_SEEN_SHARE = 0.25  # more absent ranks than this, never seen at all: missing logs, not a culprit


def stuck_works(events: pl.DataFrame) -> pl.DataFrame:
    """The stuck works, keyed by process group: its name where the line states it, and where unnamed works
    show two or more timeouts, the timeout too (one group's works share one timeout)."""
    return (events.filter(pl.col("kind").is_in(STUCK_KINDS) & pl.col("rank").is_not_null() & pl.col("seq").is_not_null())
            .with_columns(pl.coalesce(pl.col("pg"), pl.lit("0")).alias("pgk"))
            .with_columns(pl.when(pl.col("pg").is_null() & (pl.col("timeout_ms").drop_nulls().n_unique().over("pgk") > 1))
                          .then(pl.col("timeout_ms")).alias("tmo")))


def _behind_own_timeout(group: pl.DataFrame, seq: int, waiting: set[int]) -> set[int]:
    """Ranks whose own watchdog timed out a few collectives before the one two or more others wait in: they
    never reached it. One rank's view against another's says nothing about who is behind, numbers far
    apart are other runs or groups, and point-to-point works are left out (their numbers differ by design)."""
    if len(waiting) < 2:
        return set()
    own = group.filter((pl.col("kind") == "torch.watchdog_timeout") & pl.col("seq").is_between(seq - BEHIND_AT_MOST, seq - 1)
                       & ~pl.col("op").cast(pl.String).fill_null("").str.contains("(?i)SEND|RECV"))
    return set(own["rank"].to_list()) - waiting


def _category(culprits: set[int], dead, inferred: bool) -> str | None:
    """peer_exited for dead culprits; collective_timeout for a rank only inferred (never seen, no stated
    size): nothing says whether it diverged, died or is slow; else the finding's own (rank_divergence)."""
    if culprits <= set(dead):
        return "peer_exited"
    return "collective_timeout" if inferred else None


@reads(*STUCK_KINDS)
def absent_from_collective(events: pl.DataFrame, world: int | None, rank_hosts: dict[int, str],
                           ranks_seen: set[int], lang: str, dead: set[int] | frozenset = frozenset()) -> list[Finding]:
    """Ranks the others wait for. Dead ones (``dead``: exited or crashed on their own) make it peer_exited;
    busy ones are told by ``activity.busy_while_waiting``; otherwise it is the taxonomy's divergence."""
    stuck = stuck_works(events)
    if not stuck.height:
        return []
    out = []
    for (pgk, _), group in stuck.group_by(["pgk", "tmo"], maintain_order=True):
        per_rank = group.group_by("rank").agg(pl.col("seq").min())
        seq = int(per_rank["seq"].mode().sort()[-1])
        waiting = set(per_rank.filter(pl.col("seq") == seq)["rank"].to_list())
        status = group.filter((pl.col("kind") == "torch.pg_status") & pl.col("last_enqueued").is_not_null())
        laggers = set(status.filter(pl.col("last_enqueued") < seq)["rank"].to_list())
        laggers |= _behind_own_timeout(group, seq, waiting)
        absent: set[int] = set()
        default = pgk in ("0", "default_pg") or "default_pg" in pgk
        # without a stated size, the ranks below the highest one seen still exist (ranks count from 0):
        # an excerpt of ranks 1-3 timing out leaves rank 0, not a guess above them (one rank's timeout alone
        # is one rank's view: it says nothing about the others)
        size = world or (max(ranks_seen | waiting) + 1 if len(waiting) >= 2 else None)
        if size and default and len(waiting) >= max(1, size // 2):
            absent = set(range(size)) - waiting - laggers - set(per_rank["rank"].to_list())
            unseen = absent - ranks_seen
            # a rank whose own timeout shows it behind explains the wait; ranks that left no log say nothing
            if laggers or len(unseen) > max(1, NEVER_SEEN_SHARE * size):
                absent -= unseen  # these left no log at all: say so elsewhere, do not blame them
        culprits = laggers | absent
        if not culprits or len(culprits) >= max(len(waiting), 2):
            continue
        evidence = group.filter((pl.col("seq") == seq) | pl.col("rank").is_in(list(laggers)))
        ops = group.filter((pl.col("seq") == seq) & pl.col("op").is_not_null())["op"]
        op = ops.mode().sort()[0] if len(ops) else None
        confidence = 0.8 if laggers else (0.7 if absent <= ranks_seen else 0.55 if world else 0.45)
        out.append(make_finding(
            "AN-COLLECTIVE-ABSENT", lang, evidence, ranks=culprits, hosts=hosts_of(culprits, rank_hosts),
            confidence=confidence, category=_category(culprits, dead, inferred=not world and bool(absent - ranks_seen)),
            seq=seq, op=op or UNNAMED_OP, pg=pgk, waiting=len(waiting),
            lagging=rank_list(laggers) if laggers else NONE, silent=rank_list(absent) if absent else NONE))
    return out


@reads("torch.watchdog_timeout")
def op_divergence(events: pl.DataFrame, rank_hosts: dict[int, str], lang: str) -> list[Finding]:
    """Ranks stuck at the same SeqNum of one PG with different op types: the minority diverged."""
    stuck = stuck_works(events).filter((pl.col("kind") == "torch.watchdog_timeout") & pl.col("op").is_not_null())
    out = [_op_divergence(group, group, pgk, PerLang(en=f"sequence {seq}", zh=f"第 {seq} 次集合通信"), (0.8, 0.5),
                          rank_hosts, lang)
           for (pgk, seq), group in stuck.group_by(["pgk", "seq"], maintain_order=True)]
    return [f for f in out if f] or _unnumbered_op_divergence(events, rank_hosts, lang)


def _op_divergence(group: pl.DataFrame, evidence: pl.DataFrame, pgk: str, at, confidence: tuple[float, float],
                   rank_hosts: dict[int, str], lang: str) -> Finding | None:
    """The finding for one stuck collective whose ranks (``group``) wait in different ops, or None; ``confidence``
    is (a majority decided, no majority)."""
    ops = dict(group.group_by("rank", maintain_order=True).agg(pl.col("op").first()).iter_rows())
    if len(set(ops.values())) < 2:
        return None
    ranks, op, decided = odd_side(ops)
    return make_finding(
        "AN-OP-DIVERGENCE", lang, evidence, ranks=ranks, hosts=hosts_of(ranks, rank_hosts), pg=pgk, at=at, op=op,
        ops=", ".join(f"{r}:{o}" for r, o in sorted(ops.items())[:16]), confidence=confidence[0 if decided else 1])


UNNUMBERED = PerLang(en="its first stuck work (these logs state no sequence number)",
                     zh="各自第一个卡住的通信（日志里没有序号）")


def _unnumbered_op_divergence(events: pl.DataFrame, rank_hosts: dict[int, str], lang: str) -> list[Finding]:
    """Watchdogs that state no SeqNum (torch 1.9-1.10: "WorkNCCL(OpType=BROADCAST, Timeout(ms)=...)"): each
    rank's first timed-out work is the oldest one it waits in; ranks whose first is another operation than the
    others' are on another code path. Less sure than with numbers: a rank may have several works in flight."""
    stuck = (events.filter((pl.col("kind") == "torch.watchdog_timeout") & pl.col("rank").is_not_null()
                           & pl.col("seq").is_null() & pl.col("op").is_not_null())
             .with_columns(pl.coalesce(pl.col("pg"), pl.lit("0")).alias("pgk"))
             .sort(["ts", "file", "line"], nulls_last=True))
    out = [_op_divergence(group, group.group_by("rank", maintain_order=True).head(1), pgk, UNNUMBERED, (0.65, 0.4),
                          rank_hosts, lang)
           for (pgk,), group in stuck.group_by(["pgk"], maintain_order=True)]
    return [f for f in out if f]


@reads("torch.pg_status")
def enqueue_lead(events: pl.DataFrame, rank_hosts: dict[int, str], lang: str) -> list[Finding]:
    """A rank whose last enqueued work leads (or lags) everyone else's at the failure point."""
    status = stuck_works(events).filter((pl.col("kind") == "torch.pg_status") & pl.col("last_enqueued").is_not_null())
    out = []
    for (pgk,), group in status.group_by(["pgk"], maintain_order=True):
        last = dict(group.group_by("rank").agg(pl.col("last_enqueued").max()).iter_rows())
        if len(last) < 3:
            continue
        top, odd = majority(last)
        leaders = [r for r in odd if top is not None and last[r] > top]
        if not leaders:
            continue
        out.append(make_finding(
            "AN-ENQUEUE-LEAD", lang, group.filter(pl.col("rank").is_in(leaders)), ranks=leaders,
            hosts=hosts_of(leaders, rank_hosts), pg=pgk, seq=top,
            leads=", ".join(f"{r}:{last[r]}" for r in leaders[:16])))
    return out


@reads("nccl.ras_mismatch")
def ras_mismatch(events: pl.DataFrame, rank_hosts: dict[int, str], lang: str) -> list[Finding]:
    """NCCL RAS: a communicator's ranks launched different numbers of one operation. The ranks RAS lists
    are those of the smaller group(s): behind the others they are the culprits; ahead of them, the
    majority never issued the next operation and RAS names no single culprit."""
    rows = events.filter(pl.col("kind") == "nccl.ras_mismatch")
    out = []
    for row in rows.sort(["file", "line"]).iter_rows(named=True):
        counts = [tuple(int(x) for x in pair.split(":")) for pair in (row["detail"] or "").split() if ":" in pair]
        listed = [int(r) for r in (row["key"] or "").split(",") if r.strip().isdigit()]
        if len(counts) < 2:
            continue
        most = max(counts)  # (ranks, operation) of the largest group
        minority_ops = [op for n, op in counts if (n, op) != most]
        behind = bool(minority_ops) and max(minority_ops) < most[1]
        ranks = listed if behind else []
        out.append(make_finding(
            "AN-RAS-MISMATCH", lang, rows.filter(pl.col("line") == row["line"]), ranks=ranks,
            hosts=hosts_of(ranks, rank_hosts), confidence=0.7 if behind else 0.55, op=row["op"] or UNNAMED_OP,
            counts=", ".join(f"{n} rank(s) up to {op}" for n, op in counts), listed=rank_list(listed),
            nodes=row["peer"] or NOT_STATED, majority=most[0], majority_op=most[1]))
    return out
