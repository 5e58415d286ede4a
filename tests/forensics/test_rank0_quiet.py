"""Timeouts reported by ranks other than 0 that no cause explains: rank 0, which shows no timeout, is the
first suspect (a collective completes only when every member enters it)."""

from __future__ import annotations

from pathlib import Path

import nccllens

PUBLIC = Path(__file__).resolve().parents[2] / "fixtures" / "public"


def test_a_non_zero_ranks_timeout_points_at_rank_0():
    # https://github.com/huggingface/accelerate/issues/223: one rank's watchdog line; rank 0 was evaluating alone
    report = nccllens.analyze(str(PUBLIC / "accelerate_single_gpu_eval_timeout"))
    top = report.findings[0]
    assert (top.rule, top.category, top.ranks) == ("AN-RANK0-NOT-WAITING", "collective_timeout", [0])
    assert "rank 0" in top.title


def test_rank_0_among_the_waiting_ranks_names_no_suspect(tmp_path):
    # the real line of rank 0's timeout (https://github.com/meta-pytorch/torchtune/issues/1107)
    (tmp_path / "train.log").write_text(
        "[rank0]:[E ProcessGroupNCCL.cpp:563] [Rank 0] Watchdog caught collective operation timeout: "
        "WorkNCCL(SeqNum=315, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600095 "
        "milliseconds before timing out.\n")
    report = nccllens.analyze(str(tmp_path))
    assert not [f for f in report.findings if f.rule == "AN-RANK0-NOT-WAITING"]


def test_a_one_to_one_op_mismatch_names_rank_0_the_side_that_went_its_own_way():
    # https://github.com/speechbrain/speechbrain/issues/2401: rank 0 broadcast a checkpoint decision while rank 1 ran its
    # all-reduce at the same sequence number (TORCH_DISTRIBUTED_DEBUG=DETAIL fingerprints, two ranks)
    report = nccllens.analyze(str(PUBLIC / "speechbrain_rank0_ckpt_broadcast_vs_allreduce"))
    top = report.findings[0]
    assert (top.rule, top.category, top.ranks) == ("AN-FINGERPRINT-MISMATCH", "rank_divergence", [0])
    assert "ALLREDUCE" in top.title and "BROADCAST" in top.title
