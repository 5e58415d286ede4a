"""Ranks and nodes that should be there and are not: never joined, named by a store key, or silent."""

from __future__ import annotations

import polars as pl

from nccllens.analyses.common import PerLang, hosts_of, make_finding, rank_list
from nccllens.analyses.reads import reads
from nccllens.job import WorldSize
from nccllens.repeats import latest
from nccllens.report.model import Finding, RankStatus

RDZV_FAILURE = ("torch.store_timeout", "torchrun.rendezvous_error")
PEER_LOSS = ("crashed", "exited", "timed_out")


@reads(*RDZV_FAILURE)
def node_never_joined(events: pl.DataFrame, ws: WorldSize, lang: str) -> list[Finding]:
    """Static rendezvous: nodes 0..nnodes-1 each state their node rank; the absent ones hold known ranks."""
    failures = events.filter(pl.col("kind").is_in(RDZV_FAILURE))
    if not failures.height or not ws.nnodes or ws.nnodes < 2:
        return []
    present = set(ws.node_ranks.values())
    missing_nodes = sorted(set(range(ws.nnodes)) - present)
    if not present or not missing_nodes:
        return []
    ranks = []
    if ws.nproc_per_node:
        ranks = [n * ws.nproc_per_node + i for n in missing_nodes for i in range(ws.nproc_per_node)]
    seen = set(events["rank"].drop_nulls().to_list())
    if set(ranks) & seen:
        return []
    return [make_finding("AN-NODE-NEVER-JOINED", lang, failures, ranks=ranks, hosts=(),
                         nodes=", ".join(map(str, missing_nodes)), nnodes=ws.nnodes, joined=len(present),
                         ranks_text=rank_list(ranks))]


@reads("torch.store_timeout")
def store_key_rank(events: pl.DataFrame, rank_hosts: dict[int, str], lang: str) -> list[Finding]:
    """``DistStoreError`` while waiting for a key that names a rank: that rank never arrived."""
    from nccllens.parse.torch_store import missing_rank_from_key

    hits = events.filter((pl.col("kind") == "torch.store_timeout") & pl.col("rank").is_not_null()
                         & pl.col("key").is_not_null())
    if not hits.height:
        return []
    # only keys that name the rank that should have written them (a key like ``warm_start_ckpt`` names
    # nobody: the event's rank is then the waiter's own)
    named = [missing_rank_from_key(str(k).split(",")[0]) for k in hits["key"].to_list()]
    hits = hits.filter(pl.Series([n is not None for n in named], dtype=pl.Boolean))
    if not hits.height:
        return []
    ranks = sorted(set(hits["rank"].to_list()))
    return [make_finding("AN-STORE-MISSING-RANK", lang, hits, ranks=ranks, hosts=hosts_of(ranks, rank_hosts),
                         key=hits["key"][0])]


def silent_ranks(events: pl.DataFrame, status: list[RankStatus], lang: str) -> list[Finding]:
    """Ranks that logged earlier, then stopped with no error and no exit status while their peers failed."""
    seen = [s for s in status if s.state != "never_seen"]
    silent = [s for s in seen if s.state == "silent"]
    failed = [s for s in seen if s.state in PEER_LOSS]
    if not silent or not failed or len(silent) * 2 > len(seen):
        return []
    ranks = [s.rank for s in silent]
    mine = events.filter(pl.col("rank").is_in(ranks))
    last = mine["ts"].drop_nulls().max() if mine.height else None
    evidence = mine.sort(["ts", "file", "line"], nulls_last=True).tail(3)
    hosts = sorted({s.host for s in silent if s.host})
    # peers that only timed out do not show the silent rank died (it may hang): the cause is then as unknown
    # as any collective timeout's, with the silent rank as the suspect; a peer that crashed or exited did see it go
    lost = any(s.state in ("crashed", "exited") for s in failed)
    return [make_finding("AN-SILENT-RANK", lang, evidence, ranks=ranks, hosts=hosts, first_seen=last,
                         category=None if lost else "collective_timeout",
                         failed=rank_list([s.rank for s in failed]))]


def no_logs(events: pl.DataFrame, status: list[RankStatus], lang: str) -> list[Finding]:
    """Context: ranks the job should have that no log mentions (so their side of the story is missing)."""
    never = [s.rank for s in status if s.state == "never_seen"]
    if not never or len(never) == len(status):
        return []
    return [make_finding("AN-NO-LOGS", lang, events.head(0), ranks=never, missing=rank_list(never),
                         world=len(status))]


BOOKKEEPING = ("other.file_end", "other.parser_error")
# A line no parser knows that still reads like a failure: its host said something, so it was not silent.
FAILURE_TEXT = (r"(?i)\b(?:error|exception|traceback|fatal|failed|failure|abort(?:ed)?|killed|timed? ?out|"
                r"segmentation fault|core dumped|refused|unreachable|panic)\b")


def _path_only_hosts(hosted: pl.DataFrame) -> set[str]:
    """Hosts known only from a file's path (its end-of-file marker) while the file's own lines name
    another host: the path's guess is no second host."""
    real = hosted.filter(~pl.col("kind").is_in(BOOKKEEPING))
    named = real.group_by("file").agg(pl.col("host").drop_nulls().unique().alias("named"))
    only = (hosted.group_by("host").agg(pl.col("kind").is_in(BOOKKEEPING).all().alias("only"),
                                         pl.col("file").unique().alias("files"))
            .filter(pl.col("only")))
    files_naming = {f: set(map(str, n)) for f, n in named.iter_rows()}
    out = set()
    for host, _, files in only.iter_rows():
        if all(files_naming.get(f, set()) - {str(host)} for f in files):
            out.add(str(host))
    return out


def silent_hosts(events: pl.DataFrame, ws: WorldSize, status: list[RankStatus], lang: str) -> list[Finding]:
    """A node whose launcher log just stops (no exit, no failure table) while other nodes report failures.

    A node is not silent when its lines read like a failure that no parser claimed (it said something),
    and a host that only a file's path suggests, while the file's lines name another host, is no node."""
    hosted = events.filter(pl.col("host").is_not_null())
    if hosted.height and hosted["host"].n_unique() >= 2:
        phantom = _path_only_hosts(hosted)
        if phantom:
            hosted = hosted.filter(~pl.col("host").cast(pl.String).is_in(sorted(phantom)))
    if not hosted.height or hosted["host"].n_unique() < 2:
        return []
    # its launcher told how it ended (a failure table, a signal, a worker group's end state); a group that started
    # ("Starting worker group", "Detected 1 new nodes") ended nothing, and one that succeeded failed nothing
    state = pl.col("value").fill_null("")
    began = state.is_in(["Starting worker group"]) | state.str.starts_with("Detected ")
    succeeded = state.str.contains(r"SUCCEEDED|successfully finished")
    ended = pl.col("kind").is_in(["torchrun.failure", "torchrun.root_cause", "torchrun.worker_failed",
                                  "torchrun.signal_received", "torchrun.sigterm_sent"]) | (
        (pl.col("kind") == "torchrun.state") & ~began)
    ended_badly = ended & ~((pl.col("kind") == "torchrun.state") & succeeded)
    # a line kept only because a rule pattern matched it (other.text), or a warning, that reads like a failure
    spoke = ((pl.col("level").is_in(["warning", "error", "critical"]) | (pl.col("kind") == "other.text"))
             & pl.col("message").fill_null("").str.contains(FAILURE_TEXT))
    per_host = hosted.group_by("host").agg(ended.any().alias("ended"), ended_badly.any().alias("ended_badly"),
                                           pl.col("level").is_in(["error", "critical"]).any().alias("erred"),
                                           spoke.any().alias("spoke"),
                                           latest().alias("last"))
    quiet = per_host.filter(~pl.col("ended") & ~pl.col("erred") & ~pl.col("spoke"))
    failed = per_host.filter(pl.col("ended_badly") | pl.col("erred"))
    if not quiet.height or not failed.height or quiet.height > failed.height:
        return []
    out = []
    silent_ranks_seen = {s.rank for s in status if s.state == "silent"}
    seen = set(events["rank"].drop_nulls().to_list())
    unseen = sorted(set(range(ws.at_least or 0)) - seen)  # ranks below the highest seen exist, heard or not
    for host, last in quiet.sort(pl.col("host").cast(pl.String)).select("host", "last").iter_rows():
        ranks = [s.rank for s in status if s.host == host]
        node = ws.node_ranks.get(host)
        if not ranks and node is not None and ws.nproc_per_node:
            ranks = [node * ws.nproc_per_node + i for i in range(ws.nproc_per_node)]
        if not ranks and quiet.height == 1:
            ranks = unseen  # the one quiet node is where the ranks nobody heard from lived
        if ranks and set(ranks) <= silent_ranks_seen:
            continue  # silent_ranks already tells this story
        evidence = hosted.filter(pl.col("host") == host).sort(["ts", "file", "line"], nulls_last=True).tail(2)
        failed_ranks = [s.rank for s in status if s.state in PEER_LOSS]
        out.append(make_finding("AN-SILENT-RANK", lang, evidence, ranks=ranks, hosts=[host], first_seen=last,
                                failed=rank_list(failed_ranks)))
    return out


@reads("torch.store_barrier_wait")
def store_barrier_stuck(events: pl.DataFrame, rank_hosts: dict[int, str], lang: str) -> list[Finding]:
    """``Waiting in store based barrier … (world_size=W, worker_count=N)`` with no ``Completed store-based
    barrier`` for that key: init_process_group never saw every rank. The ranks that never came are named when
    the waiters account for everyone else."""
    waits = events.filter(pl.col("kind") == "torch.store_barrier_wait")
    if not waits.height:
        return []
    done = set(events.filter(pl.col("kind") == "torch.store_barrier_done")["key"].drop_nulls().to_list())
    stuck = waits.filter(~pl.col("key").is_in(list(done)))
    if not stuck.height:
        return []
    last = stuck.sort(["ts", "file", "line"], nulls_last=True).row(-1, named=True)
    world = int(last["nranks"] or 0)
    joined = str(last["value"] or "").split("/")[0]
    waiting = {int(r) for r in stuck["rank"].drop_nulls().to_list()}
    absent = sorted(set(range(world)) - waiting) if 0 < world <= 4096 else []
    if not joined.isdigit() or not world:
        return []
    if len(absent) != world - int(joined):
        absent = []
    return [make_finding("AN-STORE-BARRIER-STUCK", lang, stuck.head(3), ranks=absent, hosts=hosts_of(absent, rank_hosts),
                         joined=joined, world=world, key=str(last["key"]),
                         absent=f"rank {rank_list(absent)}" if absent else PerLang(en="the other ranks", zh="其余的 rank"))]
