"""Give every event the rank and host the logs offer, from all sources together.

Order of evidence (a value the line itself states is never overwritten; ``localhost`` first becomes the
host its file names, ``host_aliases``):
1. NCCL ``Init START/COMPLETE`` lines, NCCL WARNs that state their writer's rank (``[Proxy Service N]``)
   and torchrun failure tables: (host, pid) → global rank (of the largest communicator, for NCCL);
1a. a process's own NCCL transport lines (``Channel 00 : 2[1040] -> 0[1020]`` is written by rank 2), for
   (host, pid) pairs no Init line maps (``summaries.channel_ranks``);
1b. kernel lines naming a GPU's PCI address: the rank whose NCCL busId is that GPU, on that host;
2. lines that carry both rank and local rank (``[default1]:[rank3]:``, torchrun failure tables):
   (host, local rank, attempt) → rank;
2b. a single-node job (one host and one agent at most, no line stating a rank other than its local rank,
   no world size beyond the per-node process count): local rank → rank;
3. a file (not an agent's console) whose ranked events all name one rank: that rank for its other
   worker lines;
4. per file, a host named by any of its events fills events without one;
4b. a line without a host that names a GPU's PCI address: the one host whose lines name that GPU;
5. in an agent's console whose worker lines carry no rank prefix (torch <= 2.2 without ``--tee``),
   the one Python traceback printed before the agent reports its workers' exits belongs to the one
   worker that exited with a positive code (an uncaught exception exits 1; the others are killed by
   signals). Two tracebacks there (two workers raised; the agent killed the second before it
   exited) stay without a rank.
All steps are joins and window expressions on the event table.
"""

from __future__ import annotations

import polars as pl

from nccllens.host_aliases import resolve_loopback

_AGENT_FAMILIES = ("torchrun", "kernel", "slurm", "k8s")


def _bus_to_pci(bus: pl.Expr) -> pl.Expr:
    """NCCL's busId (``%lx`` of domain|bus|device|function, e.g. ``2b000``) as ``0000:2b:00``."""
    padded = bus.str.to_lowercase().str.zfill(9)
    valid = bus.str.contains(r"^[0-9a-fA-F]{5,12}$")
    text = pl.concat_str([padded.str.slice(-9, 4), pl.lit(":"), padded.str.slice(-5, 2), pl.lit(":"),
                          padded.str.slice(-3, 2)])
    return pl.when(valid).then(text).otherwise(None)


def _fill_from(events: pl.DataFrame, mapping: pl.DataFrame, keys: list[str], target: str) -> pl.DataFrame:
    if not mapping.height:
        return events
    joined = events.join(mapping, on=keys, how="left", suffix="_map", nulls_equal=False, maintain_order="left")
    return joined.with_columns(pl.coalesce(pl.col(target), pl.col(f"{target}_map")).alias(target)).drop(
        f"{target}_map")


_USED = ("file", "line", "host", "pid", "rank", "local_rank", "family", "kind", "pci", "nranks", "key", "value",
         "exit_code", "message")
# a GPU's PCI address as lines print it (nvidia-smi's 8-digit domain too), without its function
_GPU_ADDRESS = r"\b(?:[0-9a-fA-F]{4})?([0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2})\b"
_TRACEBACKS = ("python.traceback", "python.exception")


def attribute(events: pl.DataFrame, channel_ranks: pl.DataFrame | None = None,
              file_hosts: pl.DataFrame | None = None) -> pl.DataFrame:
    """``events`` with ``rank`` and ``host`` filled in. The joins run on the few columns they read (every
    mapping has one row per key, so rows keep their order), which keeps memory small on big jobs.
    ``channel_ranks``: (host, pid, rank) from the processes' own NCCL transport lines (step 1a);
    ``file_hosts``: (file, host) of the lines summarised instead of kept as events (step 4 counts them)."""
    if not events.height:
        return events
    filled = _attributed(resolve_loopback(events.select(_USED), file_hosts), channel_ranks, file_hosts)
    return events.with_columns(filled["rank"], filled["host"])


def _attributed(events: pl.DataFrame, channel_ranks: pl.DataFrame | None = None,
                file_hosts: pl.DataFrame | None = None) -> pl.DataFrame:
    # 1. NCCL init (and the "comm … rank N nranks M … Abort/Destroy COMPLETE" line of its teardown, which states the
    #    same): (host, pid) -> rank in the largest communicator that process joined
    init = (
        events.filter(pl.col("kind").is_in(["nccl.init_start", "nccl.init_complete", "nccl.teardown",
                                            "torchrun.root_cause", "torchrun.failure", "nccl.warn"])
                      & pl.col("pid").is_not_null() & pl.col("rank").is_not_null())
        .sort(["nranks", "rank"], descending=[True, False], nulls_last=True)
        .group_by(["host", "pid"], maintain_order=True).agg(pl.col("rank").first())
    )
    events = _fill_from(events, init, ["host", "pid"], "rank")
    # 1a. (host, pid) -> the rank its own transport lines name, where no Init line said
    if channel_ranks is not None and channel_ranks.height:
        own = (channel_ranks.with_columns(pl.col("host").cast(events.schema["host"]))
               .join(init.select("host", "pid"), on=["host", "pid"], how="anti"))
        events = _fill_from(events, own, ["host", "pid"], "rank")
    # 1b. (host, PCI address) -> rank: NCCL Init lines give each rank's busId, kernel lines the GPU's PCI
    gpus = (
        events.filter(pl.col("kind").is_in(["nccl.init_start", "nccl.init_complete"])
                      & pl.col("key").is_not_null() & pl.col("rank").is_not_null())
        .with_columns(_bus_to_pci(pl.col("key")).cast(pl.Categorical).alias("pci_map"))
        .filter(pl.col("pci_map").is_not_null())
        .sort(["nranks", "rank"], descending=[True, False], nulls_last=True)
        .group_by(["host", "pci_map"], maintain_order=True).agg(pl.col("rank").first().alias("gpu_rank"))
    )
    if gpus.height:
        events = (events.join(gpus, left_on=["host", "pci"], right_on=["host", "pci_map"], how="left", maintain_order="left")
                  .with_columns(pl.coalesce("rank", "gpu_rank").alias("rank")).drop("gpu_rank"))
    # 2. (host, local_rank, attempt) -> rank, where some line states both
    both = (
        events.filter(pl.col("rank").is_not_null() & pl.col("local_rank").is_not_null()
                      & pl.col("host").is_not_null())
        .group_by(["host", "local_rank"]).agg(pl.col("rank").mode().min())
    )
    worker = ~pl.col("family").is_in(_AGENT_FAMILIES) | (pl.col("kind") == "torchrun.worker_failed")
    if both.height:
        filled = _fill_from(events, both, ["host", "local_rank"], "rank")
        events = events.with_columns(
            pl.when(worker).then(filled["rank"]).otherwise(pl.col("rank")).alias("rank"))
    # 2b. a single-node job: a worker's local rank is its global rank
    if _single_node(events):
        events = events.with_columns(
            pl.when(worker & pl.col("rank").is_null()).then(pl.col("local_rank")).otherwise(pl.col("rank"))
            .alias("rank"))
    # 3. a file whose worker events name exactly one rank, and that is no agent's console (a console
    #    carries every local rank's output: one rank speaking does not make the others silent ones its)
    consoles = events.filter(pl.col("family") == "torchrun").select("file").unique()
    per_file = (
        events.filter(pl.col("rank").is_not_null() & worker)
        .group_by("file").agg(pl.col("rank").n_unique().alias("n"), pl.col("rank").first().alias("only"))
        .filter(pl.col("n") == 1).select("file", "only")
        .join(consoles, on="file", how="anti")
    )
    if per_file.height:
        events = events.join(per_file, on="file", how="left", maintain_order="left").with_columns(
            pl.when(worker & pl.col("rank").is_null()).then(pl.col("only")).otherwise(pl.col("rank"))
            .alias("rank")).drop("only")
    # 3b. (file, rank) -> host, where the file's lines of that rank name one host
    ranked = events.filter(pl.col("rank").is_not_null() & pl.col("host").is_not_null())
    if ranked.height:
        own = (ranked.group_by(["file", "rank"]).agg(pl.col("host").n_unique().alias("n"),
                                                     pl.col("host").first().alias("rhost"))
               .filter(pl.col("n") == 1).select("file", "rank", "rhost"))
        events = events.join(own, on=["file", "rank"], how="left", maintain_order="left", nulls_equal=False
                             ).with_columns(pl.coalesce("host", "rhost").alias("host")).drop("rhost")
    # 4. host per file, where every line of it that names a host (summarised lines too) names the same one
    named = events.filter(pl.col("host").is_not_null()).select("file", "host")
    if file_hosts is not None and file_hosts.height:
        named = pl.concat([named, file_hosts.select(pl.col("file").cast(named.schema["file"]),
                                                    pl.col("host").cast(named.schema["host"]))])
    hosts = (named.group_by("file")
             .agg(pl.col("host").n_unique().alias("n"), pl.col("host").first().alias("fhost"))
             .filter(pl.col("n") == 1).select("file", "fhost"))
    if hosts.height:
        events = events.join(hosts, on="file", how="left", maintain_order="left").with_columns(
            pl.coalesce("host", "fhost").alias("host")).drop("fhost")
    return _exception_rank(_host_of_gpu(events))


def _host_of_gpu(events: pl.DataFrame) -> pl.DataFrame:
    """4b. A line without a host that names a GPU's PCI address (nvidia-smi's ``Unable to determine the
    device handle for GPU 0000:17:00.0``) ran on the one host whose lines name that address."""
    unplaced = pl.col("host").is_null() & pl.col("message").str.contains(_GPU_ADDRESS)
    if not events.select(unplaced.any()).item():
        return events
    named = pl.coalesce(pl.col("pci").cast(pl.String).str.slice(0, 10),
                        pl.col("message").str.extract(_GPU_ADDRESS, 1)).str.to_lowercase()
    places = (events.filter(pl.col("host").is_not_null()).select(named.alias("gpu"), "host").drop_nulls()
              .unique().group_by("gpu").agg(pl.col("host").first(), pl.len().alias("n"))
              .filter(pl.col("n") == 1).select("gpu", pl.col("host").alias("gpu_host")))
    if not places.height:
        return events
    return (events.with_columns(pl.when(unplaced).then(named).otherwise(None).alias("gpu"))
            .join(places, on="gpu", how="left", maintain_order="left")
            .with_columns(pl.coalesce("host", pl.col("gpu_host").cast(events.schema["host"])).alias("host"))
            .drop("gpu", "gpu_host"))


def _single_node(events: pl.DataFrame) -> bool:
    """Whether the logs show a job of one node, so that local ranks are global ranks: local ranks are
    stated, at most one host and one agent's console are seen, no line states a rank other than its
    local rank, and no world size exceeds the per-node process count."""
    local = events.filter(pl.col("local_rank").is_not_null() & pl.col("rank").is_null())
    if not local.height:
        return False
    if events["host"].drop_nulls().n_unique() > 1:
        return False
    if events.filter(pl.col("family") == "torchrun")["file"].n_unique() > 1:
        return False
    if events.filter(pl.col("rank").is_not_null() & pl.col("local_rank").is_not_null()
                     & (pl.col("rank") != pl.col("local_rank"))).height:
        return False
    nproc = events.filter((pl.col("kind") == "torchrun.config") & (pl.col("key") == "nproc_per_node"))
    world = events["nranks"].max()
    if world is not None:
        counts = [int(v) for v in nproc["value"].drop_nulls().to_list() if str(v).isdigit()]
        if counts and world > max(counts):
            return False
        if world <= events["local_rank"].max():
            return False
    return True


def _exception_rank(events: pl.DataFrame) -> pl.DataFrame:
    """5. The rank of the one rank-less traceback in an agent's console that comes before the agent's
    report of its workers' exits: the one worker that exited with a positive code there."""
    exited = (
        events.filter((pl.col("kind") == "torchrun.worker_failed") & (pl.col("exit_code") > 0)
                      & pl.col("rank").is_not_null())
        .group_by("file").agg(pl.col("rank").n_unique().alias("n"), pl.col("rank").first().alias("exited"),
                              pl.col("line").min().alias("reported_at"))
        .filter(pl.col("n") == 1).select("file", "exited", "reported_at")
    )
    if not exited.height:
        return events
    joined = events.join(exited, on="file", how="left", maintain_order="left")
    own = (pl.col("kind").is_in(_TRACEBACKS) & pl.col("rank").is_null()
           & (pl.col("line") < pl.col("reported_at")).fill_null(False))
    only = own & (own.sum().over("file") == 1)
    return (joined.with_columns(pl.when(only).then(pl.col("exited")).otherwise(pl.col("rank")).alias("rank"))
            .drop("exited", "reported_at"))
