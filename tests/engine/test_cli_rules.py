"""`nccllens rules list|show|check` and `nccllens explain` as a user sees them."""

from __future__ import annotations

from engine_helpers import GOOD
from typer.testing import CliRunner

from nccllens.cli_rules import app, explain

runner = CliRunner()


def test_list_filters_by_category_and_speaks_chinese(monkeypatch):
    monkeypatch.setenv("NO_COLOR", "1")
    result = runner.invoke(app, ["list", "--rules", str(GOOD), "--category", "collective_timeout", "--lang", "zh"])
    assert result.exit_code == 0, result.output
    assert "TEST-TORCH-001" in result.output and "TEST-GPU-001" not in result.output
    assert "类别" in result.output


def test_list_rejects_an_unknown_category():
    result = runner.invoke(app, ["list", "--category", "gpu_hw"])
    assert result.exit_code == 2
    assert "did you mean gpu_hardware" in result.output


def test_show_by_alias_has_page_and_source(monkeypatch):
    monkeypatch.setenv("NO_COLOR", "1")
    result = runner.invoke(app, ["show", "test-old-001", "--rules", str(GOOD), "--lang", "en"])
    assert result.exit_code == 0, result.output
    out = result.output
    assert "TEST-GPU-001  GPU {pci} fell off the bus on {host} (ranks {ranks})" in out
    assert "What it detects" in out and "Why it matters" in out and "Remediation" in out
    assert "✓ matches  (driver 535)" in out and "✗ does not match  (driver 470)" in out
    assert "source: " in out and "TEST-GPU-001.toml" in out


def test_explain_in_chinese_without_colour(monkeypatch, capsys):
    monkeypatch.setenv("NO_COLOR", "1")
    assert explain("TEST-GPU-001", "zh", rules=[GOOD]) == 0
    out = capsys.readouterr().out
    assert "TEST-GPU-001  {host} 上 GPU {pci} 掉卡（rank {ranks}）" in out
    assert "处理建议" in out and "1. 驱逐节点 {host}。" in out and "参考资料" in out
    assert "\x1b[" not in out


def test_explain_unknown_rule_suggests_close_ids(capsys):
    assert explain("TEST-GPU-01", "en", rules=[GOOD]) == 1
    assert "no rule named 'TEST-GPU-01' (did you mean TEST-GPU-001" in capsys.readouterr().err
