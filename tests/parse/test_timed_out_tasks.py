"""A coordination-service barrier names the processes that never arrived; they are the culprits.

Real lines: fixtures/public/jax_levanter_multihost_barrier_deadline_exceeded_missing_tasks (a barrier after
start-up) and fixtures/public/jax_distributed_init_single_process_of_8_barrier_deadline_exceeded (the start-up
barrier); each case's SOURCE.md cites its public thread.
"""

from __future__ import annotations

from pathlib import Path

import nccllens

PUBLIC = Path(__file__).resolve().parents[2] / "fixtures" / "public"


def analyze_copy(tmp_path: Path, case: str, name: str, last: int | None = None):
    lines = (PUBLIC / case / name).read_text(encoding="utf-8").splitlines()[:last]
    (tmp_path / name).write_text("\n".join(lines) + "\n", encoding="utf-8")
    return nccllens.analyze(str(tmp_path))


def test_a_barrier_after_start_up_blames_the_tasks_it_lists(tmp_path):
    report = analyze_copy(tmp_path, "jax_levanter_multihost_barrier_deadline_exceeded_missing_tasks", "worker.log")
    top = report.findings[0]
    assert top.rule == "NL-RDZV-011" and top.category == "rendezvous_timeout"
    assert top.ranks == [0, 3]
    peers = report.events.filter(report.events["peer"].is_not_null())["peer"].to_list()
    assert peers == ["ranks 0, 3"]


def test_the_start_up_barrier_blames_every_task_it_lists(tmp_path):
    report = analyze_copy(tmp_path, "jax_distributed_init_single_process_of_8_barrier_deadline_exceeded", "train.log")
    top = report.findings[0]
    assert top.rule == "NL-RDZV-009" and top.ranks == [1, 2, 3, 4, 5, 6, 7]


def test_a_barrier_line_cut_before_its_task_list_names_no_culprit(tmp_path):
    report = analyze_copy(tmp_path, "jax_levanter_multihost_barrier_deadline_exceeded_missing_tasks", "worker.log", 5)
    top = report.findings[0]
    assert top.rule == "NL-RDZV-011" and top.ranks == []
