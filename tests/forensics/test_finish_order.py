"""A job's finish line clears errors it went on past; an error that ends another, untimed log is not known to
come before that finish, so it keeps the failure."""

from __future__ import annotations

from pathlib import Path

import nccllens

PUBLIC = Path(__file__).resolve().parents[2] / "fixtures" / "public"
# https://github.com/ACEsuit/mace/issues/1348: rank 0 leaves the epoch loop on patience, logs "Training complete",
# then DDP's parameter check meets the other rank elsewhere; the traceback (no times) is pasted apart from the log
CASE = PUBLIC / "mace_patience_rank0_exits_loop_ddp_verify_allgather_mismatch"


def test_an_untimed_traceback_ending_its_log_is_not_survived_shutdown_noise():
    report = nccllens.analyze(str(CASE))
    assert report.verdict.category == "rank_divergence"
    top = next(f for f in report.findings if f.id == report.verdict.finding)
    assert top.rule == "NL-TORCH-023" and list(top.ranks) == [0] and top.severity == "critical"


def test_the_same_error_followed_by_more_of_its_log_is_survived(tmp_path):
    error = (CASE / "error.log").read_text().splitlines()
    train = (CASE / "train.log").read_text().splitlines()
    # the error's log goes on (the run's own later lines), so the job's finish is read as coming after it
    (tmp_path / "error.log").write_text("\n".join(error + train[:2]) + "\n")
    (tmp_path / "train.log").write_text("\n".join(train) + "\n")
    report = nccllens.analyze(str(tmp_path))
    assert report.verdict.category != "rank_divergence"
