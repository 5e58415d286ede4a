"""The real-log corpus's dev set may not get worse: bench/accuracy.py's figures against the recorded floor.

The floor (bench/accuracy_floor.json) is what the scorer printed when it was last raised; a change
that makes nccllens name the wrong cause on any real case, or call a failed run healthy, fails here.
Raise the floor when the figures improve: `python bench/accuracy.py --json` shows them.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[1] / "bench"


def load_scorer():
    spec = importlib.util.spec_from_file_location("accuracy", BENCH / "accuracy.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["accuracy"] = module  # dataclasses look their module up while the class is made
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def dev_figures():
    scorer = load_scorer()
    _, outcomes = scorer.run("dev")
    return scorer.figures(outcomes)


FLOOR = json.loads((BENCH / "accuracy_floor.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize("measure", ["top1", "exact", "culprit"])
def test_dev_set_is_at_least_as_accurate_as_recorded(dev_figures, measure):
    share, count = dev_figures["overall"][measure]
    assert count >= FLOOR["cases"][measure], "cases were lost from the dev set"
    assert share >= FLOOR["overall"][measure], f"{measure} fell to {share}% (floor {FLOOR['overall'][measure]}%)"


def test_no_failed_dev_run_is_called_healthy(dev_figures):
    assert dev_figures["no_failure_misses"] <= FLOOR["no_failure_misses"]


def test_every_healthy_control_stays_clean(dev_figures):
    share, _ = dev_figures["healthy_clean"]
    assert share is None or share >= FLOOR["healthy_clean"]


def test_nccllens_beats_the_grep_baseline(dev_figures):
    overall = dev_figures["overall"]
    assert overall["top1"][0] > overall["grep_top1"][0]
