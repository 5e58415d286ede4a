"""The last sign of life of each rank, for hangs, in text, JSON and HTML (a synthetic 16-rank hang)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import nccllens
from nccllens.report import render

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def hang(tmp_path_factory):
    out = tmp_path_factory.mktemp("synth") / "logs"
    subprocess.run([sys.executable, str(ROOT / "bench" / "synth.py"), str(out), "--ranks", "16", "--hosts", "4",
                    "--fault", "missing_node", "--bytes", "512K"], check=True, capture_output=True)
    return out


def test_a_hang_shows_each_ranks_last_sign_of_life(hang):
    report = nccllens.analyze(str(hang))
    text = render(report, "text", color=False, width=200)
    signs = text.split("Last sign of life", 1)[1].split("First failures", 1)[0]
    assert "rank(s) 8-11: no line of theirs was read" in signs  # the node that never logged
    assert "the hang began about 2026-11-22T01:30:00" in signs and "waited 10 min" in signs
    data = json.loads(render(report, "json"))
    seen = {r["rank"]: r["last_seen"] for r in data["ranks"]}
    assert seen[0].startswith("2026-11-22T01:40") and seen[8] is None
    html = render(report, "html")
    assert 'id="last-signs"' in html and "no line of theirs was read" in html and "卡住大约从" in html
    zh = render(nccllens.analyze(str(hang), lang="zh"), "text", color=False, width=200)
    assert "最后的活动" in zh and "rank 8-11：没有读到它们的任何一行日志" in zh


def test_a_crash_is_not_a_hang():
    report = nccllens.analyze(str(ROOT / "fixtures" / "exception_one_rank"))
    assert "Last sign of life" not in render(report, "text", color=False, width=120)


def test_identical_victim_timeouts_are_one_line_of_first_failures(hang):
    report = nccllens.analyze(str(hang))
    text = render(report, "text", color=False, width=200)
    failures = [line for line in text.split("First failures", 1)[1].split("Inputs", 1)[0].splitlines() if line.strip()]
    assert len(failures) == 1 and "(+2 hosts alike)" in failures[0] and "Watchdog caught collective" in failures[0]
    assert "（另有 2 个节点相同）" in render(nccllens.analyze(str(hang), lang="zh"), "md")
