"""A training run that printed its own last word finished: a slower transport it ran over is no failure of it.

Lines come from a dev case (fixtures/public/healthy_efa_dino_12rank_teardown_abort_complete, a DINO run on 3 EFA
nodes published in https://github.com/awsankur/accelerate-pcluster-distributed-training).
"""

from __future__ import annotations

from pathlib import Path

import nccllens

CASE = Path(__file__).resolve().parents[2] / "fixtures/public/healthy_efa_dino_12rank_teardown_abort_complete"


def _copy(tmp_path: Path, drop_finish: bool = False) -> Path:
    for name in ("nodes_3.out", "dino_err_12.err"):
        text = (CASE / name).read_text(encoding="utf-8")
        if drop_finish:
            text = "".join(ln for ln in text.splitlines(keepends=True) if not ln.startswith("Training time "))
        (tmp_path / name).write_text(text, encoding="utf-8")
    return tmp_path


def test_the_scripts_total_training_time_says_the_run_finished(tmp_path):
    report = nccllens.analyze(str(_copy(tmp_path)))
    assert report.verdict.category == "none"
    assert report.verdict.summary.endswith("nodes_3.out:164).")  # the "Training time 0:08:52" line


def test_no_gpudirect_rdma_in_a_finished_training_run_is_context(tmp_path):
    report = nccllens.analyze(str(_copy(tmp_path)))
    fallback = [f for f in report.findings if f.rule == "NL-IB-017"]
    assert fallback and fallback[0].role == "context" and fallback[0].severity == "warning"


def test_without_its_last_word_the_same_run_keeps_the_fallback_as_the_lead(tmp_path):
    # synthetic edit: the script's final "Training time" line removed; nothing else shows the run finished
    report = nccllens.analyze(str(_copy(tmp_path, drop_finish=True)))
    assert report.verdict.category == "ib_fallback"
