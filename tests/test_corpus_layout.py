"""Every case of the real-log corpus (fixtures/public/<case>, fixtures/holdout/<case>) is a usable label.

These tests read labels and sources only, never nccllens' output: the holdout stays blind.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from test_fixtures_layout import taxonomy_categories

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
CASES = sorted(p.parent for part in ("public", "holdout") for p in (FIXTURES / part).glob("*/expected.toml")
               if "scenario" not in tomllib.loads(p.read_text(encoding="utf-8")))
BASES = {"maintainer", "reporter_fix", "log_only", "provoked"}


def label(folder: Path) -> dict:
    return tomllib.loads((folder / "expected.toml").read_text(encoding="utf-8"))


def test_the_corpus_has_a_blind_holdout_of_about_a_third():
    holdout = [c for c in CASES if c.parent.name == "holdout"]
    assert len(CASES) >= 30
    assert 0.2 <= len(holdout) / len(CASES) <= 0.45


@pytest.mark.parametrize("folder", CASES, ids=[f"{p.parent.name}/{p.name}" for p in CASES])
def test_case_is_labelled_from_a_cited_source(folder: Path):
    data = label(folder)
    categories = taxonomy_categories() | {"none"}
    assert data["category"] in categories
    assert set(data.get("also_ok", [])) <= categories
    assert data["label_basis"] in BASES
    assert data["why"].strip()
    assert data["synthetic"] is False
    assert isinstance(data["culprit_ranks"], list) and isinstance(data["culprit_hosts"], list)
    assert data["healthy"] == (data["category"] == "none")
    source = (folder / "SOURCE.md").read_text(encoding="utf-8")
    if data["label_basis"] == "provoked":
        assert data.get("command", "").strip(), "a run made here says how it was made"
    else:
        assert data["source"].startswith("https://") and data["source"] in source
    logs = [p for p in folder.rglob("*") if p.is_file() and p.name not in ("expected.toml", "SOURCE.md")]
    assert any(p.stat().st_size for p in logs)  # a torchrun --log-dir tree may hold empty stdout.log files
