"""torch's desync report states which ranks joined the collective that timed out; analyses read them from the event.

Real lines: fixtures/public/llamafactory_multinode_first_step_allreduce_730_all16_joined_none_finished (its
SOURCE.md cites the thread).
"""

from __future__ import annotations

from pathlib import Path

import polars as pl

from nccllens.analyses.common import joined_ranks
from nccllens.extract import events_from_text

CASE = Path(__file__).resolve().parents[2] / "fixtures" / "public" / "llamafactory_multinode_first_step_allreduce_730_all16_joined_none_finished"


def test_the_ranks_that_joined_and_did_not_finish_are_the_reports_peer():
    lines = [x for x in (CASE / "node.log").read_text(encoding="utf-8").splitlines() if "joined but didn't finish" in x]
    events = events_from_text("\n".join(lines) + "\n")
    report = events.filter(pl.col("key").cast(pl.String) == "desync_report")
    assert report["value"].to_list() == ["joined, not finished"]
    assert report["peer"].to_list() == ["ranks " + ", ".join(str(r) for r in range(16))]
    assert joined_ranks(events) == set(range(16))
