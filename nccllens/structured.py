"""Inputs that are not log lines: torchrun error files, flight-recorder dumps (JSON or pickle) and
event shards (Parquet), each read whole, within bounds (``data_bounds``): a file, a dump or a shard
over a bound raises :class:`OverBound`, and the pipeline lists it as skipped with the reason.
"""

from __future__ import annotations

import io
import itertools
from collections.abc import Iterable

import polars as pl

from nccllens import data_bounds
from nccllens import events as ev
from nccllens import summaries as sm
from nccllens.data_bounds import OverBound
from nccllens.ingest.layout import PathHints
from nccllens.parquet_bounds import check_shard

STRUCTURED = ("error_json", "flight_json", "flight_pickle", "events_parquet")
MAX_SHARD_BYTES = 256 << 20
MAX_SHARD_TEXT = 2 << 30  # text in all a shard's string columns, once decoded
MAX_FIELD = 1 << 20  # one text field (lines are cut at 1 MiB when read)

__all__ = ["STRUCTURED", "OverBound", "read_structured"]


def _whole(first: bytes, rest: Iterable[bytes], limit: int, what: str) -> bytes:
    parts, size = [], 0
    for block in itertools.chain((first,), rest):
        size += len(block)
        if size > limit:
            raise OverBound(f"{what} larger than {limit >> 20} MiB" if limit >= 1 << 20
                            else f"{what} larger than {limit} bytes")
        parts.append(block)
    return b"".join(parts)


def read_structured(kind: str, first: bytes, rest: Iterable[bytes], path: str,
                    hints: PathHints) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The events of one structured input, and its summary rows (an event shard of schema version 2
    carries them; nothing else has any)."""
    if kind == "events_parquet":
        data = _whole(first, rest, MAX_SHARD_BYTES, "event shard")
        try:
            return _read_shard(data)
        except (pl.exceptions.PolarsError, OSError, ValueError) as exc:
            if isinstance(exc, OverBound):
                raise
            raise OverBound(f"not a readable event shard ({str(exc).splitlines()[0][:120]})") from None
    data = _whole(first, rest, data_bounds.MAX_BYTES, kind.replace("_", " "))
    if kind != "flight_pickle":
        data_bounds.scan_json(data)
    return ev.from_rows(_special(kind, data, path, hints)), sm.empty()


def _read_shard(data: bytes) -> tuple[pl.DataFrame, pl.DataFrame]:
    """An event shard written by ``nccllens events -o DIR/`` (so extraction can run elsewhere): its events,
    and its summaries (schema version 2; a version 1 shard has none)."""
    meta = pl.read_parquet_metadata(io.BytesIO(data))
    version = meta.get("nccllens.events_schema_version")
    if version is not None and version not in ev.READABLE_VERSIONS:
        raise ValueError(f"event shard of schema version {version}; this nccllens reads versions "
                         f"{', '.join(ev.READABLE_VERSIONS)}")
    schema = pl.read_parquet_schema(io.BytesIO(data))
    missing = [c for c in ev.COLUMNS if c not in schema and c not in ev.REPEAT_COLUMNS]
    if missing:
        raise ValueError(f"not an nccllens event shard (missing columns: {', '.join(missing[:5])})")
    check_shard(data)  # rows and page sizes from the footer, before any page is decoded
    table = pl.read_parquet(io.BytesIO(data), columns=[c for c in ev.COLUMNS if c in schema])
    table = ev.with_repeat_columns(table)  # version 1 and 2 shards: one line an event
    # a dictionary page's one long string can stand for millions of rows: polars shares it (views), but
    # anything done with the text would not; measured without copying, before the cast
    texts = [c for c, t in table.schema.items() if t == pl.String]
    if texts and table.height:
        sizes = table.select(pl.sum_horizontal(pl.col(texts).str.len_bytes().sum()).alias("all"),
                             pl.max_horizontal(pl.col(texts).str.len_bytes().max()).alias("one")).row(0)
        if (sizes[0] or 0) > MAX_SHARD_TEXT or (sizes[1] or 0) > MAX_FIELD:
            raise OverBound(f"event shard of {(sizes[0] or 0) >> 20} MiB of text (bound {MAX_SHARD_TEXT >> 20} MiB, "
                            f"{MAX_FIELD >> 20} MiB a field)")
    text = meta.get("nccllens.summaries")
    if text is not None and len(text) > MAX_FIELD * 64:
        raise OverBound(f"event shard with {len(text) >> 20} MiB of summaries")
    summary = sm.from_json(text) if text else sm.empty()
    return table.select(ev.COLUMNS).cast(ev.SCHEMA), summary


def _special(kind: str, data: bytes, path: str, hints: PathHints) -> list[dict]:
    rows: list[dict] = []
    try:
        if kind == "error_json":
            from nccllens.parse.error_json import parse_error_json

            rows = parse_error_json(data, path)
        else:
            from nccllens.parse.flight import parse_flight

            rows = parse_flight(data, path, kind)
    except OverBound:
        raise
    except Exception as exc:  # noqa: BLE001 - report, never crash
        return [{"kind": "other.parser_error", "family": "other", "level": "warning", "file": path, "line": 1,
                 "message": f"could not read {kind.replace('_', ' ')}: {type(exc).__name__}: {exc}", "raw": ""}]
    for r in rows:
        r.setdefault("file", path)
        r.setdefault("line", 1)
        if r.get("host") is None:
            r["host"] = hints.host
        if r.get("rank") is None:
            r["rank"] = hints.rank
        if r.get("local_rank") is None:
            r["local_rank"] = hints.local_rank
        if r.get("attempt") is None:
            r["attempt"] = hints.attempt
    return rows
