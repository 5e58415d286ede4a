"""``localhost`` in a log names the machine that wrote the line, not a machine of its own.

torchrun's failure table says ``host : localhost`` for a ``--standalone`` job, while NCCL's lines in the
same console name the machine (``vm:966:966 [0] NCCL INFO ...``). Counted as two hosts, the job looks
like two nodes: local ranks are no longer global ranks, one host's ranks seem silent, and a finding
names ``localhost``. So, per file, a loopback name (``localhost``, ``localhost.localdomain``,
``127.x.y.z``, ``::1``) becomes the one real host the file's other lines name; where a file names no
real host, or several, the loopback name stays (it is all the logs say).
"""

from __future__ import annotations

import polars as pl

LOOPBACK = r"(?i)^(?:localhost(?:\.localdomain)?|127(?:\.\d{1,3}){3}|::1)$"


def _has_loopback(hosts: pl.Series) -> bool:
    names = hosts.cast(pl.String).drop_nulls().unique()
    return bool(names.str.contains(LOOPBACK).any())


def resolve_loopback(events: pl.DataFrame, file_hosts: pl.DataFrame | None = None) -> pl.DataFrame:
    """``events`` (columns file, host) with loopback host names replaced by their file's one real host.
    ``file_hosts``: (file, host) of lines summarised rather than kept as events; they name hosts too."""
    if not events.height or not _has_loopback(events["host"]):
        return events
    host_type = events.schema["host"]
    named = events.select("file", pl.col("host").cast(pl.String))
    if file_hosts is not None and file_hosts.height:
        named = pl.concat([named, file_hosts.select(pl.col("file").cast(events.schema["file"]),
                                                    pl.col("host").cast(pl.String))])
    real = (named.drop_nulls().filter(~pl.col("host").str.contains(LOOPBACK)).unique()
            .group_by("file").agg(pl.col("host").first().alias("real"), pl.len().alias("n"))
            .filter(pl.col("n") == 1).select("file", "real"))
    if not real.height:
        return events
    loop = pl.col("host").cast(pl.String).str.contains(LOOPBACK).fill_null(False)
    return (events.join(real, on="file", how="left", maintain_order="left")
            .with_columns(pl.when(loop & pl.col("real").is_not_null())
                          .then(pl.col("real").cast(host_type)).otherwise(pl.col("host")).alias("host"))
            .drop("real"))
