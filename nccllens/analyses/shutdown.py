"""Shutdown noise: errors printed after every rank finished, in a job where no worker failed, are info.

A finished job often says scary things on its way out: a watchdog or heartbeat thread that loses the
store when rank 0 exits first (``recvValue failed``, ``Connection reset by peer``, ``Broken pipe``), a
process group not destroyed, a gloo pair closed by its peer. They happen after the work is done and
change nothing: when the job finished (every torchrun agent that logged says its workers succeeded;
DeepSpeed's launcher, HF or Lightning say training completed; nccl-tests printed its summary) and no worker failed, a finding whose every line comes after the
finish of its file (or, by time, after the first finish) is demoted to context, and so is a setting that differs
between nodes (which broke nothing in a job that finished).
"""

from __future__ import annotations

import polars as pl

from nccllens.report.model import Finding, RankStatus

FAILED = ("torchrun.failure", "torchrun.root_cause", "torchrun.worker_failed", "slurm.step_error",
          "harness.wallclock", "torchrun.signal_received")
DONE = pl.col("kind").is_in(["progress.bench_done", "progress.finished"]) | (
    pl.col("kind").eq("torchrun.state")
    & pl.col("value").fill_null("").str.contains(r"SUCCEEDED|successfully finished"))
KEEP = ("job_killed",)
SLOW = ("straggler",)
# a setting or version that differs between nodes: in a job that finished and failed nowhere it broke nothing (a
# transport that differs is another matter: the job ran slower, AN-TRANSPORT-MISMATCH stays)
HARMLESS_WHEN_FINISHED = ("AN-CONFIG-MISMATCH",)
# a transport that fell back (sockets, no GPUDirect RDMA) in a training run that finished: the run is done, slower
# than it could have been; the warning stays as context. A benchmark's summary is not such a finish: its
# bandwidth is the result asked for, and a fallback is what the question is about
SLOWER_WHEN_FINISHED = ("ib_fallback",)
TRAINED = DONE & pl.col("kind").ne("progress.bench_done")
# a benchmark's own verdict that its results were wrong (nccl-tests' "Out of bounds values : 56 FAILED"): a finish
# that reports a failure, so nothing about it was survived or printed after the work was done
WRONG_RESULT = pl.col("kind") == "progress.bench_wrong"


def _finish_points(events: pl.DataFrame) -> tuple[dict[str, int], object] | None:
    """(file → line of its first finish marker, the earliest finish time) when the whole job finished."""
    done = events.filter(DONE)
    if not done.height:
        return None
    launched = events.filter(pl.col("kind").cast(pl.String).str.starts_with("torchrun.") & pl.col("host").is_not_null())
    hosts_done = set(done["host"].drop_nulls().to_list())
    if launched.height and not set(launched["host"].to_list()) <= hosts_done:
        return None  # a node whose agent logged but never said its workers succeeded
    firsts = dict(done.group_by("file").agg(pl.col("line").min()).iter_rows())
    return {str(f): int(line) for f, line in firsts.items()}, done["ts"].drop_nulls().min()


def quiet_after_finish(findings: list[Finding], events: pl.DataFrame, status: list[RankStatus]) -> None:
    """Demote (in place) the findings that only quote lines printed after the job finished."""
    if not events.height or events.filter(pl.col("kind").is_in(FAILED)).height:
        return
    if any(s.exit_code not in (None, 0) for s in status):
        return
    points = _finish_points(events)
    if points is None:
        return
    first_line, first_ts = points
    finish = set(events.filter(DONE | WRONG_RESULT).select(pl.col("file").cast(pl.String), "line").iter_rows())
    trained = bool(events.filter(TRAINED).height)
    for f in findings:
        if f.rule in HARMLESS_WHEN_FINISHED and f.severity != "info":
            f.severity, f.role = "info", "context"
            f.confidence = round(min(f.confidence, 0.3), 2)
        elif trained and f.category in SLOWER_WHEN_FINISHED and f.severity == "warning" and f.role == "cause":
            f.role = "context"
    for f in findings:
        if f.severity not in ("critical", "error") or f.category in KEEP or not f.evidence:
            continue
        if all((str(e.file), e.line) in finish for e in f.evidence):
            continue  # a finding about the finish lines themselves (what they say is wrong), not noise after them
        after = []
        for e in f.evidence:
            line = first_line.get(str(e.file))
            ts = getattr(e, "ts", None)
            if line is not None:
                after.append(e.line > line)
            elif first_ts is not None and ts:
                after.append(str(ts) >= first_ts.isoformat())
            else:
                after.append(False)
        if all(after):
            f.severity, f.role = "info", "context"
            f.confidence = round(min(f.confidence, 0.3), 2)


# what shows a worker group came back after a failure: it rendezvoused, initialised or made progress again
_AGAIN = ("torchrun.rendezvous", "nccl.init_start", "nccl.init_complete", "progress.step", "progress.count",
          "progress.bar")


def _after(rows: pl.DataFrame, marks: pl.DataFrame) -> pl.DataFrame:
    """Rows of ``rows`` that come after the last of ``marks``: later in the same file, a later attempt, or
    (across files) a later time."""
    last_line = marks.group_by("file").agg(pl.col("line").max().alias("mark_line"))
    last_attempt = marks["attempt"].drop_nulls().max()
    last_ts = marks["ts"].drop_nulls().max()
    joined = rows.join(last_line, on="file", how="left")
    later = pl.col("mark_line").is_not_null() & (pl.col("line") > pl.col("mark_line"))
    if last_attempt is not None:
        later = later | (pl.col("attempt") > last_attempt).fill_null(False)
    if last_ts is not None:
        later = later | (pl.col("mark_line").is_null() & (pl.col("ts") > last_ts).fill_null(False))
    return joined.filter(later)


def recovered_by_restart(findings: list[Finding], events: pl.DataFrame,
                         status: list[RankStatus] | None = None) -> bool:
    """A failure the elastic agent recovered from: after the last worker failure the worker group came back
    (rendezvous, NCCL init or progress again) and then the job said it finished, with no failure after that.
    The findings about the failed attempt are demoted (in place) to warnings giving context: the run
    succeeded, and the transient failure stays visible. Without any worker failure, errors the job went on
    past and then finished are survived ones (``_survived``). Returns whether the job recovered."""
    if not events.height or not findings:
        return False
    failed = events.filter(pl.col("kind").is_in(FAILED))
    done = events.filter(DONE)
    if not done.height:
        return False
    if not failed.height:
        if events.filter(WRONG_RESULT).height:
            return False  # the finish itself says the results were wrong: no error was survived
        ends = dict(events.filter(pl.col("kind") == "other.file_end").select("file", "line").iter_rows())
        return _survived(findings, done, status or [], ends)
    if failed.filter(pl.col("kind").is_in(["harness.wallclock", "torchrun.signal_received", "slurm.step_error"])).height:
        return False
    again = _after(events.filter(pl.col("kind").is_in(_AGAIN)), failed)
    if not again.height or not _after(done, failed).height:
        return False
    for f in findings:
        if f.severity in ("critical", "error") and f.category not in KEEP:
            f.severity, f.role = "warning", "context"
            f.confidence = round(min(f.confidence, 0.3), 2)
    return True


# an error this close to the end of its log ended it: the process died of it
ENDED_BY = 2  # lines between the error and its file's last line, at most


def _survived(findings: list[Finding], done: pl.DataFrame, status: list[RankStatus], ends: dict) -> bool:
    """No worker failed and none exited non-zero, and the job said it finished after every serious finding's
    lines (later in the same file, or not earlier in time where both are timed; an untimed error that ends another
    log is not known to come first): the errors were caught and the job went on (a store wait
    that timed out for an optional key, a warning logged with its traceback). They become warning context."""
    if any(s.exit_code not in (None, 0) for s in status):
        return False
    serious = [f for f in findings if f.severity in ("critical", "error") and f.category not in KEEP]
    if not serious or any(f.category in SLOW for f in findings if f.severity in ("critical", "error")):
        return False  # a job that finished slowly is still a straggler's story
    last_line = dict(done.group_by("file").agg(pl.col("line").max()).iter_rows())
    last_ts = done["ts"].drop_nulls().max()
    for f in serious:
        for e in f.evidence:
            line = last_line.get(e.file)
            if line is not None:
                if e.line >= line:
                    return False
            elif last_ts is not None and e.ts and e.ts > last_ts.isoformat():
                return False
            elif not e.ts and ends.get(e.file) is not None and ends[e.file] - e.line <= ENDED_BY:
                return False  # untimed, in a log it ended: nothing says it came before the finish
            # (else a file without a finish line and without times: the finish of the job counts)
    for f in serious:
        f.severity, f.role = "warning", "context"
        f.confidence = round(min(f.confidence, 0.3), 2)
    return True
