"""Errors a rank trained on past: followed in the same log by training progress, they are context, not the
cause; a failure after that progress keeps them."""

from __future__ import annotations

from pathlib import Path

import nccllens

PUBLIC = Path(__file__).resolve().parents[2] / "fixtures" / "public"
CASE = PUBLIC / "healthy_azureml_2node_old_nccl_rem_allocator_cuda_oom_warns_training_continues"


def test_nccl_allocator_errors_followed_by_losses_are_not_a_failure():
    # https://github.com/NVIDIA/nccl/issues/844: NCCL 2.x's remote allocator prints "Cuda failure 'out of
    # memory'" after a stray connection, and training goes on logging its losses
    report = nccllens.analyze(str(CASE))
    assert not [f for f in report.findings if f.severity in ("critical", "error")]
    assert report.verdict.category in ("none", "unknown") and report.verdict.finding is None


def test_a_failure_after_the_progress_keeps_the_error(tmp_path):
    lines = (CASE / "job.log").read_text().splitlines()
    # the same log, then a watchdog timeout (a real line: https://github.com/meta-pytorch/torchtune/issues/1107)
    lines.append("[rank0]:[E ProcessGroupNCCL.cpp:563] [Rank 0] Watchdog caught collective operation timeout: "
                 "WorkNCCL(SeqNum=315, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for "
                 "600095 milliseconds before timing out.")
    (tmp_path / "job.log").write_text("\n".join(lines) + "\n")
    report = nccllens.analyze(str(tmp_path))
    assert any(f.rule == "NL-NCCL-002" and f.severity == "error" for f in report.findings)


def test_epoch_loss_lines_are_progress():
    from nccllens.extract import extract_tables

    _, _, summary = extract_tables([str(CASE)], [], None, None)
    rows = summary.filter(summary["family"].cast(str) == "progress").to_dicts()
    assert [(r["key"], r["count"], r["first_line"], r["last_line"]) for r in rows] == [("epoch", 5, 18, 22)]
