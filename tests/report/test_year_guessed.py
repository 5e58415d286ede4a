"""A year the logs never printed (syslog ``May 15 23:09:27``) is marked as guessed in every format; a job whose
lines state their year is not."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

import nccllens
from nccllens.report import render

ROOT = Path(__file__).resolve().parents[2]
SYSLOG = ROOT / "fixtures" / "public" / "kernel_host" / "syslog_kern_cgroup_oom_python3.log"
DATED = ROOT / "fixtures" / "exception_one_rank"  # torchrun's failure table prints 2026-11-22_03:49:45


@pytest.fixture(scope="module")
def report():
    return nccllens.analyze([str(SYSLOG)])


def test_the_verdict_marks_its_time_and_the_text_says_why(report):
    text = render(report, "text", color=False, width=200)
    assert re.search(r"at \d{4}-05-15T23:09:27 \(year guessed\)\. First:", text)
    assert "The logs print times without a year and no line states one: every year shown is a guess" in text
    zh = render(report, "text", color=False, width=200, lang="zh")
    assert re.search(r"时间 \d{4}-05-15T23:09:27（年份为推测）。首先", zh)


def test_html_markdown_and_json_mark_it_too(report):
    html = render(report, "html")
    assert '<div class="conf year-guessed">' in html and "所示年份均为推测" in html
    assert re.search(r"<td>\d{4}-05-15T23:09:27<span class=\"l-en\" lang=\"en\"> \(</span><span class=\"l-zh\" "
                     r"lang=\"zh\">（</span><span class=\"l-en\" lang=\"en\">year guessed</span>", html)
    md = render(report, "md")
    assert "(year guessed). First:" in md and "_The logs print times without a year" in md
    assert json.loads(render(report, "json"))["job"]["year_guessed"] is True


def test_a_job_that_prints_its_year_is_not_marked():
    dated = nccllens.analyze([str(DATED)])
    assert dated.job.year_guessed is False
    assert "year guessed" not in render(dated, "text", color=False, width=200)
