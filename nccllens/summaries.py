"""The summary table: dense families (NCCL transport, ring/tree dumps, per-operation COLL lines,
training progress) as one row per (file, process, family, key) instead of one event per line.

Part of the event model since schema version 2 (docs/events.md); ``parse.dense`` builds the rows in
the workers, Parquet shards carry them in their metadata (``nccllens.summaries``), and the analyses get
them beside the event table. Memory grows with ranks and communicators, not with lines.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from datetime import datetime

import polars as pl

from nccllens import events as ev

SCHEMA: dict[str, pl.DataType] = {
    "file": pl.Categorical(),
    "host": pl.Categorical(),
    "pid": pl.Int64(),
    "rank": pl.Int32(),
    "local_rank": pl.Int32(),
    "attempt": pl.Int32(),
    "family": pl.Categorical(),  # nccl.transport, nccl.graph, nccl.coll, progress
    "key": pl.String(),  # transport: via; graph: Channel/Ring/Tree/Trees; coll: comm pointer; progress: shape
    "count": pl.Int64(),
    "first_line": pl.UInt32(),
    "last_line": pl.UInt32(),
    "first_ts": pl.Datetime("us"),
    "last_ts": pl.Datetime("us"),
    "last_ts_rel": pl.Float64(),  # TRACE: seconds since NCCL's debug init
    "first_seq": pl.Int64(),  # coll: opCount; progress: step; transport: the channel's own rank
    "last_seq": pl.Int64(),
    "op": pl.Categorical(),  # coll: the last op (AllReduce...)
    "size": pl.Int64(),  # coll: its element count
    "dtype": pl.Int32(),
    "redop": pl.Int32(),
    "nranks": pl.Int32(),
    "value": pl.String(),  # transport: send / receive
    "raw": pl.String(),  # the last line, as evidence
}
COLUMNS = tuple(SCHEMA)
_COERCIONS = ev.coercions(SCHEMA)
_EMPTY: pl.DataFrame | None = None


def empty() -> pl.DataFrame:
    global _EMPTY
    if _EMPTY is None:
        _EMPTY = pl.DataFrame(schema=SCHEMA)
    return _EMPTY


def from_rows(rows: list[dict]) -> pl.DataFrame:
    if not rows:
        return empty()
    return pl.DataFrame([ev.clean(r, _COERCIONS) for r in rows], schema=SCHEMA)  # a step of 10^20: null


def concat(frames: Iterable[pl.DataFrame]) -> pl.DataFrame:
    frames = [f.select(COLUMNS).cast(SCHEMA) for f in frames if f is not None and f.height]
    if not frames:
        return empty()
    return pl.concat(frames, how="vertical").sort(["file", "first_line", "family", "key"], maintain_order=True)


def channel_ranks(summaries: pl.DataFrame) -> pl.DataFrame:
    """(host, pid) → the rank a process's own NCCL transport lines give it (``Channel 00 : 2[1040] -> 0[1020]``
    is written by rank 2), where all its transport lines name one rank: NCCL INFO lines carry the CUDA device,
    not the rank, so without ``Init COMPLETE`` lines these are what ties a process to its rank."""
    rows = summaries.filter((pl.col("family") == "nccl.transport") & pl.col("pid").is_not_null()
                            & pl.col("host").is_not_null() & pl.col("first_seq").is_not_null())
    if not rows.height:
        return pl.DataFrame(schema={"host": summaries.schema["host"], "pid": pl.Int64, "rank": pl.Int32})
    seqs = pl.concat_list("first_seq", "last_seq").list.drop_nulls()
    return (rows.with_columns(seqs.alias("own")).explode("own").group_by(["host", "pid"])
            .agg(pl.col("own").n_unique().alias("n"), pl.col("own").first().cast(pl.Int32).alias("rank"))
            .filter(pl.col("n") == 1).select("host", "pid", "rank"))


def file_hosts(summaries: pl.DataFrame) -> pl.DataFrame:
    """(file, host) of every host the summarised lines of a file name."""
    return summaries.filter(pl.col("host").is_not_null()).select("file", "host").unique()


def attribute(summaries: pl.DataFrame, events: pl.DataFrame) -> pl.DataFrame:
    """Fill ``rank`` and ``host`` from the (attributed) event table: (host, pid) → rank as NCCL's Init lines
    give it, then a file's one rank, then a file's one host."""
    if not summaries.height or not events.height:
        return summaries
    by_pid = (events.filter(pl.col("pid").is_not_null() & pl.col("rank").is_not_null() & pl.col("host").is_not_null())
              .group_by(["host", "pid"]).agg(pl.col("rank").mode().min().alias("rank_map")))
    per_file = (events.filter(pl.col("rank").is_not_null()).group_by("file")
                .agg(pl.col("rank").n_unique().alias("n"), pl.col("rank").first().alias("file_rank"),
                     pl.col("host").drop_nulls().first().alias("file_host"))
                .select("file", pl.when(pl.col("n") == 1).then(pl.col("file_rank")).alias("file_rank"), "file_host"))
    out = summaries.join(by_pid, on=["host", "pid"], how="left", maintain_order="left")
    out = out.join(per_file, on="file", how="left", maintain_order="left")
    nccl = pl.col("family").cast(pl.String).str.starts_with("nccl.")
    rank = pl.coalesce(pl.col("rank"), pl.col("rank_map"), pl.when(nccl | pl.col("pid").is_null())
                       .then(pl.col("file_rank")))
    return out.with_columns(rank.alias("rank"), pl.coalesce("host", "file_host").alias("host")).select(COLUMNS)


def to_json(summaries: pl.DataFrame) -> str:
    """The table as JSON text (Parquet shards carry it in their key-value metadata)."""
    rows = summaries.select(COLUMNS).to_dicts()
    return json.dumps([{k: (v.isoformat() if isinstance(v, datetime) else v) for k, v in r.items()} for r in rows])


def from_json(text: str) -> pl.DataFrame:
    rows = json.loads(text)
    for r in rows:
        for col in ("first_ts", "last_ts"):
            if r.get(col):
                r[col] = datetime.fromisoformat(r[col])
    return from_rows(rows)
