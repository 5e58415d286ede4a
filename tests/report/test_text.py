"""The terminal report: what a person reading it at 3 a.m. sees."""

from __future__ import annotations

import re

import pytest
from report_builders import WATCHDOG_RANK0, big_report, healthy_report, unknown_report, xid_report

from nccllens.report import render
from nccllens.report.text import want_colour

ANSI = re.compile(r"\x1b\[")


def test_verdict_sentence_first_what_where_when_what_to_do():
    out = xid_report().to_text(color=False, width=120)
    first = out.splitlines()[0]
    assert first.startswith("Verdict: GPU hardware failure: Xid 79")
    assert "gpu-node-07" in first
    verdict = out.split("\n\n")[0]
    assert "rank 61" in verdict and "2026-11-22T03:12:05" in verdict
    assert "First: Drain gpu-node-07" in verdict


def test_symptoms_folded_under_their_cause_with_file_line_evidence():
    out = xid_report().to_text(color=False, width=400)
    cause = out.index("F1 ")
    folded = out.index("Symptoms it explains (1)")
    symptom = out.index("F2 ")
    assert cause < folded < symptom
    assert "gpu-node-07/dmesg.txt:4412  NVRM: Xid (PCI:0000:5d:00): 79" in out
    assert f"gpu-node-00/rank0.log:812  {WATCHDOG_RANK0}" in out


def test_rank_grid_shows_culprit_letter_and_legend():
    out = xid_report().to_text(color=False, width=120)
    assert "Legend: X culprit (1)  T timed out (63)" in out
    assert re.search(r"^gpu-node-07\s+TTTTTXTT 7 timed out, 1 culprit$", out, re.M)


def test_4096_ranks_collapse_into_few_rows():
    out = big_report().to_text(color=False, width=100)
    grid = out[out.index("\nRanks\n") : out.index("\nFirst failures\n")].strip().splitlines()
    assert len(grid) <= 6
    assert any(re.match(r"gpu-node-000\.\.511\s+TTTTTTTT \(510 hosts\) timed out", line) for line in grid)
    assert any(line.startswith("gpu-node-300") and "silent" in line for line in grid)
    assert any(line.startswith("gpu-node-007") and "X" in line for line in grid)
    assert max(len(line) for line in out.splitlines()) <= 100


def test_first_failures_earliest_first_per_host():
    out = xid_report().to_text(color=False, width=160)
    timeline = out[out.index("First failures") :].splitlines()[1:3]
    assert timeline[0].startswith("2026-11-22T03:12:05  gpu-node-07")
    assert timeline[1].startswith("2026-11-22T03:42:06  gpu-node-00")


def test_inventory_says_what_was_skipped_and_why():
    out = xid_report().to_text(color=False, width=120)
    assert "9 files read (12200 lines, 99 events), 2 skipped" in out
    assert "1 skipped: binary file (core dump)" in out  # counts per reason; -v lists the files
    assert "gpu-node-03/core.1234" not in out
    verbose = xid_report().to_text(color=False, width=120, verbose=True)
    assert "skipped gpu-node-03/core.1234: binary file (core dump)" in verbose
    zh = xid_report("zh").to_text(color=False, width=120)
    assert "已读取 9 个文件（12200 行，99 个事件），跳过 2 个" in zh and "跳过 1 个：binary file (core dump)" in zh


def test_chinese_headings_and_finding_text():
    out = xid_report("zh").to_text(color=False, width=120)
    for heading in ("结论", "发现（按可能性排序）", "Rank 状态", "最早的故障", "输入文件", "由此导致的症状"):
        assert heading in out
    assert "Xid 79：gpu-node-07 上的 GPU 掉卡" in out
    assert "首先：将 gpu-node-07 下线" in out


def test_healthy_and_unknown_verdicts():
    healthy = healthy_report().to_text(color=False, width=100)
    assert healthy.startswith("Verdict: No failure found in the logs.")  # the summary, not a label before it
    assert "F finished (16)" in healthy
    unknown = unknown_report().to_text(color=False, width=100)
    assert unknown.startswith("Verdict: only watchdog timeouts")
    assert "N never seen (6)" in unknown


def test_no_color_means_no_ansi(monkeypatch):
    monkeypatch.setenv("NO_COLOR", "1")
    monkeypatch.setenv("FORCE_COLOR", "1")
    out = render(xid_report(), "text")
    assert not ANSI.search(out)
    assert "X" in out  # the letters carry the state without colour


def test_colour_when_asked_and_when_forced(monkeypatch):
    assert ANSI.search(xid_report().to_text(color=True, width=100))
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setenv("FORCE_COLOR", "1")
    assert ANSI.search(render(xid_report(), "text"))


@pytest.mark.parametrize(("env", "tty", "expected"), [
    ({}, True, True), ({}, False, False), ({"NO_COLOR": "1"}, True, False), ({"FORCE_COLOR": "1"}, False, True),
    ({"NO_COLOR": ""}, True, True),
])
def test_colour_decision(env, tty, expected):
    assert want_colour(None, env, tty) is expected


def test_width_is_honoured():
    for width in (60, 80, 140):
        out = xid_report().to_text(color=False, width=width)
        assert max(len(line) for line in out.splitlines()) <= width


def test_log_text_is_not_rich_markup():
    report = xid_report()
    report.findings[0].evidence[0].text = "[bold red]not markup[/bold red] [link=x]y[/link]"
    out = report.to_text(color=False, width=200)
    assert "[bold red]not markup[/bold red] [link=x]y[/link]" in out


def test_chinese_skip_reasons_are_translated():
    from nccllens.report.labels import skip_reason

    assert skip_reason("not a log: image", "zh") == "不是日志：图片"
    assert skip_reason("corrupt tar archive (truncated header)", "zh") == "损坏的 tar 包 (truncated header)"
    assert skip_reason("binary file (core dump)", "zh") == "binary file (core dump)"  # unknown words stay
    out = xid_report("zh").to_text(color=False, width=120)
    assert "跳过 1 个：不是日志：配置文件" in out
    html = xid_report("zh").to_html()
    assert "不是日志：配置文件" in html and "已读取 9 个文件（12200 行，99 个事件），跳过 2 个" in html


def test_timestamps_are_shown_at_one_precision():
    import re
    from pathlib import Path

    import nccllens

    report = nccllens.analyze(str(Path(__file__).resolve().parents[2] / "fixtures" / "exception_one_rank"))
    assert any(f.first_seen and "." in f.first_seen for f in report.findings)  # the JSON keeps the fraction
    text = report.to_text(color=False, width=400).splitlines()
    heads = [line for line in text if re.match(r"\s*F\d+ ", line)]  # not the quoted log lines
    rows = [line for line in report.to_markdown().splitlines() if line.startswith("| F")]
    for line in heads + rows:
        assert not re.search(r"\d\d:\d\d:\d\d\.\d", line), line
    assert any("2026-11-22T03:49:45" in line for line in heads + rows)


def test_a_finding_folded_under_a_cause_is_never_labelled_cause():
    from pathlib import Path

    import nccllens

    report = nccllens.analyze(str(Path(__file__).resolve().parents[2] / "fixtures" / "master_port_in_use"))
    nested = [f for f in report.findings if f.role == "cause" and f.explained_by]
    assert nested  # the ranking keeps NL-STORE-008 a (narrower) cause under the port-in-use cause
    text = report.to_text(color=False, width=300).splitlines()
    shown = [line for line in text if line.lstrip().startswith(f"{nested[0].id} ")]
    assert shown and " symptom · " in shown[0] and " cause · " not in shown[0]
    md = report.to_markdown()
    assert f"| {nested[0].id} | error | symptom |" in md or f"| {nested[0].id} | warning | symptom |" in md
    html = report.to_html()
    article = html.split(f'id="finding-{nested[0].id}"', 1)[1].split("</h3>", 1)[0]
    assert "Symptom" in article or "symptom" in article


def test_the_verdict_says_each_datum_once():
    from pathlib import Path

    import nccllens
    from nccllens.report.view import verdict_sentence

    report = nccllens.analyze(str(Path(__file__).resolve().parents[2] / "fixtures" / "exception_one_rank"))
    en, zh = verdict_sentence(report, "en"), verdict_sentence(report, "zh")
    assert en.startswith("exception in the training code: KeyError in the training code on rank(s) 3, on node-b, at ")
    assert en.count("rank(s) 3") == 2  # the title and the first step, not a third "/ rank 3"
    assert zh.startswith("训练代码异常：rank 3 训练代码抛出 KeyError，位于 node-b，时间 ")


def test_no_bare_dash_stands_for_an_empty_list_in_analysis_prose():
    # issue 18: "(lagging: -)" read as a broken template; an empty list is said in words
    from pathlib import Path

    import nccllens

    root = Path(__file__).resolve().parents[2] / "fixtures"
    for case in ("exception_peers_time_out", "exception_one_rank"):
        for lang in ("en", "zh"):
            report = nccllens.analyze(str(root / case), lang=lang)
            for f in report.findings:
                assert ": -)" not in f.summary and "：-）" not in f.summary and ": -." not in f.summary, f.rule
