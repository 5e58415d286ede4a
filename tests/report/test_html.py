"""The HTML report: self-contained, script-free, escaped, bilingual without JavaScript, deterministic."""

from __future__ import annotations

import re

import pytest
from report_builders import (
    HOSTILE_IMG,
    HOSTILE_SCRIPT,
    big_report,
    healthy_report,
    unknown_report,
    xid_report,
)

CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"


def rects(html: str) -> list[str]:
    return re.findall(r'<rect [^>]*data-rank="(\d+)"', html)


@pytest.mark.parametrize("build", [xid_report, healthy_report, unknown_report, big_report])
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_one_rect_per_rank_and_nothing_external(build, lang):
    report = build(lang)
    html = report.to_html()
    assert sorted(map(int, rects(html))) == sorted(r.rank for r in report.ranks)
    assert f'<meta http-equiv="Content-Security-Policy" content="{CSP.replace(chr(39), "&#39;")}">' in html \
        or f'content="{CSP}"' in html
    assert "<script" not in html.lower()
    assert not re.search(r"""src\s*=\s*["']?(?:https?:)?//""", html)  # nothing fetched
    assert not re.search(r"""<(?!a )[^>]*href\s*=\s*["']?(?:https?:)?//""", html)  # links (<a>) only, never loaded
    assert "@import" not in html and "url(" not in html


def test_hover_text_names_rank_host_seq_and_state():
    html = xid_report().to_html()
    assert re.search(r'data-rank="61"[^>]*><title>rank 61 · host gpu-node-07 · last SeqNum 6462 · '
                     r'state crashed \(culprit\)</title>', html)
    assert re.search(r'<g data-host="gpu-node-03">', html)


def test_hostile_log_text_is_escaped():
    html = xid_report(hostile=True).to_html()
    assert HOSTILE_SCRIPT not in html and HOSTILE_IMG not in html
    assert "&lt;script&gt;document.title=&#39;pwned&#39;&lt;/script&gt;" in html
    assert "&lt;img src=x onerror=&#34;document.title=&#39;pwned&#39;&#34;&gt;" in html


def test_both_languages_embedded_with_css_only_switch():
    html = xid_report().to_html()
    assert '<input type="radio" class="lang-radio" name="lang" id="lang-en" checked>' in html
    assert '<input type="radio" class="lang-radio" name="lang" id="lang-zh">' in html
    assert "#lang-en:checked ~ .page .l-zh { display: none; }" in html
    assert '<span class="l-zh" lang="zh">发现（按可能性排序）</span>' in html
    assert '<span class="l-en" lang="en">Findings, most likely cause first</span>' in html
    assert "Xid 79：gpu-node-07 上的 GPU 掉卡" in html and "Xid 79: GPU has fallen off the bus on gpu-node-07" in html


def test_lang_option_picks_the_default_language():
    html = xid_report().to_html(lang="zh")
    assert '<html lang="zh">' in html
    assert 'id="lang-zh" checked>' in html and 'id="lang-en">' in html


def test_single_language_finding_rendered_once():
    html = unknown_report().to_html()
    title = "Watchdog timeout in _REDUCE_SCATTER_BASE SeqNum 7753 on ranks 0,4"
    assert html.count(title) == 1


def test_verdict_findings_evidence_job_inventory():
    html = xid_report().to_html()
    assert "GPU hardware failure: Xid 79: GPU has fallen off the bus on gpu-node-07, on rank 61" in html
    assert '<details class="evidence" open>' in html  # the cause's evidence is open, symptoms folded
    assert '<details class="symptoms">' in html
    assert "gpu-node-07/dmesg.txt:4412" in html
    assert "gpu-node-03/core.1234</code></td><td>binary file (core dump)" in html
    assert '<svg class="swimlane"' in html and 'class="first"' in html
    assert re.search(r"<th>.*World size.*</th><td>64</td>", html)


def test_deterministic():
    assert big_report().to_html() == big_report().to_html()
    assert xid_report("zh").to_html() == xid_report("zh").to_html()


def test_big_report_collapses_host_table():
    html = big_report().to_html()
    assert 'gpu-node-000..511<span class="l-en" lang="en"> (</span><span class="l-zh" lang="zh">（</span>510' in html
    assert len(rects(html)) == 4096


def test_rank_states_have_distinct_colours_never_seen_muted_and_the_culprit_loudest():
    from nccllens.report.labels import STATE_COLOURS

    def luminance(hex_colour: str) -> float:
        r, g, b = (int(hex_colour[i:i + 2], 16) for i in (1, 3, 5))
        return 0.299 * r + 0.587 * g + 0.114 * b

    def saturation(hex_colour: str) -> int:
        rgb = [int(hex_colour[i:i + 2], 16) for i in (1, 3, 5)]
        return max(rgb) - min(rgb)

    shown = ("culprit", "crashed", "timed_out", "never_seen")
    assert len({STATE_COLOURS[s] for s in shown}) == len(shown)
    assert luminance(STATE_COLOURS["never_seen"]) > max(luminance(STATE_COLOURS[s]) for s in shown if s != "never_seen")
    assert saturation(STATE_COLOURS["never_seen"]) < 16  # grey: muted
    assert saturation(STATE_COLOURS["culprit"]) == max(saturation(c) for c in STATE_COLOURS.values())


def test_job_table_says_only_what_is_known_and_references_are_links():
    report = xid_report()
    report.job.world_size, report.job.attempts = None, 3
    report.findings[0].references = ["https://docs.nvidia.com/deploy/xid-errors/", "NVIDIA Xid catalogue"]
    html = report.to_html()
    assert f"at least {len(report.job.ranks_seen)}" in html and "至少" in html  # never "?"
    assert "Restarts</span>" in html and "<td>2</td>" in html  # attempts - 1
    assert '<a href="https://docs.nvidia.com/deploy/xid-errors/" rel="noreferrer">' in html
    assert "<code>NVIDIA Xid catalogue</code>" in html


def test_the_timeline_folds_hosts_whose_first_error_reads_the_same(tmp_path):
    # issue 18 §5: the culprit and the spread, not 40 identical victim timeouts (synthetic corpus, bench/synth.py)
    import subprocess
    import sys
    from pathlib import Path

    import nccllens
    from nccllens.report.svg_layout import swimlane

    root = Path(__file__).resolve().parents[2]
    out = tmp_path / "logs"
    subprocess.run([sys.executable, str(root / "bench" / "synth.py"), str(out), "--ranks", "64", "--hosts", "8",
                    "--fault", "missing_node", "--bytes", "1M"], check=True, capture_output=True)
    report = nccllens.analyze(str(out))
    lanes = swimlane(report, "en")
    assert lanes is not None and len(lanes.lanes) < len(report.job.hosts)
    assert sum(lane.more for lane in lanes.lanes) + len(lanes.lanes) + lanes.more >= len(report.job.hosts) - 1
