"""The HTML report of a real two-node failure follows its language: tooltips, the page title, punctuation;
commands in the prose read as code; the culprit's colour is its own."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import nccllens
from nccllens.report.labels import STATE_COLOURS

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def report():
    return nccllens.analyze([str(ROOT / "fixtures" / "exception_one_rank")])  # rank 3's KeyError on node-b


def tooltips(html: str) -> dict[int, str]:
    return {int(r): t for r, t in re.findall(r'data-rank="(\d+)"[^>]*><title>([^<]*)</title>', html)}


def test_rank_tooltips_and_the_page_title_follow_the_language(report):
    en, zh = report.to_html(lang="en"), report.to_html(lang="zh")
    assert tooltips(en)[3] == "rank 3 · host node-b · state crashed (culprit)"
    assert tooltips(zh)[3] == "rank 3 · 节点 node-b · 状态 崩溃（故障源）"
    assert tooltips(zh)[0] == "rank 0 · 节点 node-a · 状态 崩溃"
    assert "<title>nccllens 分析报告：训练代码异常</title>" in zh
    assert 'aria-label="Rank 状态"' in zh and 'aria-label="Ranks"' in en


def test_counts_and_lists_take_full_width_punctuation_in_chinese(report):
    zh = report.to_html(lang="zh")
    legend = re.search(r'<p class="legend">(.*?)</p>', zh).group(1)
    assert '<span class="l-zh" lang="zh">（</span>1<span class="l-en" lang="en">)</span><span class="l-zh" ' \
           'lang="zh">）</span>' in legend
    assert '<span class="l-zh" lang="zh">，</span>' in zh  # "1 崩溃，1 故障源" in the host table


def test_commands_in_the_prose_are_code_not_backticks(report):
    html = report.to_html()
    steps = re.findall(r'<div class="steps[^"]*"[^>]*>(.*?)</div>', html, re.S)
    assert any("<code>@record</code>" in s for s in steps)
    assert not any("`" in s for s in steps)


def test_the_culprit_is_drawn_in_its_own_colour(report):
    html = report.to_html()
    assert re.search(r'class="s-culprit" data-rank="3"', html)
    assert {r: s for r, s in re.findall(r'data-rank="(\d+)" data-state="(\w+)"', html)} == {
        "0": "crashed", "1": "crashed", "2": "crashed", "3": "culprit"}
    shown = ("culprit", "crashed", "timed_out", "never_seen")
    assert len({STATE_COLOURS[s] for s in shown}) == len(shown)
