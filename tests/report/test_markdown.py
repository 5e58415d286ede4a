"""Markdown for ticket comments."""

from __future__ import annotations

import re

from report_builders import HOSTILE_SCRIPT, big_report, healthy_report, unknown_report, xid_report

from nccllens.report.markdown import fence, inline


def test_verdict_table_and_fenced_evidence():
    md = xid_report().to_markdown()
    assert md.startswith("## nccllens report: GPU hardware failure\n")
    assert "**Verdict:** GPU hardware failure: Xid 79: GPU has fallen off the bus on gpu-node\\-07" not in md
    assert "**Verdict:** GPU hardware failure: Xid 79: GPU has fallen off the bus on gpu-node-07, on rank 61" in md
    assert "| F1 | critical | cause | `gpu_hardware` | `NL-GPU-001` |" in md
    assert "```text\ngpu-node-07/dmesg.txt:4412: NVRM: Xid (PCI:0000:5d:00): 79," in md


def test_symptoms_and_inventory_in_details():
    md = xid_report().to_markdown()
    assert "<details>\n<summary>Symptoms it explains (1)</summary>\n\n##### F2 · " in md
    assert "<summary>Inputs: 9 files read (12200 lines, 99 events), 2 skipped</summary>" in md
    assert "| gpu-node-03/core.1234 | 0 | 0 | binary file (core dump) |" in md


def test_fence_longer_than_any_backtick_run():
    block = fence(["a ```` b", "``"])
    assert block.startswith("`````text\n") and block.endswith("\n`````")
    report = xid_report()
    report.findings[0].evidence[0].text += " ```` end"
    md = report.to_markdown()
    assert "`````text\ngpu-node-07/dmesg.txt:4412:" in md


def test_inline_text_escaped():
    assert inline("a|b *c* <x>") == "a\\|b \\*c\\* &lt;x&gt;"
    report = xid_report()
    report.findings[0].title = HOSTILE_SCRIPT + " | pipe"
    md = report.to_markdown()
    assert "<script>" not in md.split("```")[0]
    assert "&lt;script&gt;document.title='pwned'&lt;/script&gt; \\| pipe" in md


def test_chinese():
    md = xid_report("zh").to_markdown()
    assert md.startswith("## nccllens 分析报告：GPU 硬件故障")  # full-width punctuation
    assert "**结论：** GPU 硬件故障：Xid 79" in md and "（置信度 0.93）" in md
    assert "### 发现（按可能性排序）" in md and "<summary>由此导致的症状（1）</summary>" in md


def test_rank_grid_collapsed_and_other_verdicts():
    md = big_report().to_markdown()
    assert re.search(r"gpu-node-000\.\.511\s+TTTTTTTT  8 timed out \(510 hosts\)", md)
    assert "No failure found in the logs." in healthy_report().to_markdown()
    assert "## nccllens report: cause not visible" in unknown_report().to_markdown()


def test_deterministic():
    assert xid_report().to_markdown() == xid_report().to_markdown()


def test_first_screen_is_a_ticket_summary_and_the_rest_is_folded():
    md = xid_report().to_markdown()
    first, rest = md.split("<details>", 1)
    assert "**Verdict:**" in first and "**Culprit:** gpu-node-07 / rank 61" in first
    assert first.count("gpu-node-07/dmesg.txt:4412") == 1 and "**What to do**" in first
    assert "### Findings" not in first and "### Findings" in rest
    assert rest.startswith("\n<summary>Details: GPU hardware failure · gpu-node-07 / rank 61 · ")


def test_commands_stay_code_spans():
    report = xid_report()
    report.findings[0].remediation = "1. On gpu-node-07: `nvidia-smi -q -d ECC | grep -i pending` then drain *it*."
    md = report.to_markdown()
    assert "1. On gpu-node-07: `nvidia-smi -q -d ECC | grep -i pending` then drain \\*it\\*." in md
    assert "\\`" not in md
