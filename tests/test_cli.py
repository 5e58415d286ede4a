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
    assert (out.returncode, out.stderr) == (0, f"nccllens: wrote the json report to {report}\n")
    assert report.read_text(encoding="utf-8") == expected
    out = subprocess.run([sys.executable, "-m", "nccllens.cli", "analyze", str(tmp_path / "nope")],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 2 and "no such file or folder" in out.stderr


def _one_error_line(result) -> str:
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1, result.output
    return lines[0]


def test_reading_nothing_is_an_input_error_not_a_healthy_job(tmp_path):
    """pytest exits 5 on "no tests ran"; an empty folder, a folder of non-logs, empty stdin and a corrupt
    archive are exit 2 with one line saying why, never "no failure"."""
    (tmp_path / "empty").mkdir()
    (tmp_path / "pictures").mkdir()
    (tmp_path / "pictures" / "a.png").write_bytes(b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR" + bytes(64))
    (tmp_path / "logs.tar.gz").write_bytes(b"\x1f\x8b\x08\0 definitely not a gzip stream" * 4)
    cases = {str(tmp_path / "empty"): "no files in", str(tmp_path / "pictures"): "not a log",
             str(tmp_path / "logs.tar.gz"): "logs.tar.gz"}
    for path, why in cases.items():
        result = runner.invoke(app, ["analyze", path])
        assert result.exit_code == 2, (path, result.output)
        line = _one_error_line(result)
        assert line.startswith("nccllens: nothing to analyze") and why in line
        assert "no failure" not in result.output.lower()
    result = runner.invoke(app, ["analyze", "-"], input="")
    assert result.exit_code == 2 and "standard input is empty" in _one_error_line(result)


def test_no_failure_needs_proof_that_the_job_finished():
    finished = json.loads(runner.invoke(app, ["analyze", str(ROOT / "fixtures" / "healthy_clean"), "-f", "json"]).stdout)
    assert finished["verdict"]["category"] == "none"
    assert finished["verdict"]["summary"].startswith("No failure found: the logs show the job finished (")
    assert "node-a/console.log:57" in finished["verdict"]["summary"]  # torchrun's "successfully finished"
    assert "已正常结束" in finished["verdict"]["texts"]["zh"]
    # the same kind of run cut before its end: nothing proves it finished
    unproven = json.loads(runner.invoke(app, ["analyze", str(ROOT / "fixtures" / "healthy_shutdown_warnings"),
                                              "-f", "json"]).stdout)
    summary = unproven["verdict"]["summary"]
    assert unproven["verdict"]["category"] == "unknown"  # "none" needs a sign that the job finished
    assert "No failure found" not in summary and summary.startswith("No known failure pattern in 2 files")
    assert "Collect" in summary and "dmesg" in summary
    nccl_tests = ROOT / "fixtures" / "public" / "nccltests_3node_a100_allreduce_ok"
    summary = json.loads(runner.invoke(app, ["analyze", str(nccl_tests), "-f", "json"]).stdout)["verdict"]["summary"]
    assert summary.startswith("No failure found") and "all_reduce_perf.log:" in summary  # "# Avg bus bandwidth"


def test_select_that_leaves_nothing_says_so():
    result = runner.invoke(app, ["analyze", str(ROOT / "fixtures" / "healthy_shutdown_warnings"),
                                 "--select", "NL-GPU-001"])
    assert result.exit_code == 0
    assert "Nothing to report for --select NL-GPU-001" in result.stdout
    assert "No failure found" not in result.stdout


HANG = ROOT / "fixtures" / "public" / "weathergen_timeout_env_reinstall"  # only watchdog timeouts: cause unknown


def test_a_hang_without_a_visible_cause_still_says_what_to_do():
    out = runner.invoke(app, ["analyze", str(HANG)]).stdout
    assert out.startswith("Verdict: The logs do not show the cause")
    steps = out.split("What to do", 1)[1].split("Findings", 1)[0]
    assert "dmesg -T" in steps and "TORCH_NCCL_DUMP_ON_TIMEOUT=1" in steps and "py-spy dump" in steps
    zh = runner.invoke(app, ["analyze", str(HANG), "--lang", "zh"]).stdout
    assert "处理建议" in zh and "py-spy dump" in zh


def test_the_report_ends_with_a_one_line_summary_and_quiet_prints_only_that():
    out = runner.invoke(app, ["analyze", str(FIXTURE)]).stdout.rstrip("\n").splitlines()
    assert out[-1] == "exception in the training code · node-b / rank 3 · 6 findings · 14 files read, 1 skipped"
    quiet = [line for line in runner.invoke(app, ["analyze", str(FIXTURE), "-q"]).stdout.splitlines() if line]
    assert len(quiet) == 2 and quiet[0].startswith("Verdict: exception in the training code") and quiet[1] == out[-1]
    zh = runner.invoke(app, ["analyze", str(FIXTURE), "-q", "--lang", "zh"]).stdout.rstrip().splitlines()[-1]
    assert zh == "训练代码异常 · node-b / rank 3 · 6 项发现 · 已读取 14 个文件，跳过 1 个"


def test_inputs_are_counts_unless_verbose_and_piped_output_is_not_wrapped():
    plain = runner.invoke(app, ["analyze", str(FIXTURE)]).stdout
    assert "14 files read (250 lines" in plain and "stderr.log  (" not in plain
    verbose = runner.invoke(app, ["analyze", str(FIXTURE), "-v"]).stdout
    assert "attempt_0/1/stderr.log  (" in verbose
    verdict = plain.splitlines()[0]  # piped: the whole verdict, its first step included, on one line
    assert "First: Open the full traceback of rank(s) 3" in verdict and verdict.endswith("(confidence 0.79)")


def test_version_help_everywhere_and_no_type_metavars():
    for args in (["--version"], ["-V"]):
        result = runner.invoke(app, args)
        assert result.exit_code == 0 and result.stdout.startswith("nccllens ")
    for command in (["analyze"], ["events"], ["ranks"], ["explain"], ["rules", "list"], []):
        result = runner.invoke(app, [*command, "-h"], env={"COLUMNS": "120"})
        assert result.exit_code == 0, (command, result.output)
        assert "<bool>" not in result.stdout and "<list[" not in result.stdout and "<str>" not in result.stdout
    assert "Examples" in runner.invoke(app, ["analyze", "--help"]).stdout


def test_output_extension_must_be_known_and_writing_is_confirmed(tmp_path):
    result = runner.invoke(app, ["analyze", str(FIXTURE), "-o", str(tmp_path / "r.pdf")])
    assert result.exit_code == 2 and "unknown report extension '.pdf'" in result.output
    assert not (tmp_path / "r.pdf").exists()
    result = runner.invoke(app, ["analyze", str(FIXTURE), "-o", str(tmp_path / "r.pdf"), "-f", "md", "--exit-zero"])
    assert result.exit_code == 0 and (tmp_path / "r.pdf").read_text().startswith("## ")
    assert f"wrote the md report to {tmp_path / 'r.pdf'}" in result.output


def test_the_same_path_given_twice_is_read_once():
    once = json.loads(runner.invoke(app, ["analyze", str(FIXTURE), "-f", "json"]).stdout)
    twice = json.loads(runner.invoke(app, ["analyze", str(FIXTURE), f"{FIXTURE}/", str(FIXTURE), "-f", "json"]).stdout)
    assert len(twice["inputs"]["files"]) == len(once["inputs"]["files"])
    assert twice["findings"][0]["count"] == once["findings"][0]["count"]


def test_events_filter_by_host_rank_and_kind():
    out = runner.invoke(app, ["events", str(FIXTURE), "--host", "node-a", "--kind", "python.*"]).stdout
    rows = out.splitlines()[1:-1]
    assert rows and all(" node-a " in row for row in rows)
    bad = runner.invoke(app, ["events", str(FIXTURE), "--kind", "bogus"])
    assert bad.exit_code == 2 and "unknown event kind 'bogus'" in bad.output


def test_ranks_as_json_mark_the_culprit_and_when_each_rank_was_last_seen():
    result = runner.invoke(app, ["ranks", str(FIXTURE), "--format", "json"])
    assert result.exit_code == 0
    rows = {r["rank"]: r for r in json.loads(result.stdout)["ranks"]}
    assert [r for r, row in rows.items() if row["culprit"]] == [3]
    assert rows[3]["last_seen"].startswith("2026-11-22T03:49:4")
    text = runner.invoke(app, ["ranks", str(FIXTURE)]).stdout
    assert "culprit" in text.splitlines()[1] and "last seen" in text.splitlines()[1]


def test_rule_ids_complete_in_the_shell_and_the_html_footer_names_its_command(tmp_path):
    import subprocess
    import sys

    from nccllens.cli import _complete_rule

    assert "NL-GPU-001" in _complete_rule("nl-gpu-00") and "AN-MASKED-EXIT" in _complete_rule("AN-M")
    out = tmp_path / "r.html"
    subprocess.run([sys.executable, "-m", "nccllens.cli", "analyze", str(FIXTURE), "-o", str(out), "--exit-zero"],
                   check=True, capture_output=True, timeout=120)
    assert f"<code>nccllens analyze {FIXTURE} -o {out} --exit-zero</code></footer>" in out.read_text()


def test_event_shards_keep_the_proof_that_a_job_finished(tmp_path):
    healthy = ROOT / "fixtures" / "healthy_clean"
    assert runner.invoke(app, ["events", str(healthy), "-o", f"{tmp_path}/shards/"]).exit_code == 0
    via = json.loads(runner.invoke(app, ["analyze", str(tmp_path / "shards"), "-f", "json"]).stdout)
    assert via["verdict"]["summary"].startswith("No failure found: the logs show the job finished")


def test_the_installed_scripts_fast_path_names_its_command_in_the_html_footer(tmp_path):
    import subprocess
    import sys

    out = tmp_path / "r.html"
    code = "import sys; sys.argv[0] = 'nccllens'; from nccllens.main import main; main()"
    subprocess.run([sys.executable, "-c", code, "analyze", str(FIXTURE), "-o", str(out), "--exit-zero"],
                   check=True, capture_output=True, timeout=120)
    assert f"<code>nccllens analyze {FIXTURE} -o {out} --exit-zero</code></footer>" in out.read_text()
