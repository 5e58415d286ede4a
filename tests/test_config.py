"""Configuration discovery and merging with the command line."""

from __future__ import annotations

from pathlib import Path

import pytest

from nccllens.config import ConfigError, find_config, load_settings, resolve


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_pyproject_with_a_tool_table_in_the_working_directory_only(tmp_path):
    write(tmp_path / "pyproject.toml", '[tool.nccllens]\nrules = ["site-rules"]\nselect = ["gpu_hardware"]\n'
                                       'lang = "zh"\nfail-on = "critical"\n')
    write(tmp_path / "job" / "pyproject.toml", '[project]\nname = "train"\n')  # no [tool.nccllens]: skipped
    start = tmp_path / "job" / "logs"
    start.mkdir(parents=True)
    assert find_config(start) is None  # parents are not searched (issue 19: a ticket's own config)
    assert find_config(tmp_path / "job") is None
    start = tmp_path
    assert find_config(start) == (tmp_path / "pyproject.toml").resolve()
    s = load_settings(start)
    assert s.rules == [(tmp_path / "site-rules").resolve()]
    assert s.select == ["gpu_hardware"] and s.lang == "zh" and s.fail_on == "critical"


def test_nccllens_toml_wins_in_the_same_directory(tmp_path):
    write(tmp_path / "pyproject.toml", '[tool.nccllens]\nlang = "zh"\n')
    write(tmp_path / "nccllens.toml", 'lang = "en"\nignore = ["NL-GPU-009"]\n')
    s = load_settings(tmp_path)
    assert s.lang == "en" and s.ignore == ["NL-GPU-009"] and s.source.name == "nccllens.toml"


def test_no_configuration_gives_defaults(tmp_path):
    s = load_settings(tmp_path)
    assert s.rules == [] and s.select == [] and s.lang is None and s.fail_on is None


def test_command_line_over_configuration(tmp_path):
    write(tmp_path / "nccllens.toml", 'rules = ["r1"]\nselect = ["NL-GPU"]\nignore = ["NL-GPU-009"]\n'
                                      'lang = "zh"\nfail-on = "error"\n')
    s = resolve(rules=["r2"], select=["ib_fabric"], ignore=["NL-IB-004"], lang="en", start=tmp_path)
    assert s.rules == [(tmp_path / "r1").resolve(), Path("r2")]
    assert s.select == ["ib_fabric"]  # replaces
    assert s.ignore == ["NL-GPU-009", "NL-IB-004"]  # adds
    assert s.lang == "en" and s.fail_on == "error"
    assert resolve(start=tmp_path).select == ["NL-GPU"]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('lang = "en"\nselekt = ["x"]\n', ":2: unknown key 'selekt'"),
        ('lang = "fr"\n', ":1: lang must be one of en, zh, not 'fr'"),
        ('\nfail-on = "fatal"\n', ":2: fail-on must be one of critical, error, warning, info, not 'fatal'"),
        ('select = "NL-GPU-001"\n', ":1: 'select' must be a list of strings"),
    ],
)
def test_bad_configuration_names_file_and_line(tmp_path, text, message):
    path = write(tmp_path / "nccllens.toml", text)
    with pytest.raises(ConfigError) as info:
        load_settings(tmp_path)
    assert str(info.value).startswith(str(path.resolve()) + message)


def test_pyproject_keys_are_found_under_the_tool_table(tmp_path):
    path = write(tmp_path / "pyproject.toml", '[project]\nname = "x"\n\n[tool.nccllens]\nlang = "de"\n')
    with pytest.raises(ConfigError, match=r"pyproject.toml:5: lang must be one of en, zh"):
        load_settings(tmp_path)
    assert path.exists()


def test_a_malformed_configuration_of_ours_is_an_error_with_file_and_line(tmp_path):
    write(tmp_path / "ours" / "pyproject.toml", '[project]\nname = "x"\n\n[tool.nccllens]\nlang = "zh\n')
    with pytest.raises(ConfigError, match=r"pyproject.toml:5: invalid TOML: "):
        load_settings(tmp_path / "ours")
    write(tmp_path / "theirs" / "pyproject.toml", '[project\nname = "x"\n')  # not ours: not our business
    assert load_settings(tmp_path / "theirs").lang is None


def test_configuration_comes_from_the_working_directory_not_from_above_the_logs(tmp_path, monkeypatch):
    # issue 19 (logs never configure their analysis) over issue 18's lookup from the analysed folder upwards
    from typer.testing import CliRunner

    from nccllens.cli import app

    logs = tmp_path / "job" / "logs"
    write(logs / "rank0.log", "[rank0]:RuntimeError: CUDA error: an illegal memory access was encountered\n")
    write(tmp_path / "job" / "nccllens.toml", 'lang = "zh"\n')
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    monkeypatch.setenv("LANG", "C")
    result = CliRunner().invoke(app, ["analyze", str(logs), "-q"])
    assert "结论" not in result.stdout and "Verdict" in result.stdout
    write(work / "nccllens.toml", 'lang = "zh\n')  # the working directory's, malformed: file and line
    result = CliRunner().invoke(app, ["analyze", str(logs), "-q"])
    assert result.exit_code == 2 and "nccllens.toml:1: invalid TOML" in result.output
