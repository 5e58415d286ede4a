"""A failure said by a logger no family knows, or by the shell that ran the process, is never 'no failure'."""

from __future__ import annotations

import pytest

import nccllens


@pytest.mark.parametrize(("line", "category"), [
    # bash's report of a child killed by a signal (strsignal wording; synthetic: built from bash 5's job
    # report format "%s: line %d: %5d %s  %s")
    ("Segmentation fault (core dumped)", "application_error"),
    ("./run.sh: line 12:  4242 Killed                  python train.py", "host_oom"),
    ("Bus error (core dumped)", "shm_exhausted"),
])
def test_the_shell_reporting_a_fatal_signal_is_a_crash_with_that_signal(tmp_path, line, category):
    (tmp_path / "job.log").write_text(line + "\n")
    report = nccllens.analyze(str(tmp_path))
    assert report.verdict.category == category


@pytest.mark.parametrize("line", [
    # source: https://github.com/uzh-rpg/RVT/issues/18 (Hydra's logging format; level changed to ERROR:
    # synthetic, built from that format "[%(asctime)s][%(name)s][%(levelname)s] - %(message)s")
    "[2023-07-14 18:21:31,182][__main__][ERROR] - Training failed at step 120",
    # Python logging's default format "%(levelname)s:%(name)s:%(message)s" (synthetic)
    "ERROR:root:the data pipeline stopped",
    # glog's "E" line of a C++ component (synthetic: built from glog's "%c%02d%02d %02d:%02d:%02d.%06d %5d %s:%d] ")
    "E1125 02:50:00.000000  4242 some/file.cc:12] Check failed: x == y",
])
def test_an_error_line_of_any_logger_rules_out_no_failure(tmp_path, line):
    (tmp_path / "job.log").write_text(line + "\n")
    report = nccllens.analyze(str(tmp_path))
    assert report.verdict.category not in ("none",)
    assert report.findings and report.findings[0].rule == "AN-UNCLAIMED"


def test_info_lines_of_the_same_loggers_are_not_failures(tmp_path):
    (tmp_path / "job.log").write_text(
        "[2023-07-14 18:21:31,182][__main__][INFO] - Training step 120\nINFO:root:epoch 3 done\n")
    assert nccllens.analyze(str(tmp_path)).verdict.category == "none"
