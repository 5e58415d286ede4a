"""Inputs decide nothing about trust (issue 19): configuration, rule paths, traceback headers, UTC offsets."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

import nccllens
from nccllens.cli import app
from tests.hostile.planted import assert_oom_on_rank3_first, plant

runner = CliRunner()


def test_a_traceback_header_never_swallows_the_error_line_after_it(tmp_path):
    (tmp_path / "rank3.log").write_text(
        "Traceback (most recent call last):\n"
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 3 has a total capacity "
        "of 79.15 GiB of which 1.02 GiB is free.\n")
    assert_oom_on_rank3_first(nccllens.analyze([str(tmp_path)]))
    (tmp_path / "rank3.log").write_text(
        "[rank3]: Traceback (most recent call last):\n"
        "[rank3]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.\n")
    assert_oom_on_rank3_first(nccllens.analyze([str(tmp_path)]))


def test_utc_offsets_are_kept_when_ordering(tmp_path):
    # node-a fails at 10:00 UTC (12:00+02:00); node-b at 10:30 UTC (05:30-05:00): node-a is first
    (tmp_path / "node-a-kern.log").write_text(
        "2024-05-01T12:00:00.000000+02:00 node-a kernel: NVRM: Xid (PCI:0000:07:00): 79, pid=1, "
        "GPU has fallen off the bus.\n")
    (tmp_path / "node-b-kern.log").write_text(
        "2024-05-01T05:30:00.000000-05:00 node-b kernel: NVRM: Xid (PCI:0000:07:00): 79, pid=1, "
        "GPU has fallen off the bus.\n")
    events = nccllens.analyze([str(tmp_path)]).events
    xids = events.filter(events["kind"] == "kernel.xid").sort("host")
    ts = dict(zip(xids["host"].to_list(), xids["ts"].to_list(), strict=True))
    assert ts["node-a"] < ts["node-b"] and (ts["node-b"] - ts["node-a"]).total_seconds() == 1800


def _config(folder: Path, text: str) -> None:
    (folder / "nccllens.toml").write_text(text)


def test_a_configuration_in_an_analysed_folder_is_not_read(tmp_path, monkeypatch):
    ticket = plant(tmp_path / "ticket")
    _config(ticket, 'ignore = ["gpu_oom"]\n')
    (ticket / "logs").mkdir()
    monkeypatch.chdir(ticket)  # the user runs from inside the ticket: its configuration is not theirs
    result = runner.invoke(app, ["analyze", "."])
    assert result.exit_code == 1 and "GPU out of memory" in result.stdout
    assert "not read as configuration" in result.stderr
    monkeypatch.chdir(ticket / "logs")  # nor from a parent of the working directory
    assert "GPU out of memory" in runner.invoke(app, ["analyze", ".."]).stdout


def test_the_configuration_used_is_named_in_the_report(tmp_path, monkeypatch):
    logs = plant(tmp_path / "logs")
    work = tmp_path / "work"
    work.mkdir()
    _config(work, 'lang = "en"\n')
    monkeypatch.chdir(work)
    result = runner.invoke(app, ["analyze", str(logs)])
    assert str(work / "nccllens.toml") in result.stdout and "configuration" in result.stdout


def test_rule_paths_outside_reason_are_refused(tmp_path, monkeypatch):
    logs = plant(tmp_path / "logs")
    result = runner.invoke(app, ["analyze", str(logs), "--rules", "/"])
    assert result.exit_code == 2 and "outside reason" in result.output
    work = tmp_path / "work"
    work.mkdir()
    _config(work, 'rules = ["/"]\n')
    monkeypatch.chdir(work)
    result = runner.invoke(app, ["analyze", str(logs)])
    assert result.exit_code == 2 and "nccllens.toml:1: rule folder '/' is outside reason" in result.output
