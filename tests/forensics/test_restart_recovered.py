"""Restart-aware status: a worker group that failed in one attempt, was restarted by the elastic agent and
then finished is a job that succeeded (verdict none, the transient failure kept as a warning); a restart
that fails again is still a failure, with its first cause."""

from __future__ import annotations

from pathlib import Path

import nccllens

PUBLIC = Path(__file__).resolve().parents[2] / "fixtures" / "public"


def test_failed_attempt_then_finished_run_is_no_failure():
    # a torchrun run made for this project (torch 2.13.0+cpu, gloo): rank 3 SIGKILLed in attempt 0,
    # --max-restarts 1, attempt 1 trains to the end and rank 0 prints "training finished"
    report = nccllens.analyze(str(PUBLIC / "healthy_restart_lazy_init"))
    assert report.verdict.category == "none"
    assert not [f for f in report.findings if f.severity in ("critical", "error")]
    assert any(f.category == "host_oom" and f.severity == "warning" for f in report.findings)
    assert not [r for r in report.ranks if r.state in ("crashed", "exited")]


def test_two_node_restart_that_finished_is_no_failure():
    report = nccllens.analyze(str(PUBLIC / "healthy_two_node_restart_lazy_init"))
    assert report.verdict.category == "none"


def test_restart_that_fails_again_keeps_the_first_cause():
    report = nccllens.analyze(str(PUBLIC / "single_node_restart_after_sigkill_fails"))
    assert report.verdict.category == "host_oom"
    assert report.findings[0].ranks == [3]


def test_bare_training_finished_line_is_a_finish_marker():
    from nccllens.extract import events_from_text

    # the job script's last line in the run above (torchrun --tee prefix)
    ev = events_from_text("[default0]:rank 0: training finished\n")
    assert "progress.finished" in ev["kind"].cast(str).to_list()
    # near miss: a progress line that merely mentions training
    ev = events_from_text("[default0]:training finished step 3 of 8, continuing\n")
    assert "progress.finished" not in ev["kind"].cast(str).to_list()


def test_error_the_job_went_on_past_is_no_failure():
    # a torchrun run made for this project (torch 2.13.0+cpu, gloo): ranks 1-3 log a DistStoreError for an
    # optional warm-start key (a 2 s store.wait), start from scratch, and the job trains to the end
    report = nccllens.analyze(str(PUBLIC / "healthy_store_wait_timeout_logged"))
    assert report.verdict.category == "none"
    assert "finished" in report.verdict.summary
    assert any(f.category == "rendezvous_timeout" and f.severity == "warning" for f in report.findings)
    assert not [r for r in report.ranks if r.state in ("crashed", "exited")]


def test_a_slow_rank_in_a_finished_job_is_still_a_straggler():
    report = nccllens.analyze(str(PUBLIC / "slow_rank3_completes"))
    assert report.findings[0].category == "straggler"
    assert report.verdict.category == "straggler"
