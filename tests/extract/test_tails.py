"""The scan looks for each branch without the end that only lengthens its matches (``extract.tails``): it still
finds every line the branch matches, with fewer reports per line, and never keyed on less than the branch."""

from __future__ import annotations

import re

from nccllens.extract.superset import scan_parts
from nccllens.extract.tails import trimmed
from tests.extract.real_lines import fixture_lines


def _branches() -> list[str]:
    from nccllens.analysis import Options, load_rules
    from nccllens.parse import load_families
    from nccllens.parse.dense_rows import branches

    pats = [f.prefilter for f in load_families()] + [r.match.pattern for r in load_rules(Options()) if r.match.pattern]
    return [part for p in pats for b in branches(p) for part in scan_parts(b)]


def _fixture_lines(limit: int = 6000) -> list[str]:
    return fixture_lines(per_file=300)[:limit]


def test_a_trimmed_part_finds_every_fixture_line_its_part_finds():
    lines = _fixture_lines()
    trimmed_parts = [(p, t) for p in _branches() if (t := trimmed(p)) != p]
    assert len(trimmed_parts) >= 10  # NCCL's Connected/NET/Bootstrap bodies, counters after a word, '.*$' tails
    for part, short in trimmed_parts:
        whole, cut = re.compile(part), re.compile(short)
        for line in lines:
            if whole.search(line):
                assert cut.search(line), (part, short, line)


def test_what_only_lengthens_a_match_goes_and_what_keys_it_stays():
    # real: NCCL INFO lines of fixtures/public ("Connected all rings", "NCCL work: 12")
    assert trimmed(r"Connected (?:all rings|all trees|NVLS tree|CollNet\w*|all \w+)") == \
        r"Connected (?:all rings|all trees|NVLS tree|CollNet|all \w)"
    assert trimmed(r"(?:ERROR|CRITICAL|FATAL):[\w.<>-]*:(?:.*)$") == r"(?:ERROR|CRITICAL|FATAL):[\w.<>-]*:"
    assert trimmed(r"NCCL work: -?\d+") == r"NCCL work: -?\d"
    assert trimmed(r"foo bar\d{3,}") == r"foo bar\d{3}"
    # left whole: a top-level alternation, ignored case, and an end whose loss would leave no literal to key on
    for branch in (r"abc|def\d+", r"(?i)loss\d+", r"\d+(?: ranks? failed)?"):
        assert trimmed(branch) == branch


def test_the_engine_reports_one_match_per_alternative_where_a_trailing_repeat_gave_one_per_character():
    from nccllens.extract import engine

    if not engine.wanted():
        return
    spec = engine.spec([r"NCCL INFO Connected (?:all rings|all \w+)"])
    line = b"gpu-node-000:40000:40000 [0] NCCL INFO Connected all rings\n"  # real shape: NCCL 2.18+ INFO line
    found, _ = engine.scan(spec, line)
    assert len(found) == 2  # "all r" and "all rings" (one per alternative); untrimmed, one per letter of "rings" too
