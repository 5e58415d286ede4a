"""Time on patterns is bounded (issue 19): every family PREFILTER runs in near-linear time on lines
shaped against it, and every built-in rule pattern is bounded by what the guard lets it see."""

from __future__ import annotations

import re
import time

import pytest

from nccllens.analysis import Options, load_rules
from nccllens.engine.patterns import nested_quantifiers
from nccllens.parse import load_families
from nccllens.parse.guard import MATCH_MAX, for_matching
from nccllens.prefilter import compiled


def adversarial(pattern: str, n: int) -> list[str]:
    """Lines of ``n`` characters made of the pattern's own pieces: its words repeated, its characters,
    digits, blanks, and a token-and-colon run (what an unanchored ``\\S+ x`` re-scans from every
    position)."""
    words = re.findall(r"[A-Za-z][A-Za-z /:._-]{2,}", pattern)[:4]
    chars = "".join(sorted(set(re.sub(r"\\.|[][()?*+|{}^$]", "", pattern))))[:40] or "a"
    lines = [(w + " ") * (n // (len(w) + 1)) for w in words]
    lines += [(chars * (n // len(chars) + 1))[:n], "0" * n, " " * n, ("a1:" * n)[:n], ("[1]x" * n)[:n]]
    return lines


def _seconds(regex: re.Pattern, lines: list[str], guard: bool) -> float:
    best = float("inf")
    for _ in range(5):  # the best of five: the machine is shared
        start = time.perf_counter()
        for line in lines:
            regex.search(for_matching(line) if guard else line)
        best = min(best, time.perf_counter() - start)
    return best


FAMILIES = [(f.name, f.prefilter) for f in load_families()]
RULES = [(r.id, r.match.pattern) for r in load_rules(Options()) if r.match.pattern]


@pytest.mark.parametrize("name,pattern", FAMILIES, ids=[n for n, _ in FAMILIES])
def test_every_family_prefilter_is_near_linear_on_lines_shaped_against_it(name, pattern):
    regex = compiled(pattern)
    small = _seconds(regex, adversarial(pattern, 8 << 10), guard=False)
    large = _seconds(regex, adversarial(pattern, 64 << 10), guard=False)
    # 8x the length: linear is 8x the time, quadratic 64x (the kernel family's was: 62 s on 64 KiB)
    assert large < 20 * small + 0.5, (name, small, large)  # slack: a shared, loaded machine


def test_every_rule_pattern_is_bounded_by_the_guard():
    small = large = 0.0
    for _, pattern in RULES:
        regex = compiled(pattern)
        if regex is None:  # only polars (Rust, linear) can run it: the rule pass then uses polars
            continue
        small += _seconds(regex, adversarial(pattern, 8 << 10), guard=True)
        large += _seconds(regex, adversarial(pattern, 64 << 10), guard=True)
    # what is matched is cut at MATCH_MAX (16 KiB): 64 KiB lines cost what 16 KiB ones do
    assert large < 8 * small + 0.5, (small, large)


def test_the_guard_cuts_what_is_matched_and_long_numbers():
    assert len(for_matching("x" * (1 << 20))) == MATCH_MAX
    assert for_matching("rank " + "9" * 5000) == "rank " + "9" * 1000
    short = "[rank3]: torch.OutOfMemoryError: CUDA out of memory."
    assert for_matching(short) is short


@pytest.mark.parametrize("pattern", [r"(a+)+$", r"(\w*\s?)*x", r"(x|y+)*z", r"(?:\d+,?)+;"])
def test_user_patterns_with_nested_quantifiers_are_refused(pattern):
    assert nested_quantifiers(pattern)


@pytest.mark.parametrize("pattern", [r"(?:ab)+", r"a{2,5}b+", r"NCCL WARN .* failed", r"(?:foo|bar)+ baz",
                                     r"^\s*(?:\w+\.)*KeyError", r"(?:[^,]+,)+x"])
def test_plain_patterns_are_accepted(pattern):
    assert nested_quantifiers(pattern) is None


def test_a_user_rule_with_a_catastrophic_pattern_is_refused_before_it_runs(tmp_path):
    from pathlib import Path

    from typer.testing import CliRunner

    from nccllens.cli import app
    from tests.hostile.planted import plant

    root = Path(__file__).resolve().parents[2]
    source = (root / "tests" / "engine" / "rules_bad" / "lookaround" / "TEST-GPU-001.toml").read_text()
    rules = tmp_path / "rules"
    rules.mkdir()
    lines = ["pattern = '(a+)+$'" if ln.startswith("pattern =") else ln for ln in source.splitlines()]
    (rules / "TEST-GPU-001.toml").write_text("\n".join(lines) + "\n")
    (tmp_path / "logs").mkdir()
    (tmp_path / "logs" / "node1.log").write_text("a" * 40000 + "!\n")  # would backtrack for ever
    result = CliRunner().invoke(app, ["analyze", str(plant(tmp_path / "logs")), "--rules", str(rules)])
    assert result.exit_code == 2 and "TEST-GPU-001.toml:11: pattern may backtrack" in result.output
