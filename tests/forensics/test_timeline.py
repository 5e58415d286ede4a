"""timeline.normalize: years of year-less timestamps, and a table normalized once is not redone."""

from __future__ import annotations

from datetime import datetime

from nccllens.events import from_rows
from nccllens.timeline import normalize


def _table():
    # event rows as the parsers give them (no log text needed: this is about the ts columns)
    return from_rows([
        {"file": "node-a/console.log", "line": 1, "kind": "other.text", "family": "other", "message": "a",
         "ts": datetime(2025, 3, 1, 10, 0), "ts_kind": "absolute"},
        {"file": "node-a/rank0.log", "line": 1, "kind": "other.text", "family": "other", "message": "b",
         "ts": datetime(2026, 3, 1, 10, 5), "ts_kind": "no_year"},  # the year guessed from the file date
    ])


def test_a_year_less_timestamp_takes_the_year_the_job_states():
    fixed = normalize(_table())
    assert fixed["ts"].to_list()[1] == datetime(2025, 3, 1, 10, 5)


def test_a_normalized_table_is_returned_as_is_and_an_equal_new_one_is_still_normalized():
    once = normalize(_table())
    assert normalize(once) is once
    again = normalize(_table())  # the same content in a new table: worked on, same answer
    assert again is not once and again.equals(once)
