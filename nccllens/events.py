"""The one normalized event table: its schema, its version, and how it is built.

See docs/events.md for what each column means and the stable event kinds.
"""

from __future__ import annotations

from collections.abc import Iterable

import polars as pl

# 2: the summary table of the dense families (``nccllens.summaries``) beside it; 3: repeated events
# counted (``count``, ``last_line``, ``last_ts``)
EVENTS_SCHEMA_VERSION = 3
READABLE_VERSIONS = ("1", "2", "3")  # a version 1 shard reads as events without summaries, 1 and 2 without counts
REPEAT_COLUMNS = ("count", "last_line", "last_ts")  # absent from version 1 and 2 shards: null there

# Columns of few distinct values are Categorical: 4 bytes a row instead of a 16-byte string view plus the
# text (a file path, repeated on every event of the file). They compare with plain strings (==, is_in),
# sort by their text and join with each other; string functions need ``.cast(pl.String)`` first.
SCHEMA: dict[str, pl.DataType] = {
    "file": pl.Categorical(),
    "line": pl.UInt32(),
    "host": pl.Categorical(),
    "pid": pl.Int64(),
    "rank": pl.Int32(),
    "local_rank": pl.Int32(),
    "attempt": pl.Int32(),
    "ts": pl.Datetime("us"),
    "ts_kind": pl.Categorical(),
    "ts_rel": pl.Float64(),
    "family": pl.Categorical(),
    "level": pl.Categorical(),
    "kind": pl.Categorical(),
    "message": pl.String(),
    "raw": pl.String(),
    "seq": pl.Int64(),
    "op": pl.Categorical(),
    "pg": pl.Categorical(),
    "timeout_ms": pl.Int64(),
    "elapsed_ms": pl.Int64(),
    "last_enqueued": pl.Int64(),
    "last_completed": pl.Int64(),
    "exit_code": pl.Int32(),
    "signal": pl.Categorical(),
    "xid": pl.Int32(),
    "pci": pl.Categorical(),
    "peer": pl.String(),
    "iface": pl.Categorical(),
    "comm_id": pl.Categorical(),
    "nranks": pl.Int32(),
    "version": pl.Categorical(),
    "exc_type": pl.Categorical(),
    "error_code": pl.Int32(),
    "key": pl.String(),
    "value": pl.String(),
    "detail": pl.String(),
    # schema version 3: an event that stands for repeated lines (``nccllens.repeats``); null for one line
    "count": pl.Int64(),
    "last_line": pl.UInt32(),
    "last_ts": pl.Datetime("us"),
}

COLUMNS = tuple(SCHEMA)
TYPED_COLUMNS = COLUMNS[COLUMNS.index("seq") :]
LEVELS = ("trace", "debug", "info", "warning", "error", "critical")

_INT_LIMITS = {
    pl.Int32(): (-(2**31), 2**31 - 1),
    pl.Int64(): (-(2**63), 2**63 - 1),
    pl.UInt32(): (0, 2**32 - 1),
}


def _coercion(dtype: pl.DataType) -> str | tuple[int, int] | None:
    """How :func:`clean` coerces a value of this column: int limits, "float", "str" or None (as is)."""
    if dtype in _INT_LIMITS:
        return _INT_LIMITS[dtype]
    if dtype == pl.Float64():
        return "float"
    if dtype in (pl.String(), pl.Categorical()):
        return "str"
    return None


MAX_RANK = 1_000_000  # a rank or world size beyond this is a malformed line, not a job (range(2**31))
_RANK_BOUNDS = {"rank": (0, MAX_RANK - 1), "local_rank": (0, MAX_RANK - 1), "nranks": (1, MAX_RANK)}
_UNKNOWN = object()


def coercions(schema: dict[str, pl.DataType]) -> dict:
    """Column → how :func:`clean` coerces its values, once per table, in plain Python values (comparing
    polars dtypes per value was most of the cleaning's time). Ranks and world sizes have the plausible
    bounds above; every other integer column, its type's range."""
    how = {name: _coercion(dtype) for name, dtype in schema.items()}
    how.update({name: bounds for name, bounds in _RANK_BOUNDS.items() if name in how})
    return how


_COERCIONS = coercions(SCHEMA)


def clean(row: dict, how: dict | None = None) -> dict:
    """Coerce one row dict to a table's schema (``how``: its :func:`coercions`; default the event table's):
    drop unknown keys and None values (the table fills them with nulls), drop integers outside the column's
    range (a step of 10^20 in a log is unknown, not a crash), stringify odd values. Only the keys a row has
    are visited: a parser sets a dozen of the 36 columns."""
    how = _COERCIONS if how is None else how
    out = {}
    for name, value in row.items():
        kind = how.get(name, _UNKNOWN)
        if value is None or kind is _UNKNOWN:
            continue
        if kind is None:
            out[name] = value
        elif kind == "str":  # String and Categorical columns
            out[name] = value if isinstance(value, str) else str(value)
        elif kind == "float":
            try:
                out[name] = float(value)
            except (TypeError, ValueError, OverflowError):
                pass
        else:
            try:
                value = int(value)
            except (TypeError, ValueError, OverflowError):
                continue
            if kind[0] <= value <= kind[1]:
                out[name] = value
    return out


_EMPTY: pl.DataFrame | None = None


def empty() -> pl.DataFrame:
    """An event table with no rows (built once: constructing a 36-column frame is not free)."""
    global _EMPTY
    if _EMPTY is None:
        _EMPTY = pl.DataFrame(schema=SCHEMA)
    return _EMPTY


def from_rows(rows: Iterable[dict]) -> pl.DataFrame:
    """Build an event table from parser output (a list of dicts), in schema order and types."""
    cleaned = [clean(r) for r in rows]
    if not cleaned:
        return empty()
    return pl.DataFrame(cleaned, schema=SCHEMA)  # a key a row lacks is null there


def concat(frames: Iterable[pl.DataFrame]) -> pl.DataFrame:
    frames = [f for f in frames if f.height]
    if not frames:
        return empty()
    return pl.concat([f.select(COLUMNS).cast(SCHEMA) for f in frames], how="vertical")


def assemble(frames: list[pl.DataFrame]) -> pl.DataFrame:
    """``concat(frames)`` in one contiguous chunk, built a column at a time: each column of the parts is
    released as soon as its contiguous copy exists, so the parts and the whole are never all held at
    once (4,096 ranks: the parts were ~40 MiB and the whole ~33). Empties ``frames``."""
    parts = [f.select(COLUMNS).cast(SCHEMA) for f in frames if f.height]
    frames.clear()
    if len(parts) < 2:
        return parts[0].rechunk() if parts else empty()
    held = [p.get_columns() for p in parts]  # a part's columns, each dropped once copied
    del parts
    columns = []
    for i in range(len(COLUMNS)):
        pieces = [cols[i] for cols in held]
        for cols in held:
            cols[i] = None
        columns.append(pl.concat(pieces).rechunk())
        del pieces
    return pl.DataFrame(columns)


def with_repeat_columns(table: pl.DataFrame) -> pl.DataFrame:
    """A table of schema version 1 or 2 with the repeat columns of version 3, null: one line an event."""
    return table.with_columns(pl.lit(None, SCHEMA[c]).alias(c) for c in REPEAT_COLUMNS if c not in table.columns)


def earliest_first() -> list[pl.Expr]:
    """Sort keys for time order: ``ts`` (nulls last), then file, then line. The file sorts by its rank
    among the files, which orders as its text does without building a text sort key for every row
    (sorting 60,000 events on the three columns took ~30 MiB; on the rank, ~8)."""
    return [pl.col("ts"), pl.col("file").rank("dense"), pl.col("line")]


def sort(events: pl.DataFrame) -> pl.DataFrame:
    """The canonical order: by file, then line, then kind. Deterministic whatever the input order."""
    return events.sort(["file", "line", "kind", "message"], nulls_last=True, maintain_order=True)


def destroyed(largest: pl.Expr) -> pl.Expr:
    """NCCL's ``comm 0x.. rank 3 nranks 8 ... - Destroy COMPLETE`` for a communicator of ``largest`` ranks: the
    rank tore that communicator down cleanly (destroy_process_group at the end of its job)."""
    return ((pl.col("kind") == "nccl.teardown") & (pl.col("value").cast(pl.String) == "Destroy COMPLETE")
            & (pl.col("nranks") == largest))
