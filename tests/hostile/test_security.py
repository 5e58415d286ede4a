"""Security items of the hostile-input suite: escaped HTML, refused pickles, rejected user rules,
and a hostile user rule never stopping the analysis with a traceback."""

from __future__ import annotations

import os
import pickle
from pathlib import Path

from typer.testing import CliRunner

import nccllens
from nccllens.cli import app
from nccllens.report import render

ROOT = Path(__file__).resolve().parents[2]
BAD_RULES = ROOT / "tests" / "engine" / "rules_bad"
HOSTILE = ("[rank0]: KeyError: '<script>document.title=\"pwned\"</script>"
           "<img src=x onerror=\"document.title='pwned'\">'\n")


def test_log_text_is_escaped_in_html_and_scripts_are_forbidden(tmp_path):
    (tmp_path / "rank0.log").write_text("[rank0]: Traceback (most recent call last):\n"
                                        "[rank0]:   File \"/job/train.py\", line 3, in <module>\n" + HOSTILE)
    html = render(nccllens.analyze([str(tmp_path)]), "html")
    assert "<script>document" not in html and "<img src=x" not in html
    assert "&lt;script&gt;" in html
    assert "Content-Security-Policy" in html and "default-src" in html
    assert "<script" not in html.lower()  # the report itself carries no script at all


class _RunsCode:
    def __reduce__(self):
        return (os.system, ("touch /tmp/nccllens_hostile_pickle",))


def test_a_flight_recorder_pickle_that_would_run_code_is_refused(tmp_path):
    marker = Path("/tmp/nccllens_hostile_pickle")
    marker.unlink(missing_ok=True)
    (tmp_path / "fr_trace_rank_3").write_bytes(pickle.dumps({"version": "2.10", "entries": [_RunsCode()]}))
    report = nccllens.analyze([str(tmp_path)])
    assert not marker.exists()
    refused = report.events.filter(report.events["kind"] == "other.parser_error")["message"].to_list()
    assert any("refused" in m for m in refused)


def test_user_rule_with_a_bad_or_slow_pattern_is_rejected_with_file_and_line():
    for case in ("bad_regex", "slow_pattern", "lookaround"):
        result = CliRunner().invoke(app, ["rules", "check", str(BAD_RULES / case)])
        assert result.exit_code == 1
        assert "TEST-GPU-001.toml:" in result.output and "Traceback" not in result.output


def test_analyze_with_a_hostile_rule_folder_exits_2_with_a_message(tmp_path):
    (tmp_path / "rank0.log").write_text(HOSTILE)
    result = CliRunner().invoke(app, ["analyze", str(tmp_path), "--rules", str(BAD_RULES / "slow_pattern")])
    assert result.exit_code == 2
    assert "TEST-GPU-001.toml:" in result.output and "Traceback" not in result.output
