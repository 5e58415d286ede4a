"""For every fixture, every event whose line names a rank or a host is attributed to it."""

from __future__ import annotations

import re
from pathlib import Path

import polars as pl
import pytest

from nccllens.extract import extract

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
CASES = sorted(p.parent for p in FIXTURES.rglob("expected.toml") if "generate" not in p.parts and "holdout" not in p.parts)

RANK_PREFIX = re.compile(r"^(?:\[default\d+\]:)?\[rank(\d+)\]:")  # PyTorch's [rankN]: (after a tee prefix)
LOCAL_PREFIX = re.compile(r"^\[default(\d+)\]:")  # torchrun --tee
NCCL_HOST = re.compile(r"(?:^|\] )([A-Za-z][\w.-]*):\d+:\d+ \[-?\d+\] NCCL ")  # host:pid:tid [dev] NCCL
FAILURE_TABLE = ("torchrun.root_cause", "torchrun.failure")
# events a line states about another rank (a fingerprint mismatch names the other rank's fingerprint)
ABOUT_ANOTHER_RANK = ("torch.fingerprint_peer",)


@pytest.mark.parametrize("folder", CASES, ids=[str(p.relative_to(FIXTURES)) for p in CASES])
def test_lines_that_name_a_rank_or_host_are_attributed(folder):
    events, _ = extract([str(folder)])
    rows = events.filter(pl.col("kind") != "other.file_end").select(
        "file", "line", "raw", "rank", "local_rank", "host", "kind").to_dicts()
    for e in rows:
        where = f"{e['file']}:{e['line']}: {e['raw'][:120]}"
        m = RANK_PREFIX.match(e["raw"])
        if m and e["kind"] not in ABOUT_ANOTHER_RANK:
            assert e["rank"] == int(m[1]), where
        m = LOCAL_PREFIX.match(e["raw"])
        if m:
            assert e["local_rank"] == int(m[1]), where
        m = NCCL_HOST.search(e["raw"])
        if m:
            assert e["host"] == m[1], where
        if e["kind"] in FAILURE_TABLE:
            assert e["rank"] is not None and e["host"], where
        # per-node captures: the folder names the node, so every event has a host (a file named node-2.log names
        # no folder: its lines say their host themselves)
        node = next((part for part in Path(e["file"]).parent.parts if part.startswith("node-")), None)
        if node is not None:
            assert e["host"] == node, where
