"""nccl-tests processes that did not form one job: one header lists the same rank for several processes."""

from __future__ import annotations

from pathlib import Path

import nccllens

PUBLIC = Path(__file__).resolve().parents[2] / "fixtures" / "public"
# https://github.com/NVIDIA/nccl-tests/issues/254: mpirun -np 16 over dgx01 and dgx02, and every process says
# "Rank  0 ... device  0" (the header's '#' lost in the paste): nccl-tests built without MPI
SEPARATE = PUBLIC / "nccltests_mpirun_16proc_2node_all_rank0_device0_no_mpi_build"


def test_every_process_rank_0_is_separate_jobs():
    report = nccllens.analyze(str(SEPARATE))
    assert report.verdict.category == "config_mismatch"
    found = next(f for f in report.findings if f.rule == "AN-BENCH-SEPARATE-PROCESSES")
    assert found.hosts == ["dgx01", "dgx02"] and "rank 0" in found.title


def test_a_header_with_one_rank_per_process_is_one_job():
    # healthy two-process runs over MPI: ranks 0 and 1, one process each
    for case in ("healthy_nccl_init_two_nodes", "healthy_nccltests_2x4090_p2p_disabled_shm_completes"):
        report = nccllens.analyze(str(PUBLIC / case))
        assert not [f for f in report.findings if f.rule == "AN-BENCH-SEPARATE-PROCESSES"], case


def test_header_lines_without_their_hash_are_members():
    from nccllens.extract import events_from_text

    text = "Rank  0 Group  0 Pid 544816 on    dgx01 device  0 [0x1a] NVIDIA H100 80GB HBM3\n"
    member = events_from_text(text)
    row = member.filter(member["kind"] == "progress.bench_rank").to_dicts()
    assert [(r["rank"], r["pid"], r["host"]) for r in row] == [(0, 544816, "dgx01")]


def test_two_result_summaries_back_to_back_are_separate_jobs():
    # https://github.com/NVIDIA/nccl-tests/issues/27: mpirun -np 2 over two hosts printed two "# Avg bus bandwidth"
    # summaries one after the other (a stale build without MPI); the job finished, yet its finish lines say it
    report = nccllens.analyze(str(PUBLIC / "nccltests_mpirun_2hosts_built_without_mpi_separate_runs"))
    assert report.verdict.category == "config_mismatch"
    found = next(f for f in report.findings if f.rule == "AN-BENCH-SEPARATE-PROCESSES")
    assert "own result summary" in found.title and found.severity == "error"


def test_one_summary_per_run_is_not_separate_jobs():
    report = nccllens.analyze(str(PUBLIC / "healthy_nccltests_2x_dgx_spark_gb10_allgather_16g_oob_0_ok"))
    assert not [f for f in report.findings if f.rule == "AN-BENCH-SEPARATE-PROCESSES"]
