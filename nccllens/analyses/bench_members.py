"""nccl-tests processes that did not form one job.

An nccl-tests binary started by ``mpirun`` prints, in its header, one ``Rank  N Group  G Pid  P on host device  D``
line per GPU of the whole job. Built without MPI (``make`` without ``MPI=1``, or a stale build), every process
runs as a job of its own: each header says ``Rank 0``, so one header lists the same rank for several processes.
The measurement then times each process alone (one GPU, no network), whatever mpirun was asked for. Where the
header was not pasted, the end of the run says it: every process prints its own ``# Avg bus bandwidth`` summary,
so two summaries follow each other with no result row between them.
"""

from __future__ import annotations

import polars as pl

from nccllens.analyses.common import PerLang, make_finding
from nccllens.analyses.reads import reads
from nccllens.report.model import Finding

HEADER_GAP = 3  # lines between two member lines of one header, at most (other processes print in between)


@reads("progress.bench_rank", "progress.bench_start", "progress.bench_row", "progress.bench_table",
       "progress.bench_done")
def separate_processes(events: pl.DataFrame, lang: str) -> list[Finding]:
    members = events.filter((pl.col("kind") == "progress.bench_rank") & pl.col("pid").is_not_null())
    if members.height < 2:
        return _summaries_back_to_back(events, lang)
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
    n, rank = block["pid"].n_unique(), int(twice["rank"][0])
    return [make_finding("AN-BENCH-SEPARATE-PROCESSES", lang, evidence.head(6), hosts=hosts, processes=str(n),
                         how=PerLang(en=f"each says it is rank {rank}", zh=f"每个都说自己是 rank {rank}"),
                         seen=PerLang(en=f"The nccl-tests header lists rank {rank} for {n} different processes",
                                      zh=f"nccl-tests 的表头里有 {n} 个不同进程都是 rank {rank}"))]


def _summaries_back_to_back(events: pl.DataFrame, lang: str) -> list[Finding]:
    """Two ``# Avg bus bandwidth`` summaries in one log with no header or result row between them."""
    bench = events.filter(pl.col("kind").cast(pl.String).is_in(
        ["progress.bench_start", "progress.bench_row", "progress.bench_table", "progress.bench_done"]))
    avg = pl.col("message").cast(pl.String).fill_null("").str.contains("Avg bus bandwidth")
    bench = bench.filter((pl.col("kind") != "progress.bench_done") | avg)
    if bench.filter(pl.col("kind") == "progress.bench_done").height < 2:
        return []
    rows = bench.sort(["file", "line"]).with_columns(
        (pl.col("kind") == "progress.bench_done").alias("avg"),
        (pl.col("kind") == "progress.bench_done").shift(1).over("file").alias("after_avg"))
    twice = rows.filter(pl.col("avg") & pl.col("after_avg").fill_null(False))
    if not twice.height:
        return []
    file = twice["file"][0]
    evidence = rows.filter((pl.col("file") == file) & pl.col("avg"))
    hosts = sorted({str(h) for h in evidence["host"].drop_nulls().to_list()})
    n = evidence.height
    return [make_finding("AN-BENCH-SEPARATE-PROCESSES", lang, evidence.head(6), hosts=hosts, processes=str(n),
                         how=PerLang(en="each printed its own result summary", zh="每个进程各打印了一份结果汇总"),
                         seen=PerLang(en=f"{n} '# Avg bus bandwidth' summaries follow each other with no result row "
                                      "between them", zh=f"{n} 份 '# Avg bus bandwidth' 汇总前后紧挨着，中间没有任何结果行"))]
