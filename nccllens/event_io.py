"""Showing, filtering and writing the event table (Parquet, CSV, JSON lines, Parquet shards)."""

from __future__ import annotations

from pathlib import Path

import polars as pl

from nccllens.events import EVENTS_SCHEMA_VERSION, SCHEMA, with_repeat_columns
from nccllens.interrupts import atomic_output
from nccllens.summaries import to_json
from nccllens.terminal import shown


def filter_events(events: pl.DataFrame, kinds: list[str], ranks: list[int]) -> pl.DataFrame:
    if kinds:
        exact = [k for k in kinds if not k.endswith("*")]
        prefixes = [k.rstrip("*") for k in kinds if k.endswith("*")]
        cond = pl.col("kind").is_in(exact)
        for p in prefixes:
            cond = cond | pl.col("kind").cast(pl.String).str.starts_with(p)
        events = events.filter(cond)
    if ranks:
        events = events.filter(pl.col("rank").is_in(ranks))
    return events


def show(events: pl.DataFrame) -> str:
    lines = [f"{'file:line':40} {'kind':26} {'rank':>5} {'host':14} message"]
    for r in events.select("file", "line", "kind", "rank", "host", "message").iter_rows():
        where = f"{r[0]}:{r[1]}"
        rank = "" if r[3] is None else str(r[3])
        lines.append(shown(f"{where[-40:]:40} {r[2]:26} {rank:>5} {(r[4] or '')[:14]:14} {(r[5] or '')[:160]}"))
    lines.append(f"{events.height} events")
    return "\n".join(lines) + "\n"


def _meta(summaries: pl.DataFrame | None) -> dict[str, str]:
    meta = {"nccllens.events_schema_version": str(EVENTS_SCHEMA_VERSION)}
    if summaries is not None and summaries.height:
        meta["nccllens.summaries"] = to_json(summaries)
    return meta


def write_events(events: pl.DataFrame, output: str | Path, summaries: pl.DataFrame | None = None) -> None:
    """Write the table; a path ending in / (or an existing folder) gets one Parquet shard per file.
    Parquet output carries the summary table of the dense families (``nccllens.summaries``) in its
    metadata, each shard its own file's rows."""
    as_dir = str(output).endswith(("/", "\\"))
    output = Path(output)
    if as_dir or output.is_dir():
        output.mkdir(parents=True, exist_ok=True)
        per_file = {} if summaries is None else summaries.partition_by("file", as_dict=True)
        for i, (key, shard) in enumerate(sorted(events.partition_by("file", as_dict=True).items(),
                                                key=lambda kv: str(kv[0]))):
            with atomic_output(output / f"events-{i:05d}.parquet") as tmp:
                shard.write_parquet(tmp, metadata=_meta(per_file.get(key)))
        return
    suffix = output.suffix.lower()
    if suffix not in (".parquet", ".csv", ".jsonl", ".ndjson", ".json"):
        raise ValueError(f"{output}: unknown output type (use .parquet, .csv, .jsonl or a folder/)")
    with atomic_output(output) as tmp:  # renamed once complete
        if suffix == ".parquet":
            events.write_parquet(tmp, metadata=_meta(summaries))
        elif suffix == ".csv":
            events.write_csv(tmp)
        else:
            events.write_ndjson(tmp)


def read_event_shards(paths: list[Path]) -> pl.DataFrame:
    frames = [with_repeat_columns(pl.read_parquet(p)).select(list(SCHEMA)).cast(SCHEMA) for p in paths]
    from nccllens.events import concat

    return concat(frames)
