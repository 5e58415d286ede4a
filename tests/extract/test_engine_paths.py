"""The compiled engine and the plain path give the same events and summaries on every fixture.

The holdout is left out (its cases are not looked at one by one). Where ``hyperscan`` is not importable
only the plain path exists, and the engine half is skipped.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from nccllens.analysis import Options, load_rules
from nccllens.extract import engine, extract_tables
from nccllens.report.outcome import FINISHED_PATTERNS

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
CASES = sorted({p.parent for p in FIXTURES.rglob("*") if p.is_file() and "holdout" not in p.parts
                and "generate" not in p.parts and p.parent != FIXTURES and p.name != "README.md"
                and p.parent.parent in (FIXTURES, FIXTURES / "public")})


def _tables(folder: Path, monkeypatch, which: str):
    monkeypatch.setenv("NCCLLENS_ENGINE", which)
    patterns = [r.match.pattern for r in load_rules(Options()) if r.match.pattern] + list(FINISHED_PATTERNS)
    events, infos, summaries = extract_tables([str(folder)], patterns, workers=1)
    return events, [(i.path, i.lines, i.events, tuple(i.notes), i.skipped) for i in infos], summaries


@pytest.mark.skipif(not engine.wanted(), reason="hyperscan is not importable here (or NCCLLENS_ENGINE=fallback)")
@pytest.mark.parametrize("folder", CASES, ids=[str(p.relative_to(FIXTURES)) for p in CASES])
def test_engine_and_plain_path_give_the_same_events(folder, monkeypatch):
    plain = _tables(folder, monkeypatch, "fallback")
    compiled = _tables(folder, monkeypatch, "hyperscan")
    assert compiled[1] == plain[1]
    assert compiled[0].to_dicts() == plain[0].to_dicts()
    assert compiled[2].to_dicts() == plain[2].to_dicts()


def test_the_plain_path_is_chosen_by_the_environment(monkeypatch):
    monkeypatch.setenv("NCCLLENS_ENGINE", "fallback")
    assert not engine.wanted()
    assert engine.spec(["NCCL WARN"]) is None
