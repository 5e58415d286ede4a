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


def test_a_time_limit_kill_is_explained_by_the_failure_before_it(tmp_path):
    # https://github.com/sparticlesteve/pytorch-nccl-test/blob/ceab6b457eb60e151eb3df291482d5231426a457/slurm-nccl-416593.out
    # (fixtures/public/ib_completion_error12_roce_hca_time_limit): rank 10's IB link fails (completion status 12),
    # the all-reduce never finishes, and Slurm cancels the job at its time limit minutes later
    report = nccllens.analyze(str(PUBLIC / "ib_completion_error12_roce_hca_time_limit"))
    assert report.verdict.category == "ib_fabric"
    top = report.findings[0]
    assert top.rule == "NL-IB-001" and top.ranks == [10] and top.hosts == ["cgpu09"]
    kill = next(f for f in report.findings if f.rule == "NL-JOB-020")
    assert kill.explained_by == top.id


def test_a_time_limit_kill_alone_is_the_verdict(tmp_path):
    # the same job's kill lines without the failure before them: nothing else explains the kill
    lines = (PUBLIC / "ib_completion_error12_roce_hca_time_limit" / "slurm-nccl-416593.out").read_text().splitlines()
    (tmp_path / "slurm.out").write_text("\n".join(ln for ln in lines if "CANCELLED" in ln) + "\n")
    report = nccllens.analyze(str(tmp_path))
    assert report.verdict.category == "job_killed" and report.findings[0].rule == "NL-JOB-020"


def test_an_error_printed_after_a_time_limit_kill_does_not_explain_it(tmp_path):
    # the kill line of https://github.com/sparticlesteve/pytorch-nccl-test/blob/ceab6b457eb60e151eb3df291482d5231426a457/slurm-nccl-416593.out,
    # then an untimed error line (rank 1's CUDA error of
    # fixtures/public/ddp_4gpu_rank1_cuda_unspecified_launch_failure_peers_sigkilled): it borrows the kill line's
    # time, and, printed after the kill's line, nothing says it came first: the kill stays the verdict
    kill = next(ln for ln in (PUBLIC / "ib_completion_error12_roce_hca_time_limit" / "slurm-nccl-416593.out")
                .read_text().splitlines() if ln.startswith("slurmstepd: error: *** JOB"))
    error = next(ln for ln in (PUBLIC / "ddp_4gpu_rank1_cuda_unspecified_launch_failure_peers_sigkilled" / "stderr.err")
                 .read_text().splitlines() if ln.startswith("[rank1]: RuntimeError: CUDA driver error"))
    (tmp_path / "slurm.out").write_text(kill + "\n" + error + "\n")
    report = nccllens.analyze(str(tmp_path))
    assert report.verdict.category == "job_killed" and report.findings[0].rule == "NL-JOB-020"
    assert next(f for f in report.findings if f.category == "cuda_error").explained_by is None  # two roots
