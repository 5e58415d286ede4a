"""The job model (world size, hosts, ranks, communicators, versions, attempts) and per-rank status.

Everything is derived from the event table with group-bys; Python only walks the per-rank
summary (one row per rank), never the events.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import polars as pl

from nccllens import lazy_regex
from nccllens.events import MAX_RANK, destroyed, earliest_first
from nccllens.report.model import JobModel, RankStatus
from nccllens.timeline import normalize

ERROR_LEVELS = ("error", "critical")
TIMEOUT_KINDS = ("torch.watchdog_timeout",)
EXIT_KINDS = ("torchrun.failure", "torchrun.root_cause", "slurm.step_error")
OWN_ERROR_KINDS = ("python.traceback", "python.exception", "cpp.terminate", "torch.nccl_error", "torch.ddp_error",
                   "torch.fingerprint_mismatch", "kernel.xid", "kernel.oom_kill", "kernel.segfault")
AGENT_STOP = ("SIGTERM", "SIGINT", "SIGHUP")
_NUM = lazy_regex.compile(r"-?\d+")
_NODE_RANK = lazy_regex.compile(r"'rank'\s*:\s*'?(\d+)")


@dataclass
class WorldSize:
    """The job's world size, and what stated it."""

    size: int | None  # stated by the launcher, the rendezvous, WORLD_SIZE or NCCL (never by the ranks seen alone)
    source: str  # what stated it
    nnodes: int | None = None
    nproc_per_node: int | None = None
    node_ranks: dict[str, int] = field(default_factory=dict)  # host -> node rank (static rendezvous)
    seen: int | None = None  # the highest rank seen + 1: ranks 0..seen-1 exist, whether or not they were absent

    @property
    def at_least(self) -> int | None:
        """The size stated, else the ranks known to exist (0 to the highest rank seen)."""
        return self.size or self.seen


def _config(events: pl.DataFrame) -> dict[str, list[tuple[str | None, str]]]:
    rows = events.filter(pl.col("kind") == "torchrun.config").select("host", "key", "value")
    out: dict[str, list[tuple[str | None, str]]] = {}
    for host, key, value in rows.iter_rows():
        if key and value is not None:
            out.setdefault(key.strip().lower(), []).append((host, str(value)))
    return out


def _first_int(values: list[tuple[str | None, str]]) -> int | None:
    nums = [int(m.group(0)) for _, v in values for m in [_NUM.search(v)] if m and len(m.group(0)) <= 9]
    return max(nums) if nums else None


def world_size(events: pl.DataFrame) -> WorldSize:
    """The largest size a launcher, rendezvous, ``WORLD_SIZE`` or NCCL ``nranks`` states. The highest rank
    seen is no size: an excerpt of ranks 1 and 2 says nothing about a silent rank 0 (``seen`` keeps it)."""
    cfg = _config(events)
    nproc = _first_int(cfg.get("nproc_per_node", []))
    nnodes = _first_int(cfg.get("max_nodes", []) or cfg.get("nnodes", []))
    node_ranks = {}
    for key in ("rdzv_configs", "node_rank", "group_rank"):
        for host, value in cfg.get(key, []):
            m = _NODE_RANK.search(value) if key == "rdzv_configs" else _NUM.search(value)
            number = (m.group(1) if key == "rdzv_configs" else m.group(0)) if m else ""
            if host and number and len(number) <= 9:  # longer: a malformed line (and int() refuses 4,300 digits)
                node_ranks[host] = int(number)
    candidates: list[tuple[int, str]] = []
    if nproc and nnodes:
        candidates.append((nproc * nnodes, "torchrun nproc_per_node x nnodes"))
    for key in ("world_size", "global_world_size", "global_world_sizes"):
        if cfg.get(key):
            candidates.append((_first_int(cfg[key]) or 0, f"torchrun {key}"))
    env = events.filter((pl.col("key") == "WORLD_SIZE") & pl.col("value").str.contains(r"^\d+$"))
    if env.height:
        candidates.append((int(env["value"].cast(pl.Int64).max()), "WORLD_SIZE"))
    nccl = events.filter(pl.col("kind").is_in(["nccl.init_start", "nccl.init_complete"]))["nranks"].drop_nulls()
    if len(nccl):
        candidates.append((int(nccl.max()), "NCCL nranks"))
    stated = events.filter(~pl.col("kind").is_in(["nccl.init_start", "nccl.init_complete"]))["nranks"].drop_nulls()
    if len(stated):
        candidates.append((int(stated.max()), "stated size (nranks, world_size)"))
    ranks = events["rank"].drop_nulls()
    seen = int(ranks.max()) + 1 if len(ranks) else None
    candidates = [c for c in candidates if 0 < c[0] <= MAX_RANK]  # 2**31 ranks is a malformed line
    if not candidates:
        return WorldSize(None, "", nnodes, nproc, node_ranks, seen)
    best = max(candidates, key=lambda c: c[0])
    if seen and seen > best[0]:  # a sub-communicator's nranks: the ranks seen go further
        best = (seen, f"{best[1]} (ranks seen go further)")
    return WorldSize(best[0], best[1], nnodes, nproc, node_ranks, seen)


def _iso(value) -> str | None:
    return value.isoformat() if value is not None else None


def _versions(events: pl.DataFrame) -> dict[str, list[str]]:
    stated = events.filter(pl.col("version").is_not_null() & (pl.col("family") != "flight"))
    out: dict[str, set[str]] = {}
    for text in stated["version"].unique().to_list():
        what, _, value = text.partition(" ")
        if not value:
            continue
        out.setdefault(what, set()).add(value)
        if "+cuda" in value:
            out.setdefault("cuda", set()).add(value.split("+cuda", 1)[1])
    return {k: sorted(v) for k, v in sorted(out.items())}


def communicators(events: pl.DataFrame) -> list[dict]:
    init = events.filter(pl.col("kind").is_in(["nccl.init_start", "nccl.init_complete"])
                         & pl.col("comm_id").is_not_null())
    if not init.height:
        return []
    groups = (init.group_by("comm_id")
              .agg(pl.col("nranks").max(), pl.col("rank").drop_nulls().unique().sort().alias("ranks"),
                   pl.col("host").drop_nulls().unique().sort().alias("hosts"),
                   (pl.col("kind") == "nccl.init_complete").any().alias("complete"))
              .sort("comm_id"))
    return groups.to_dicts()


def _rendezvous_ranks(events: pl.DataFrame) -> dict[int, str]:
    """torchrun's rendezvous result lists the global ranks each agent (host) started."""
    rows = events.filter((pl.col("kind") == "torchrun.rendezvous") & pl.col("host").is_not_null()
                         & pl.col("detail").str.contains("global_ranks=", literal=True))
    out: dict[int, str] = {}
    for host, detail in rows.select("host", "detail").iter_rows():
        m = re.search(r"global_ranks=\[([\d, ]*)\]", detail)
        for r in re.findall(r"\d+", m[1]) if m else []:
            out.setdefault(int(r), host)
    return out


def rank_hosts(events: pl.DataFrame) -> dict[int, str]:
    out = _rendezvous_ranks(events)
    # lazily, so that only the two columns are read (a filter on the frame copies all of its columns)
    mode = (events.lazy().filter(pl.col("rank").is_not_null() & pl.col("host").is_not_null())
            .group_by("rank").agg(pl.col("host").mode().sort().first()).collect())
    out.update(dict(mode.iter_rows()))
    return dict(sorted(out.items()))


def build_job(events: pl.DataFrame, ws: WorldSize | None = None) -> JobModel:
    """The job model of ``events``; ``ws``: ``world_size(events)`` when the caller has it already."""
    events = normalize(events)
    ws = world_size(events) if ws is None else ws
    ts = events["ts"].drop_nulls()
    attempts = events["attempt"].drop_nulls()
    restarts = events.filter(pl.col("kind") == "torchrun.restart")
    n_attempts = None
    if len(attempts):
        n_attempts = int(attempts.max()) + 1
    if restarts.height:
        n_attempts = max(n_attempts or 1, restarts.height + 1)
    return JobModel(
        world_size=ws.size,
        hosts=sorted(events["host"].drop_nulls().unique().to_list()),
        ranks_seen=sorted(int(r) for r in events["rank"].drop_nulls().unique().to_list()),
        rank_hosts={str(r): h for r, h in sorted(rank_hosts(events).items())},
        versions=_versions(events),
        communicators=communicators(events),
        attempts=n_attempts,
        start=_iso(ts.min()) if len(ts) else None,
        end=_iso(ts.max()) if len(ts) else None,
    )


def default_pg(pg: pl.Expr) -> pl.Expr:
    return pg.is_null() | pg.is_in(["0", "default_pg"]) | pg.cast(pl.String).str.contains("default_pg")


def _per_rank(events: pl.DataFrame) -> pl.DataFrame:
    """One row per rank. "First" and "last" follow time (then file and line): each row's place in that
    order is one integer column, so that the rows themselves need not be sorted (a sort copies them)."""
    order = pl.col("_order")
    err = pl.col("level").is_in(ERROR_LEVELS) & ~pl.col("family").is_in(["torchrun", "slurm"])
    collective = (pl.col("kind").is_in(["torch.watchdog_timeout", "torch.pg_status", "flight.entry"])
                  & default_pg(pl.col("pg")))
    status = pl.col("kind").is_in(["torch.pg_status", "flight.pg_status"]) & default_pg(pl.col("pg"))
    exits = pl.col("kind").is_in(EXIT_KINDS)
    worker_pid = pl.col("kind").cast(pl.String).str.starts_with("nccl.") | exits
    seqs = pl.coalesce(pl.col("last_enqueued"), pl.col("seq"))

    def in_order(name: str, where: pl.Expr, last: bool = False) -> pl.Expr:
        """The earliest (or latest) non-null ``name`` among the rank's rows where ``where`` holds."""
        keep = where & pl.col(name).is_not_null()
        ordered = pl.col(name).filter(keep).sort_by(order.filter(keep))
        return (ordered.last() if last else ordered.first()).alias(name)

    ranked = events.lazy().filter(pl.col("rank").is_not_null()).with_columns(
        pl.int_range(pl.len(), dtype=pl.UInt32)
        .sort_by(earliest_first(), nulls_last=True, maintain_order=True).arg_sort().alias("_order"))
    return ranked.group_by("rank").agg(
        pl.col("host").drop_nulls().mode().sort().first().alias("host"),
        pl.col("local_rank").drop_nulls().mode().sort().first().alias("local_rank"),
        in_order("pid", worker_pid),
        seqs.filter(collective).max().alias("last_seq"),
        in_order("op", collective, last=True).alias("last_op"),
        pl.col("last_completed").filter(status).max().alias("last_completed"),
        in_order("exit_code", exits),
        in_order("signal", exits),
        pl.col("kind").is_in(TIMEOUT_KINDS).any().alias("timed_out"),
        pl.col("kind").is_in(OWN_ERROR_KINDS).any().alias("own_error"),
        ((pl.col("kind") == "progress.finished") | CLEAN_TEARDOWN).any().alias("said_finished"),
        pl.col("message").filter(err).sort_by(order.filter(err)).first().alias("first_error"),
        pl.col("ts").filter(err).sort_by(order.filter(err)).first().alias("first_error_ts"),
    ).collect()  # lazily: only the columns the aggregation reads are filtered


# NCCL's "comm 0x.. rank 3 nranks 8 ... - Destroy COMPLETE": the rank tore down its largest communicator
# cleanly (destroy_process_group at the end of the job), so no collective of it can still be waiting
CLEAN_TEARDOWN = destroyed(pl.col("nranks").max())

# a rank's worker running again (after a restart): it initialised or made progress
BACK_KINDS = ("nccl.init_start", "nccl.init_complete", "progress.step", "progress.count", "progress.bar",
              "progress.finished")


def _succeeded_hosts(events: pl.DataFrame) -> set[str]:
    """Hosts whose torchrun agent said its worker group succeeded: their workers finished, whatever else."""
    done = events.filter((pl.col("kind") == "torchrun.state") & pl.col("host").is_not_null()
                         & pl.col("value").cast(pl.String).fill_null("").str.contains(r"SUCCEEDED|successfully finished"))
    return {str(h) for h in done["host"].to_list()}


def _finished_clean(events: pl.DataFrame) -> bool:
    """The job said it finished (a trainer's or launcher's success line) and no worker failure was reported."""
    finished = events.filter((pl.col("kind") == "progress.finished") | (
        (pl.col("kind") == "torchrun.state")
        & pl.col("value").cast(pl.String).fill_null("").str.contains(r"SUCCEEDED|successfully finished")))
    failed = events.filter(pl.col("kind").is_in([*EXIT_KINDS, "torchrun.worker_failed", "harness.wallclock"]))
    return finished.height > 0 and failed.height == 0


def came_back(events: pl.DataFrame) -> set[int]:
    """Ranks whose every failure was followed by their worker running again (a restarted attempt): in each
    file where the rank failed, a later line of it initialised or made progress, or it did so in a later
    attempt than that file's failure."""
    bad_rows = (pl.col("level").is_in(ERROR_LEVELS) & ~pl.col("family").is_in(["torchrun", "slurm"])) | pl.col(
        "kind").is_in(EXIT_KINDS) | pl.col("kind").is_in(TIMEOUT_KINDS)
    ranked = events.filter(pl.col("rank").is_not_null())
    bad = ranked.filter(bad_rows).group_by(["rank", "file"]).agg(pl.col("line").max().alias("bad_line"),
                                                                 pl.col("attempt").max().alias("bad_attempt"))
    back = ranked.filter(pl.col("kind").is_in(BACK_KINDS))
    if not bad.height or not back.height:
        return set()
    in_file = back.group_by(["rank", "file"]).agg(pl.col("line").max().alias("back_line"))
    later = back.group_by("rank").agg(pl.col("attempt").max().alias("back_attempt"))
    rows = (bad.join(in_file, on=["rank", "file"], how="left").join(later, on="rank", how="left")
            .with_columns(((pl.col("back_line") > pl.col("bad_line")).fill_null(False)
                           | (pl.col("back_attempt") > pl.col("bad_attempt")).fill_null(False)).alias("ok")))
    per_rank = rows.group_by("rank").agg(pl.col("ok").all())
    return {int(r) for r, ok in per_rank.iter_rows() if ok}


def _state(row: dict, job_failed: bool, back: bool = False) -> str:
    if back:  # the rank failed in an earlier attempt and the restarted group brought it back
        return "finished" if row.get("said_finished") or not job_failed else "silent"
    code, signal = row["exit_code"], row["signal"]
    if row["timed_out"]:
        return "timed_out"
    if code is not None and code < 0 and signal not in AGENT_STOP:
        return "crashed"
    if row["own_error"] and (code is None or code != 0):
        return "crashed"
    if code is not None or signal is not None:
        return "finished" if code == 0 else "exited"
    if row.get("said_finished"):
        return "finished"  # the rank itself said its training finished
    last_seq, done = row["last_seq"], row["last_completed"]
    if last_seq is not None and done is not None and last_seq > done:
        return "blocked"
    return "silent" if job_failed else "finished"


def rank_status(events: pl.DataFrame, job: JobModel) -> list[RankStatus]:
    events = normalize(events)
    if not events.height and not job.world_size:
        return []
    summary = {row["rank"]: row for row in _per_rank(events).iter_rows(named=True)} if events.height else {}
    job_failed = bool(events.select(pl.col("level").is_in(ERROR_LEVELS).any()).item()) if events.height else False
    succeeded = _succeeded_hosts(events) if events.height else set()
    ranks = set(summary) | set(range(job.world_size or 0))
    back = came_back(events) if events.height else set()
    if events.height and _finished_clean(events):
        # the job said it finished and no worker failed: an error a rank logged on the way was survived
        back |= {r for r, row in summary.items() if row["exit_code"] is None and not row["timed_out"]}
    out = []
    for rank in sorted(ranks):
        row = summary.get(rank)
        if row is None:
            out.append(RankStatus(rank=rank, state="never_seen"))
            continue
        out.append(RankStatus(
            rank=rank, host=row["host"], local_rank=row["local_rank"], pid=row["pid"],
            state=_state(row, job_failed and str(row["host"]) not in succeeded, rank in back),
            exit_code=row["exit_code"],
            signal=row["signal"],
            last_seq=row["last_seq"], last_completed=row["last_completed"], last_op=row["last_op"],
            first_error=row["first_error"], first_error_ts=_iso(row["first_error_ts"])))
    return out
