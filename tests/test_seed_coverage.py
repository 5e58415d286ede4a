"""docs/seeds-coverage.md maps every cause in the user's troubleshooting seeds to rules and analyses.

The table is the contract: each row names a seed file, a cause, at least one rule id that exists in
the shipped catalogue and, optionally, analysis ids defined in nccllens/analyses/texts.toml. Every
seed file must have at least one row.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from nccllens.engine import load_rules

PROJECT = str(Path(__file__).resolve().parents[1])  # the checkout, wherever it was cloned
SHARED = str(Path(__file__).resolve().parents[2] / "shared")  # ../shared beside it

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "seeds-coverage.md"
ANALYSES = ROOT / "nccllens" / "analyses" / "texts.toml"
SEEDS = Path(f"{SHARED}/seeds")
# the seed files the table was written from (used when the shared folder is not mounted)
KNOWN_SEEDS = {
    "000_2c20babfaf2f2c26.txt",
    "001_447805ebc0282e96.txt",
    "002_17803d39964ba14e.txt",
    "003_39385ba003a52857.txt",
    "004_2fcbe1b061d9d215.txt",
}
RULE_ID = re.compile(r"\bNL-[A-Z]+-\d{3}\b")
ANALYSIS_ID = re.compile(r"\bAN-[A-Z]+(?:-[A-Z]+)*\b")
CELL_SPLIT = re.compile(r"(?<!\\)\|")


def table_rows() -> list[list[str]]:
    rows = []
    for line in DOC.read_text(encoding="utf-8").splitlines():
        if not line.startswith("|"):
            continue
        cells = [c.strip() for c in CELL_SPLIT.split(line.strip())[1:-1]]
        if cells and (cells[0] == "seed file" or set(cells[0]) <= {"-", " "}):
            continue
        rows.append(cells)
    return rows


ROWS = table_rows()


def seed_files() -> set[str]:
    if SEEDS.is_dir():
        return {p.name for p in SEEDS.iterdir() if p.is_file()}
    return KNOWN_SEEDS


def test_table_has_the_four_columns_on_every_row():
    assert len(ROWS) >= 20
    bad = [row for row in ROWS if len(row) != 4]
    assert not bad, bad


@pytest.mark.parametrize("row", ROWS, ids=[f"{r[0][:3]}-{n}" for n, r in enumerate(ROWS)])
def test_row_is_not_empty(row):
    seed, cause, rules, _analyses = row
    assert seed.endswith(".txt"), row
    assert len(cause) > 10, row
    assert RULE_ID.findall(rules), f"no rule id for: {cause}"


def test_every_listed_rule_exists():
    names = {name for rule in load_rules() for name in rule.names()}
    listed = {rid for row in ROWS for rid in RULE_ID.findall(row[2])}
    assert listed, "no rule ids in the table"
    assert sorted(listed - names) == []


def test_every_listed_analysis_exists():
    defined = {key for key in tomllib.loads(ANALYSES.read_text(encoding="utf-8")) if key.startswith("AN-")}
    listed = {aid for row in ROWS for aid in ANALYSIS_ID.findall(row[3])}
    assert listed, "no analysis ids in the table"
    assert sorted(listed - defined) == []


def test_rule_cells_hold_only_rule_ids():
    for seed, cause, rules, _ in ROWS:
        leftover = RULE_ID.sub("", rules).replace(",", "").strip()
        assert leftover == "", f"{seed} / {cause}: unexpected text in the rule column: {leftover!r}"


def test_every_seed_file_appears():
    covered = {row[0] for row in ROWS}
    assert sorted(seed_files() - covered) == []
    assert sorted(covered - seed_files()) == []
