"""The line collections (fixtures/lines/) stay usable: four columns, a taxonomy category, a role and a source."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.test_fixtures_layout import taxonomy_categories

LINES = Path(__file__).resolve().parents[1] / "fixtures" / "lines"
FILES = sorted(LINES.glob("*.tsv")) + sorted((LINES / "holdout").glob("*.tsv"))


def test_there_are_dev_and_holdout_collections():
    assert sorted(LINES.glob("*.tsv")) and sorted((LINES / "holdout").glob("*.tsv"))


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_every_row_has_a_category_a_role_a_source_and_a_line(path):
    categories = taxonomy_categories() | {"none"}
    for number, text in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        parts = text.split("\t")
        assert len(parts) == 4, f"{path.name}:{number}: {len(parts)} columns"
        category, role, url, line = parts
        assert category.rstrip("?") in categories, f"{path.name}:{number}: {category}"
        assert role in ("cause", "consequence", "harmless"), f"{path.name}:{number}: {role}"
        assert re.match(r"https?://", url), f"{path.name}:{number}: {url}"
        assert line.strip(), f"{path.name}:{number}: empty line"
