"""A process abort (SIGABRT) after a failure is that failure's ending, not a cause of its own.

Real lines from fixtures/public/fsdp_llama2_2xa100_allgather_base_watchdog_timeout (the PyTorch forum thread
its SOURCE.md cites): torch's watchdog times out, takes the process down with an uncaught exception, and
Python's faulthandler reports the abort that follows (``Fatal Python error: Aborted``).
"""

from __future__ import annotations

from pathlib import Path

import nccllens

CASE = Path(__file__).resolve().parents[2] / "fixtures" / "public" / "fsdp_llama2_2xa100_allgather_base_watchdog_timeout"


def analyze(tmp_path: Path, lines: list[str]):
    (tmp_path / "console.log").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return nccllens.analyze(str(tmp_path))


def case_lines() -> list[str]:
    return (CASE / "console.log").read_text(encoding="utf-8").splitlines()


def test_the_abort_after_a_watchdog_timeout_leaves_the_timeout_first(tmp_path):
    report = analyze(tmp_path, case_lines())
    top = report.findings[0]
    assert top.category == "collective_timeout" and top.ranks == [0, 1]
    assert not [f for f in report.findings if f.rule == "AN-UNCLAIMED"]
    assert report.verdict.category != "none"


def test_an_abort_with_no_failure_before_it_is_still_a_cause(tmp_path):
    abort = [line for line in case_lines() if line.startswith("Fatal Python error")]
    report = analyze(tmp_path, abort)
    top = report.findings[0]
    assert top.rule == "AN-UNCLAIMED" and top.category == "application_error"
    assert "SIGABRT" in top.summary
