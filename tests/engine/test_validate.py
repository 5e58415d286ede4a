"""The validator on malformed rules: each problem is one ``path:line: message`` line, never a traceback."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from engine_helpers import BAD, GOOD
from typer.testing import CliRunner

from nccllens.cli_rules import app
from nccllens.engine.loader import RuleError, load_dirs, load_rules


def problems(case: str) -> list[str]:
    return [str(p) for p in load_dirs([BAD / case], builtin=False).problems]


def shown(case: str, *parts: str) -> str:
    return str(Path("tests/engine/rules_bad", case, *parts))


@pytest.fixture(autouse=True)
def _in_repo(monkeypatch):
    monkeypatch.chdir(Path(__file__).parents[2])


@pytest.mark.parametrize(
    ("case", "expected"),
    [
        ("bad_toml", "TEST-GPU-001.toml:5: invalid TOML: "),
        ("unknown_category", "TEST-GPU-001.toml:4: unknown category 'gpu_hw': not in the taxonomy "
                             "(did you mean 'gpu_hardware'?)"),
        ("bad_regex", "TEST-GPU-001.toml:11: pattern does not compile in polars: unclosed group"),
        ("lookaround", "TEST-GPU-001.toml:11: pattern does not compile in polars: look-around, including "
                       "look-ahead and look-behind, is not supported"),
        ("unknown_placeholder", "TEST-GPU-001.toml:22: [zh] title: unknown placeholder '{hostname}' "
                                "(did you mean '{host}'?)"),
        ("no_negative_example", "TEST-GPU-001.toml:27: needs at least one example with match = false"),
    ],
)
def test_each_problem_names_file_line_and_cause(case, expected):
    found = problems(case)
    assert len(found) == 1, found
    assert found[0].startswith(shown(case) + os.sep + expected)


def test_slow_pattern_is_rejected_with_its_time():
    (found,) = problems("slow_pattern")
    assert found.startswith(shown("slow_pattern", "TEST-GPU-001.toml:11: pattern too slow: "))
    assert "limit 200 ms" in found


def test_duplicate_id_and_alias_across_directories_point_at_the_first():
    found = problems("duplicate_id")
    first = shown("duplicate_id", "a", "TEST-GPU-001.toml")
    assert found == [
        f"{shown('duplicate_id', 'b', 'TEST-GPU-001.toml')}:2: duplicate rule id or alias 'TEST-GPU-001' "
        f"(also {first}:2)",
        f"{shown('duplicate_id', 'b', 'TEST-GPU-001.toml')}:3: duplicate rule id or alias 'TEST-OLD-001' "
        f"(also {first}:3)",
    ]


def test_misspelt_key_and_unknown_where_column():
    found = problems("unknown_key_and_column")
    path = shown("unknown_key_and_column", "TEST-GPU-001.toml")
    assert f"{path}:5: unknown key 'severty' in the rule (did you mean 'severity'?)" in found
    assert any(p.startswith(f"{path}:11: where: unknown column 'xidd' (did you mean 'xid'?)") for p in found)
    assert f"{path}:1: missing required key 'severity'" in found


def test_reference_to_a_missing_rule(tmp_path):
    text = (GOOD / "TEST-TORCH-001.toml").read_text(encoding="utf-8")
    (tmp_path / "TEST-TORCH-001.toml").write_text(text, encoding="utf-8")
    found = [str(p) for p in load_dirs([tmp_path], builtin=False).problems]
    assert len(found) == 1 and found[0].endswith(":8: match.after: no rule named 'TEST-GPU-001'")


def test_good_rules_load_with_their_fields():
    rules = load_rules([GOOD], builtin=False)
    assert [r.id for r in rules] == ["TEST-GPU-001", "TEST-TORCH-001"]
    gpu = rules[0]
    assert gpu.aliases == ("TEST-OLD-001",) and gpu.confidence == 0.9
    assert gpu.text["zh"].remediation == "1. 驱逐节点 {host}。"
    assert [e.match for e in gpu.examples] == [True, False]
    assert rules[1].confidence == 0.7 and rules[1].match.after == "TEST-GPU-001"
    assert gpu.source.name == "TEST-GPU-001.toml"


def test_strict_loading_raises_with_every_problem():
    with pytest.raises(RuleError) as info:
        load_rules([BAD / "unknown_category"], builtin=False)
    assert "TEST-GPU-001.toml:4: unknown category 'gpu_hw'" in str(info.value)


def test_rules_check_command_exit_codes():
    runner = CliRunner()
    bad = runner.invoke(app, ["check", str(BAD / "unknown_category")])
    assert bad.exit_code == 1
    assert "TEST-GPU-001.toml:4: unknown category 'gpu_hw'" in bad.output
    assert "Traceback" not in bad.output
    good = runner.invoke(app, ["check", str(GOOD)])
    assert good.exit_code == 0, good.output


def test_shipped_rules_are_valid():
    from nccllens.engine.loader import builtin_rules_dir

    found = load_dirs([builtin_rules_dir()]).problems
    assert not found, "\n".join(str(p) for p in found)
