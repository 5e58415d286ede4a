"""nccl-tests processes that did not form one job.

An nccl-tests binary started by ``mpirun`` prints, in its header, one ``Rank  N Group  G Pid  P on host device  D``
line per GPU of the whole job. Built without MPI (``make`` without ``MPI=1``, or a stale build), every process
runs as a job of its own: each header says ``Rank 0``, so one header lists the same rank for several processes.
The measurement then times each process alone (one GPU, no network), whatever mpirun was asked for.
"""

from __future__ import annotations

import polars as pl

from nccllens.analyses.common import make_finding
from nccllens.analyses.reads import reads
from nccllens.report.model import Finding

HEADER_GAP = 3  # lines between two member lines of one header, at most (other processes print in between)


@reads("progress.bench_rank")
def separate_processes(events: pl.DataFrame, lang: str) -> list[Finding]:
    members = events.filter((pl.col("kind") == "progress.bench_rank") & pl.col("pid").is_not_null())
    if members.height < 2:
        return []
    rows = members.select(pl.col("file").cast(pl.String), pl.col("line").cast(pl.Int64), "rank", "pid",
                          pl.col("host").cast(pl.String)).sort(["file", "line"])
    gap = pl.col("line") - pl.col("line").shift(1).over("file")
    headers = rows.with_columns((gap.is_null() | (gap > HEADER_GAP)).cum_sum().over("file").alias("header"))
    twice = (headers.group_by(["file", "header", "rank"]).agg(pl.col("pid").n_unique().alias("pids"))
             .filter(pl.col("pids") > 1))
    if not twice.height:
        return []
    file, header = twice.row(0)[:2]
    block = headers.filter((pl.col("file") == file) & (pl.col("header") == header))
    evidence = members.filter((pl.col("file").cast(pl.String) == file)
                              & pl.col("line").cast(pl.Int64).is_in(block["line"].to_list()))
    hosts = sorted({h for h in block["host"].to_list() if h})
    return [make_finding("AN-BENCH-SEPARATE-PROCESSES", lang, evidence.head(6), hosts=hosts,
                         processes=str(block["pid"].n_unique()), rank=str(int(twice["rank"][0])))]
