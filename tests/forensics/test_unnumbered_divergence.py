"""Watchdogs of torch 1.9, which state no SeqNum: the op each rank waits in still tells who diverged."""

from __future__ import annotations

from pathlib import Path

import nccllens
from nccllens.parse.torch_patterns import work_fields

# real: https://github.com/ultralytics/yolov5/issues/4400 via fixtures/public/yolov5_val_rank0_60s_timeout
REAL = ("[E ProcessGroupNCCL.cpp:566] [Rank 2] Watchdog caught collective operation timeout: "
        "WorkNCCL(OpType=BROADCAST, Timeout(ms)=60000) ran for 66854 milliseconds before timing out.")


def test_a_work_without_a_sequence_number_still_gives_its_op_and_timeout():
    fields = work_fields(REAL)
    assert fields["op"] == "BROADCAST" and fields["timeout_ms"] == 60000 and fields["seq"] is None
    assert fields["elapsed_ms"] == 66854


def test_the_rank_stuck_in_another_op_than_the_others_is_the_culprit(tmp_path: Path):
    # synthetic: the real line's torch 1.9 format, with the ops and ranks of a divergence: ranks 0, 1, 3 wait in an
    # ALLREDUCE, rank 2 in a BROADCAST
    lines = [REAL.replace("[Rank 2]", f"[Rank {r}]").replace("BROADCAST", "ALLREDUCE") for r in (0, 1, 3)] + [REAL]
    (tmp_path / "train.log").write_text("\n".join(lines) + "\n", encoding="utf-8")
    report = nccllens.analyze(str(tmp_path))
    top = report.findings[0]
    assert top.rule == "AN-OP-DIVERGENCE" and top.ranks == [2]
    assert report.verdict.category == "rank_divergence" and "sequence number" in top.title
