"""The command line as a user meets it: exit codes, formats, messages on stderr, JSON contract."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from nccllens.cli import app

ROOT = Path(__file__).resolve().parents[1]
FIXTURE = ROOT / "fixtures" / "exception_one_rank"
runner = CliRunner()


def test_missing_path_exits_2_with_a_clear_message(tmp_path):
    result = runner.invoke(app, ["analyze", str(tmp_path / "nope")])
    assert result.exit_code == 2
    assert "no such file or folder" in result.output
    assert "Traceback" not in result.output


def test_json_report_follows_the_contract():
    result = runner.invoke(app, ["analyze", str(FIXTURE), "--format", "json"])
    assert result.exit_code == 1, result.output  # an error-level finding was reported
    report = json.loads(result.stdout)
    assert report["schema_version"] == 1
    assert set(report["verdict"]) >= {"category", "summary", "confidence"}
    top = report["findings"][0]
    for key in ("rule", "category", "severity", "role", "confidence", "title", "ranks", "hosts", "first_seen",
                "evidence", "explains", "remediation"):
        assert key in top
    assert top["evidence"][0]["line"] >= 1 and top["evidence"][0]["file"].startswith(str(FIXTURE))
    files = report["inputs"]["files"]
    assert all({"path", "lines", "events", "skipped"} <= set(f) for f in files)


def test_exit_zero_and_fail_on():
    assert runner.invoke(app, ["analyze", str(FIXTURE), "--format", "json", "--exit-zero"]).exit_code == 0
    assert runner.invoke(app, ["analyze", str(FIXTURE), "--format", "json", "--fail-on", "critical"]).exit_code in (0, 1)


def test_output_file_format_from_extension(tmp_path):
    out = tmp_path / "report.json"
    result = runner.invoke(app, ["analyze", str(FIXTURE), "-o", str(out), "--exit-zero"])
    assert result.exit_code == 0
    assert json.loads(out.read_text())["schema_version"] == 1
    assert result.stdout == ""


def test_events_command_shows_and_writes(tmp_path):
    result = runner.invoke(app, ["events", str(FIXTURE), "--kind", "python.*", "--rank", "3"])
    assert result.exit_code == 0
    assert "KeyError" in result.stdout
    out = tmp_path / "events.parquet"
    assert runner.invoke(app, ["events", str(FIXTURE), "-o", str(out)]).exit_code == 0
    import polars as pl

    table = pl.read_parquet(out)
    assert table.filter(pl.col("exc_type") == "KeyError")["rank"].to_list()[:1] == [3]


def test_events_shards_are_accepted_by_analyze(tmp_path):
    shards = tmp_path / "shards"
    assert runner.invoke(app, ["events", str(FIXTURE), "-o", f"{shards}/"]).exit_code == 0
    direct = json.loads(runner.invoke(app, ["analyze", str(FIXTURE), "-f", "json"]).stdout)
    via = json.loads(runner.invoke(app, ["analyze", str(shards), "-f", "json"]).stdout)
    assert via["verdict"]["category"] == direct["verdict"]["category"]
    assert via["findings"][0]["ranks"] == direct["findings"][0]["ranks"]


def test_the_installed_command_exits_at_once_with_its_code_and_all_its_output(tmp_path):
    """``main`` ends the process without the interpreter's teardown: the exit status and every byte of
    the report (to stdout and to -o) must still be there."""
    import subprocess
    import sys

    import nccllens
    from nccllens.report import render

    expected = render(nccllens.analyze(str(FIXTURE)), "json")
    cmd = [sys.executable, "-m", "nccllens.cli", "analyze", str(FIXTURE), "--format", "json"]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert (out.returncode, out.stdout, out.stderr) == (1, expected, "")
    report = tmp_path / "report.json"
    out = subprocess.run([*cmd, "-o", str(report), "--exit-zero"], capture_output=True, text=True, timeout=120)
    assert (out.returncode, out.stderr) == (0, "")
    assert report.read_text(encoding="utf-8") == expected
    out = subprocess.run([sys.executable, "-m", "nccllens.cli", "analyze", str(tmp_path / "nope")],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 2 and "no such file or folder" in out.stderr
