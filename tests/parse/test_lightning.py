"""lightning family: each process's global rank and world size; the same rank started twice is a launch
that does not match the Trainer.

Real lines: https://github.com/Lightning-AI/pytorch-lightning/issues/4389
(fixtures/public/lightning_srun_2node_duplicate_global_ranks_hang).
"""

from __future__ import annotations

from pathlib import Path

import nccllens
from nccllens.parse import lightning
from nccllens.parse.base import FileContext, Line

CASE = Path(__file__).resolve().parents[2] / "fixtures" / "public" / "lightning_srun_2node_duplicate_global_ranks_hang"


def run(*texts: str) -> list[dict]:
    lines = [Line(file="x.log", line=i + 1, raw=t, message=t, row=i) for i, t in enumerate(texts)]
    return list(lightning.parse(lines, FileContext(path="x.log")))


def test_the_rank_and_the_world_size_are_read():
    (e,) = run("initializing ddp: GLOBAL_RANK: 1, MEMBER: 2/8")
    assert (e["kind"], e["rank"], e["nranks"]) == ("lightning.rank_init", 1, 8)
    assert run("initializing ddp: GLOBAL_RANK: 9, MEMBER: 10/8") == []  # not a rank of that world


def test_each_rank_started_twice_and_half_the_world_missing_is_a_launch_mismatch():
    report = nccllens.analyze(str(CASE))
    top = report.findings[0]
    assert (report.verdict.category, top.rule) == ("config_mismatch", "AN-LAUNCH-MISMATCH")
    assert "rank(s) 0-3 started by more than one process, rank(s) 4-7 never (world size 8)" in top.title
    assert report.job.world_size == 8
