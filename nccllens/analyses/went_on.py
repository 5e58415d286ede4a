"""Errors a rank went on past: an error followed, in the same log, by training progress is not what stopped it.

Old NCCL versions, data pipelines and framework callbacks print errors that the job survives: a remote
allocator's failed allocation, a retried connection, a caught exception with its traceback. When the same
file shows training progress (steps, losses, bars) after every line of a serious finding, from the finding's
own rank and host as far as both say, and nothing failed after that progress, the finding becomes warning
context: what it reports happened, and the run kept training. No finish is needed for this (a pasted excerpt
rarely shows one), but any failure after the progress, a worker failure or a non-zero exit keeps the finding.
"""

from __future__ import annotations

import polars as pl

from nccllens.analyses.shutdown import FAILED, KEEP, SLOW
from nccllens.report.model import Finding, RankStatus

PROGRESS = ("progress.step", "progress.bar")
MIN_AFTER = 2  # progress lines after the finding's last line in its file


def _went_on(f: Finding, progress: pl.DataFrame, errors: pl.DataFrame) -> bool:
    for e in f.evidence:
        mine = progress.filter((pl.col("file") == e.file) & (pl.col("line") > e.line))
        if f.ranks:
            mine = mine.filter(pl.col("rank").is_null() | pl.col("rank").is_in(list(f.ranks)))
        if f.hosts:
            mine = mine.filter(pl.col("host").is_null() | pl.col("host").is_in(list(f.hosts)))
        if mine.height < MIN_AFTER:
            return False
        resumed = int(mine["line"].min())
        if errors.filter((pl.col("file") == e.file) & (pl.col("line") > resumed)).height:
            return False  # it failed after all, later in the same log
    return True


def _summary_points(summaries: pl.DataFrame) -> pl.DataFrame:
    """The first and last line of each summarised run of progress lines, as points like the events'."""
    rows = summaries.filter(pl.col("family").cast(pl.String) == "progress")
    cols = [pl.col("file").cast(pl.String), "line", pl.col("rank").cast(pl.Int64), pl.col("host").cast(pl.String)]
    first = rows.with_columns(pl.col("first_line").cast(pl.Int64).alias("line")).select(cols)
    last = rows.filter(pl.col("count") >= 2).with_columns(pl.col("last_line").cast(pl.Int64).alias("line")).select(cols)
    return pl.concat([first, last])


def quiet_went_on(findings: list[Finding], events: pl.DataFrame, status: list[RankStatus],
                  summaries: pl.DataFrame | None = None) -> None:
    """Demote (in place) serious findings whose every line is followed by its rank's training progress."""
    serious = [f for f in findings if f.severity in ("critical", "error") and f.category not in KEEP + SLOW
               and f.evidence]
    if not serious or not events.height or events.filter(pl.col("kind").is_in(FAILED)).height:
        return
    if any(s.exit_code not in (None, 0) for s in status):
        return
    kind = pl.col("kind").cast(pl.String)
    # a bar at 0 is one drawn as a loop starts or closes (tqdm redraws it when an exception unwinds): no progress
    started = ~((kind == "progress.bar") & (pl.col("seq").fill_null(0) == 0))
    progress = events.filter(kind.is_in(PROGRESS) & started).select(pl.col("file").cast(pl.String), pl.col("line").cast(pl.Int64),
                                                           pl.col("rank").cast(pl.Int64), pl.col("host").cast(pl.String))
    if summaries is not None and summaries.height:
        progress = pl.concat([progress, _summary_points(summaries)])
    if not progress.height:
        return
    errors = events.filter(pl.col("level").is_in(["error", "critical"])).select(pl.col("file").cast(pl.String), "line")
    for f in serious:
        if _went_on(f, progress, errors):
            f.severity, f.role = "warning", "context"
            f.confidence = round(min(f.confidence, 0.3), 2)
