"""Per-rank status: where each rank ran, how it ended (crashed, exited, timed out, blocked, silent, finished),
its exit code or signal, its last collective and its first error, from the event table with group-bys (Python
walks the per-rank summary, one row per rank, never the events)."""

from __future__ import annotations

import polars as pl

from nccllens.events import destroyed, earliest_first
from nccllens.report.model import JobModel, RankStatus
from nccllens.timeline import normalize

ERROR_LEVELS = ("error", "critical")
TIMEOUT_KINDS = ("torch.watchdog_timeout",)
EXIT_KINDS = ("torchrun.failure", "torchrun.root_cause", "slurm.step_error")
OWN_ERROR_KINDS = ("python.traceback", "python.exception", "cpp.terminate", "torch.nccl_error", "torch.ddp_error",
                   "torch.fingerprint_mismatch", "kernel.xid", "kernel.oom_kill", "kernel.segfault")
AGENT_STOP = ("SIGTERM", "SIGINT", "SIGHUP")


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
            first_error=row["first_error"], first_error_ts=row["first_error_ts"].isoformat() if row["first_error_ts"] is not None else None))
    return out
