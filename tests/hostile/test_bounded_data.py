"""Flight-recorder dumps and event shards are bounded before anything is built (issue 19)."""

from __future__ import annotations

import io
import json
import pickle
import struct

import polars as pl
import pytest

from nccllens import data_bounds, parquet_bounds, structured
from nccllens.extract import events_from_text
from tests.hostile.planted import analyze_planted, inputs_of


def _shared(levels: int) -> list:
    value: list = []
    for _ in range(levels):
        value = [value, value]  # 2**levels elements once expanded, a few hundred bytes pickled
    return value


PICKLES = {
    "memo index": b"\x80\x04]r" + struct.pack("<I", 2**31) + b".",  # 9 bytes asking for a 16 GiB memo
    "text memo": b"\x80\x02(lp99999999999\n.",
    "bytes": b"\x80\x03B" + struct.pack("<I", 2**32 - 1),
    "bytearray": b"\x80\x05\x96" + struct.pack("<Q", 1 << 40),
    "shared": pickle.dumps({"version": "2.4", "entries": _shared(60)}),
    "deep": b"\x80\x02" + b"]" * 5000 + b"a" * 4999 + b".",  # lists 5,000 deep, built without recursion
}


@pytest.mark.parametrize("name", list(PICKLES))
def test_pickle_bombs_are_skipped_with_the_reason(tmp_path, name):
    (tmp_path / "fr_trace_rank_0").write_bytes(PICKLES[name])
    report = analyze_planted(tmp_path)
    assert "not read:" in inputs_of(report)["fr_trace_rank_0"].skipped


def test_the_tree_check_stops_at_its_bound_not_at_the_expansion():
    # counted, not timed: the walk visits MAX_ELEMENTS + 1 elements of a 2**60-element value, then stops
    with pytest.raises(data_bounds.OverBound, match="shared references"):
        data_bounds.check_tree(_shared(60))
    with pytest.raises(data_bounds.OverBound, match="elements"):
        data_bounds.check_tree([None] * (data_bounds.MAX_ELEMENTS + 1))
    data_bounds.check_tree({"entries": [{"a": [1, 2]}] * 1000})  # a normal dump passes


def test_a_pickle_of_plain_data_in_every_protocol_still_loads():
    from nccllens.safe_pickle import loads

    value = {"version": "2.4", "entries": [{"a": (1, 2.5, None, True), "s": "é" * 300, "n": -(2**70)}] * 50,
             "set": {1, 2}, "frozen": frozenset({3})}
    for protocol in range(0, pickle.HIGHEST_PROTOCOL + 1):
        assert loads(pickle.dumps(value, protocol=protocol)) == value


def test_flight_json_over_its_bounds_is_skipped(tmp_path, monkeypatch):
    monkeypatch.setattr(data_bounds, "MAX_ELEMENTS", 10_000)
    monkeypatch.setattr(data_bounds, "MAX_BYTES", 1 << 20)
    long_lists = {"version": "2.4", "entries": [{"input_sizes": [[1] * 100]} for _ in range(200)]}
    (tmp_path / "fr_trace_rank_0.json").write_text(json.dumps(long_lists))
    (tmp_path / "fr_trace_rank_1.json").write_text('{"version": "2.4", "entries": ' + "[" * 5000 + "]" * 5000 + "}")
    (tmp_path / "fr_trace_rank_2.json").write_text('{"version": "2.4", "entries": []}' + " " * (2 << 20))
    found = inputs_of(analyze_planted(tmp_path))
    assert "more than 10000 elements" in found["fr_trace_rank_0.json"].skipped
    deep = found["fr_trace_rank_1.json"]
    assert deep.skipped or deep.events <= 1  # refused, or one parser_error event: never a crash
    assert "larger than 1 MiB" in found["fr_trace_rank_2.json"].skipped


def _shard(table: pl.DataFrame) -> bytes:
    buf = io.BytesIO()
    table.write_parquet(buf, metadata={"nccllens.events_schema_version": "1"})
    return buf.getvalue()


def test_event_shards_over_their_bounds_are_skipped_before_decoding(tmp_path, monkeypatch):
    row = events_from_text("node1:1:2 [0] NCCL WARN x\n").head(1)
    (tmp_path / "long.parquet").write_bytes(_shard(pl.concat([row.with_columns(pl.lit("x" * (2 << 20))
                                                                               .alias("message"))] * 50)))
    (tmp_path / "rows.parquet").write_bytes(_shard(pl.concat([row] * 3000)))
    (tmp_path / "other.parquet").write_bytes(_shard(pl.DataFrame({"a": [1]})))
    monkeypatch.setattr(parquet_bounds, "MAX_ROWS", 2000)
    found = inputs_of(analyze_planted(tmp_path))
    assert "text" in found["long.parquet"].skipped  # 100 MiB of text from a ~10 KiB file: refused
    assert "3000 rows" in found["rows.parquet"].skipped
    assert "missing columns" in found["other.parquet"].skipped
    monkeypatch.setattr(structured, "MAX_SHARD_BYTES", 100)
    found = inputs_of(analyze_planted(tmp_path))
    assert "larger than" in found["long.parquet"].skipped


def test_a_forged_parquet_footer_is_refused_not_followed():
    good = _shard(pl.DataFrame({"a": [1, 2, 3]}))
    for forged in (good[:-8] + struct.pack("<I", 1 << 30) + b"PAR1", b"PAR1" + b"\xff" * 64 + b"\x40\0\0\0PAR1",
                   b"PAR1" + b"\x19" + b"\xfc" + b"\xff" * 8 + b"\x00" * 20 + struct.pack("<I", 30) + b"PAR1"):
        with pytest.raises(data_bounds.OverBound):
            parquet_bounds.check_shard(forged)
