"""The table commands as a user pipes them (CliRunner's stdout is not a terminal): one row per line, nothing
wrapped or cut; in a terminal, what is cut is said. ``rules check`` notes a rule with English text only,
and a Chinese report shows that rule in English."""

from __future__ import annotations

import re
from pathlib import Path

from typer.testing import CliRunner

from nccllens.cli import app
from nccllens.engine import load_rules

ROOT = Path(__file__).resolve().parents[1]
FIXTURE = ROOT / "fixtures" / "exception_one_rank"
LONG = "fixtures/exception_one_rank/node-b/logs/none_xuwsywp7/attempt_0/1/stderr.log"  # 75 characters
GLOO = ("Connection closed by peer [127.0.0.1]:9951. This is typically caused by a remote worker crashing. "
        "Check the logs of the remote worker before reporting an error. GLHF!")
runner = CliRunner()


def test_events_have_a_time_column_and_whole_paths_when_piped(monkeypatch):
    monkeypatch.chdir(ROOT)
    out = runner.invoke(app, ["events", "fixtures/exception_one_rank"], terminal_width=80).stdout
    lines = out.splitlines()
    assert lines[0].split()[:2] == ["time", "file:line"]
    assert "…" not in out and "shortened" not in out
    column = lines[0].index("file:line")
    assert any(line[column:].startswith(LONG + ":") for line in lines)
    timed = [line for line in lines if re.match(r"2026-11-22 03:49:48\.560  fixtures/", line)]
    assert timed and "torchrun.sigterm_sent" in timed[0] and "Sending process 757 closing signal SIGTERM" in timed[0]
    assert any(GLOO in line for line in lines)  # messages whole too


def test_events_in_a_terminal_say_what_they_shortened(monkeypatch):
    import nccllens
    from nccllens.text_tables import events_table

    monkeypatch.chdir(ROOT)
    events = nccllens.analyze(["fixtures/exception_one_rank"]).events
    short = events_table(events, full=False)
    assert re.search(r"…\S*" + re.escape(LONG[-20:]) + r":\d+ ", short) and LONG not in short  # a path keeps its end
    assert re.search(r"^\(\d+ cell\(s\) shortened with …; use -v, or pipe the output, to see them whole\)$",
                     short, re.M)
    assert "…" not in events_table(events, full=True)


def test_rules_list_piped_is_one_whole_row_per_rule():
    out = runner.invoke(app, ["rules", "list"], terminal_width=60).stdout.splitlines()
    rules = load_rules([])
    assert len(out) == len(rules) + 1
    assert out[0].split() == ["Rule", "Category", "Severity", "Role", "Title"]
    for line, rule in zip(out[1:], sorted(rules, key=lambda r: r.id), strict=True):
        assert line.startswith(rule.id + " ") and line.endswith(rule.text_for("en").title)


def test_ranks_piped_show_the_first_error_whole():
    out = runner.invoke(app, ["ranks", str(FIXTURE)], terminal_width=80).stdout
    assert GLOO in out and "…" not in out
    row = next(line for line in out.splitlines() if line.startswith("3 "))
    assert row.split()[1:4] == ["node-b", "crashed", "yes"] and row.endswith("KeyError: 'labels'")


def test_ranks_in_a_terminal_cut_long_cells_and_say_so():
    import nccllens
    from nccllens.report.rank_table import render_ranks

    text = render_ranks(nccllens.analyze([str(FIXTURE)]), full=False)
    assert GLOO not in text and "…" in text
    assert text.rstrip().endswith("use -v, or pipe the output, to see them whole)")


EN_ONLY = """\
id = "SITE-APP-001"
category = "application_error"
severity = "error"
role = "cause"
confidence = 0.9

[match]
pattern = "KeyError: 'labels'"

[en]
title = "Our loader lost the labels on rank(s) {ranks}"
summary = "The dataset of this site has no 'labels' column on some shards."
remediation = "1. Re-run the shard check."

# a torchrun run made for this project (torch 2.13.0+cpu, gloo): the fixture exception_one_rank
[[examples]]
line = "[rank3]: KeyError: 'labels'"
version = "torch 2.13"
match = true

[[examples]]
line = "[rank0]: RuntimeError: [/__w/pytorch/pytorch/third_party/gloo/gloo/transport/tcp/pair.cc:553] Connection closed by peer [127.0.0.1]:9951."
version = "torch 2.13"
match = false
"""


def test_a_rule_of_ones_own_may_be_english_only(tmp_path):
    rules = tmp_path / "site-rules"
    rules.mkdir()
    (rules / "SITE-APP-001.toml").write_text(EN_ONLY, encoding="utf-8")
    check = runner.invoke(app, ["rules", "check", str(rules)])
    assert check.exit_code == 0, check.output
    assert re.search(r"SITE-APP-001\.toml:1: note: SITE-APP-001 has English text only \(\[en\]\); Chinese reports "
                     r"\(--lang zh\) show its English", check.stdout)
    zh = runner.invoke(app, ["analyze", str(FIXTURE), "--rules", str(rules), "--lang", "zh", "--select", "SITE-APP-001"])
    assert "Our loader lost the labels on rank(s) 3" in zh.stdout
    packaged = runner.invoke(app, ["rules", "check", str(ROOT / "nccllens" / "rules")])
    assert packaged.exit_code == 0 and "note:" not in packaged.stdout  # the packaged rules speak both


def test_ranks_speaks_chinese_with_aligned_columns():
    from pathlib import Path

    from typer.testing import CliRunner

    from nccllens.cli import app
    from nccllens.text_tables import width

    fixture = Path(__file__).resolve().parents[1] / "fixtures" / "exception_one_rank"
    out = CliRunner().invoke(app, ["ranks", str(fixture), "--lang", "zh"]).output.splitlines()
    assert out[0].startswith("总 rank 数：") and out[1].split()[:4] == ["rank", "节点", "状态", "故障源"]
    assert width(out[1][: out[1].index("状态")]) == width(out[2][: out[2].index("crashed")])
