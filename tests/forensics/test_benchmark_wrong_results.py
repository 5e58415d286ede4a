"""nccl-tests that checked its results and found them wrong is a failure, never a finished healthy run.

``# Out of bounds values : %d %s`` is nccl-tests' summary of the data it verified (``OK`` for 0, ``FAILED``
otherwise). The FAILED line is real (https://github.com/NVIDIA/nccl-tests/issues/356, four RTX 5090s); the run
around it is the real healthy output of fixtures/public/healthy_nccltests_2x_dgx_spark_gb10_allgather_16g_oob_0_ok
(its SOURCE.md cites the thread), with its ``0 OK`` summary line replaced by the FAILED one: a combination made
for this test, of lines real programs printed.
"""

from __future__ import annotations

from pathlib import Path

import nccllens

CASE = Path(__file__).resolve().parents[2] / "fixtures" / "public" / "healthy_nccltests_2x_dgx_spark_gb10_allgather_16g_oob_0_ok"
FAILED = "# Out of bounds values : 56 FAILED"


def analyze(tmp_path: Path, text: str):
    (tmp_path / "all_gather_perf.log").write_text(text, encoding="utf-8")
    return nccllens.analyze(str(tmp_path))


def test_the_reporters_failed_summary_alone_is_a_cause(tmp_path):
    report = analyze(tmp_path, FAILED.lstrip("# ") + "\n")
    assert report.verdict.category == "p2p_topology"
    assert report.findings[0].rule == "NL-NCCL-023" and "56 values" in report.findings[0].title


def test_a_finished_benchmark_whose_results_were_wrong_is_not_healthy(tmp_path):
    healthy = (CASE / "all_gather_perf.log").read_text(encoding="utf-8")
    assert "# Out of bounds values : 0 OK" in healthy
    clean = analyze(tmp_path, healthy)
    assert clean.verdict.category in ("none", "unknown") and clean.verdict.finding is None
    report = analyze(tmp_path, healthy.replace("# Out of bounds values : 0 OK", FAILED))
    assert report.verdict.category == "p2p_topology"
    top = report.findings[0]
    assert top.rule == "NL-NCCL-023" and top.severity == "error" and top.role == "cause"
