"""Every id a report shows, the analyses' ``AN-*`` ids too, has an ``explain`` page, completes in the shell,
and works with ``--select`` / ``--ignore`` and ``[tool.nccllens]``; ``--config`` names a configuration."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from nccllens.analyses.common import texts
from nccllens.cli import app

ROOT = Path(__file__).resolve().parents[1]
FIXTURE = ROOT / "fixtures" / "exception_peers_time_out"  # rank 0's KeyError; AN-GLOO-ABSENT names rank 0
runner = CliRunner()


def rules_of(*args: str) -> list[str]:
    result = runner.invoke(app, ["analyze", str(FIXTURE), "-f", "json", *args])
    assert result.exit_code in (0, 1), result.output
    return [f["rule"] for f in json.loads(result.stdout)["findings"]]


@pytest.fixture(scope="module")
def shown_ids() -> list[str]:
    return rules_of()


def test_the_fixture_shows_an_analysis_id(shown_ids):
    assert "AN-GLOO-ABSENT" in shown_ids and "NL-APP-010" in shown_ids


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_every_id_a_report_shows_has_an_explain_page(shown_ids, lang):
    for rule in shown_ids:
        page = runner.invoke(app, ["explain", rule, "--lang", lang])
        assert page.exit_code == 0, (rule, page.output)
        assert page.stdout.startswith(rule + "  ")
        assert ("处理建议" if lang == "zh" else "Remediation") in page.stdout


def test_every_analysis_has_a_page_in_both_languages_with_no_unfilled_braces():
    for analysis in texts():
        en = runner.invoke(app, ["explain", analysis.lower(), "--lang", "en"])
        zh = runner.invoke(app, ["explain", analysis, "--lang", "zh"])
        assert en.exit_code == zh.exit_code == 0, (analysis, en.output, zh.output)
        assert "cross-rank analysis" in en.stdout and "跨 rank 分析" in zh.stdout
        assert "{" not in en.stdout.split("\n", 1)[0]  # placeholders read <ranks>, not {ranks}
        assert f"--ignore {analysis}" in en.stdout
        assert "Category:" not in zh.stdout and "类别：" in zh.stdout  # full-width colon in Chinese


def test_an_unknown_analysis_id_suggests_the_near_one():
    result = runner.invoke(app, ["explain", "AN-GLOO-ABSNT"])
    assert result.exit_code == 1
    assert "did you mean AN-GLOO-ABSENT" in result.output


def test_analysis_ids_are_selected_and_ignored_on_the_command_line(shown_ids):
    assert "AN-GLOO-ABSENT" not in rules_of("--ignore", "AN-GLOO-ABSENT")
    assert rules_of("--ignore", "AN-GLOO-ABSENT") == [r for r in shown_ids if r != "AN-GLOO-ABSENT"]
    assert rules_of("--select", "AN-GLOO-ABSENT") == ["AN-GLOO-ABSENT"]
    assert rules_of("--select", "AN-GLOO") == ["AN-GLOO-ABSENT"]  # an id prefix, as for rules
    assert not any(r.startswith("AN-") for r in rules_of("--ignore", "AN"))
    assert sorted(rules_of("--select", "NL-APP-010", "--select", "AN-GLOO-ABSENT")) == ["AN-GLOO-ABSENT", "NL-APP-010"]


def test_a_misspelt_analysis_id_is_an_error_not_an_empty_report():
    result = runner.invoke(app, ["analyze", str(FIXTURE), "--ignore", "AN-GLOO-ABSNT"])
    assert result.exit_code == 2
    assert "no rule, analysis or category named 'AN-GLOO-ABSNT'" in result.output


def test_selecting_only_an_absent_analysis_says_nothing_was_found_for_the_selection():
    result = runner.invoke(app, ["analyze", str(FIXTURE), "--select", "AN-OP-DIVERGENCE", "-q"])
    assert result.exit_code == 0
    assert "Nothing to report for --select AN-OP-DIVERGENCE" in result.stdout


def test_analysis_ids_in_the_configuration_of_the_working_directory(tmp_path, monkeypatch, shown_ids):
    (tmp_path / "pyproject.toml").write_text('[tool.nccllens]\nignore = ["AN-GLOO-ABSENT"]\n', encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(app, ["analyze", str(FIXTURE), "-f", "json"])
    report = json.loads(result.stdout)
    assert [f["rule"] for f in report["findings"]] == [r for r in shown_ids if r != "AN-GLOO-ABSENT"]
    assert "pyproject.toml" in [Path(i["path"]).name for i in report["inputs"]["files"]
                                if i["kind"] == "configuration"]


def test_config_names_a_configuration_explicitly_and_the_report_says_which(tmp_path, monkeypatch):
    config = tmp_path / "site" / "nccllens.toml"
    config.parent.mkdir()
    config.write_text('select = ["AN-GLOO-ABSENT"]\n', encoding="utf-8")
    monkeypatch.chdir(tmp_path)  # no configuration here: only --config's is read
    result = runner.invoke(app, ["analyze", str(FIXTURE), "--config", str(config), "-v"])
    assert "AN-GLOO-ABSENT" in result.stdout and "NL-APP-010" not in result.stdout
    assert str(config) in result.stdout and "read as nccllens configuration" in result.stdout
    missing = runner.invoke(app, ["analyze", str(FIXTURE), "--config", str(tmp_path / "nope.toml")])
    assert missing.exit_code == 2 and "--config" in missing.output and "no such file" in missing.output


def test_help_states_where_configuration_comes_from():
    text = runner.invoke(app, ["analyze", "--help"], terminal_width=200).stdout
    assert "--config" in text
    assert "working directory" in text and "never from a folder being analysed" in " ".join(text.split())


def complete(words: str) -> list[str]:
    env = {"_NCCLLENS_COMPLETE": "complete_bash", "COMP_WORDS": words, "COMP_CWORD": str(len(words.split()) - 1)}
    return runner.invoke(app, [], prog_name="nccllens", env=env).stdout.split()


def test_rule_and_analysis_ids_complete_in_the_shell():
    assert complete("nccllens explain AN-GLOO") == ["AN-GLOO-ABSENT"]
    assert "NL-APP-010" in complete("nccllens explain NL-APP-01")
    assert complete("nccllens analyze logs --ignore AN-GLOO") == ["AN-GLOO-ABSENT"]
    assert complete("nccllens analyze logs --select gpu_ha") == ["gpu_hardware"]
