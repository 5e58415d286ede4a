"""Repeated events are counted, not stored (issue 19): a job that prints one error a million times gives
one event with a count, its first and last line and its first and last time, as the dense families'
summaries do (docs/events.md, schema version 3).

Two steps, both per file in the extraction workers and vectorised:

- ``thin`` (before parsing, on one block's surviving lines): where the surviving lines repeat a cycle of
  1 to ``MAX_PERIOD`` lines ``MIN_REPEATS`` times or more (one line spammed, or a few lines printed together again and again), only
  the first and the last copies of the cycle reach the parsers; every copy dropped between them is
  counted on the line it repeats. Lines compare equal when they differ only in their timestamps. The
  parsers see the same text with fewer middle repetitions, so a record (a traceback) is never cut.
- ``collapse`` (after parsing, on one file's events): events printed by the same line repeated (their raw
  line and message equal but for timestamps and pointers) and equal in every other field but their line
  and time become one when they stand for ``MIN_REPEATS`` lines or more: the first occurrence, with ``count``, ``last_line`` and ``last_ts``. The same fact
  printed in another form (a worker's traceback and the launcher's failure table quoting it) stays apart. Ranks, hosts, result codes, Xids, signals,
  sequence numbers and every other number of a message stay part of what makes events distinct.
"""

from __future__ import annotations

import polars as pl

# a line printed a few times is a few facts worth showing each (two processes claiming one rank, a retry);
# from this many copies on it is a repetition: counted, not stored
MIN_REPEATS = 16
MAX_PERIOD = 8  # lines in a repeated cycle (e.g. the 8 ranks of a node printing the same warning in turn)
# what differs between copies of one repeated line without being a fact about it: the time it was printed
TIME = (r"\d{4}-\d\d-\d\d(?:[T ]\d\d:\d\d(?::\d\d(?:[.,]\d+)?)?(?:Z|[+-]\d\d:?\d\d)?)?"
        r"|\b\d\d?:\d\d:\d\d(?:[.,]\d+)?|\[\s*\d+\.\d+\]")
ADDRESS = r"\b0x[0-9a-fA-F]{12,}\b"  # a pointer; communicator ids and bus ids are columns of their own
# an event's identity: everything but where and when it was printed (``line``, ``ts``, ``raw``) and the count
NOT_KEY = ("line", "raw", "ts", "ts_kind", "ts_rel", "message", "count", "last_line", "last_ts")
MASKED = ("raw", "message")  # compared with timestamps and pointers masked


def thin(kept: pl.DataFrame) -> tuple[pl.DataFrame, dict[int, tuple[int, int]]]:
    """``kept`` (surviving rows of one block, in order: ``row``, ``line``, ``raw``) without the middle
    copies of repeated cycles, and for each line kept, how many dropped lines repeat it and the last."""
    if kept.height < 3:
        return kept, {}
    frame = kept.with_columns(pl.col("raw").str.replace_all(TIME, "\x00").hash().alias("_h"),
                              pl.lit(0, pl.UInt64).alias("_w"), pl.col("line").alias("_last"))
    if frame["_h"].n_unique() == frame.height:  # nothing repeats: the usual case
        return kept, {}
    for period in range(1, MAX_PERIOD + 1):
        if frame.height < 3 * period:
            break
        frame = _drop_middle_cycles(frame, period)
    weights = frame.filter(pl.col("_w") > 0).select("line", "_w", "_last")
    out: dict[int, tuple[int, int]] = {}
    for line, w, last in weights.iter_rows():
        had = out.get(line, (0, line))
        out[line] = (had[0] + w, max(had[1], last))
    return frame.drop("_h", "_w", "_last"), out


def _drop_middle_cycles(frame: pl.DataFrame, p: int) -> pl.DataFrame:
    """Rows that repeat the row ``p`` before them form runs; of a run of L rows (1 + L // p copies of the
    cycle), the copies between the first and the last are dropped, each counted on the row it repeats
    in the copy just before the run."""
    i = pl.int_range(pl.len(), dtype=pl.Int64)
    eq = (pl.col("_h") == pl.col("_h").shift(p)).fill_null(False)
    f = frame.with_columns(eq.alias("_eq"), i.alias("_i"))
    f = f.with_columns((pl.col("_eq") & ~pl.col("_eq").shift(1, fill_value=False)).cum_sum().alias("_run"))
    start = pl.col("_i").min().over("_run", "_eq")
    length = pl.len().over("_run", "_eq")
    pos = pl.col("_i") - start
    drop = pl.col("_eq") & (pos < (length // p - 1) * p) & (length // p + 1 >= MIN_REPEATS)
    f = f.with_columns(drop.alias("_drop"), (start - p + pos % p).alias("_rep"))
    dropped = f.filter(pl.col("_drop"))
    if not dropped.height:
        return frame
    add = dropped.group_by("_rep").agg((pl.col("_w") + 1).sum().alias("_add"), pl.col("_last").max().alias("_to"))
    f = f.filter(~pl.col("_drop")).join(add, left_on="_i", right_on="_rep", how="left", maintain_order="left")
    return f.with_columns(pl.col("_w") + pl.col("_add").fill_null(0),
                          pl.max_horizontal("_last", "_to").alias("_last")).select(frame.columns)


def weigh(rows: list[dict], weights: dict[int, tuple[int, int]]) -> list[dict]:
    """Count on each event the dropped lines that repeat its line, and the last of them (``thin``)."""
    if weights:
        for r in rows:
            got = weights.get(r.get("line"))
            if got:
                r["count"] = (r.get("count") or 1) + got[0]
                r["last_line"] = max(r.get("last_line") or 0, got[1])
    return rows


def lines_of(events: pl.DataFrame) -> int:
    """How many log lines the events stand for (a repeated event counts each of its lines)."""
    if "count" not in events.columns:
        return events.height
    return int(events["count"].fill_null(1).sum())


def latest() -> pl.Expr:
    """The latest time of the events (a repeated event's last repetition included), for ``agg``."""
    return pl.max_horizontal("ts", "last_ts").max().alias("ts")


def last_line() -> pl.Expr:
    """The line of an event's last repetition (its own line when it was not repeated)."""
    return pl.coalesce("last_line", "line")


def _key(message: pl.Expr) -> pl.Expr:
    return message.str.replace_all(TIME, "\x00").str.replace_all(ADDRESS, "0x\x00")


def collapse(events: pl.DataFrame) -> pl.DataFrame:
    """One event per distinct fact of each file: equal events become their first occurrence, with the
    lines they stand for in ``count`` and the last one's line and time in ``last_line`` and ``last_ts``."""
    if events.height < 2:
        return events
    keys = [c for c in events.columns if c not in NOT_KEY]
    masked = [f"_{c}" for c in MASKED]
    frame = events.sort("line", "kind", maintain_order=True).with_columns(
        _key(pl.col(c)).alias(f"_{c}") for c in MASKED)
    lines = pl.col("count").fill_null(1).cast(pl.Int64)
    if (frame.select(pl.struct([*keys, *masked]).n_unique()).item() == frame.height
            and not frame.select((lines > 1).any()).item()):
        return events  # nothing repeats
    frame = frame.with_columns((lines.sum().over([*keys, *masked]) >= MIN_REPEATS).alias("_many"))
    few = frame.filter(~pl.col("_many")).select(events.columns)
    frame = frame.filter(pl.col("_many"))
    if not frame.height:
        return events
    grouped = frame.group_by([*keys, *masked], maintain_order=True)
    out = grouped.agg(
        pl.all().exclude("count", "last_line", "last_ts").first(),  # the first occurrence, its own time
        pl.len().alias("_n"),
        pl.col("count", "last_line", "last_ts").first().name.suffix("_1"),
        lines.sum().alias("_count"),
        pl.coalesce("last_line", "line").max().alias("_last_line"),
        pl.coalesce("last_ts", "ts").drop_nulls().last().alias("_last_ts"),
    )
    one = pl.col("_n") == 1  # an event that did not repeat keeps what it had
    out = out.with_columns(
        pl.when(one).then(pl.col(f"{c}_1")).otherwise(pl.col(f"_{c}")).alias(c)
        for c in ("count", "last_line", "last_ts"))
    out = pl.concat([few, out.select(events.columns).cast(events.schema)])
    return out.sort("line", "kind", maintain_order=True)
