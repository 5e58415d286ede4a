"""docs/rules.md is generated from the rules and must not fall behind them."""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _generator():
    spec = importlib.util.spec_from_file_location("gen_rules_doc", ROOT / "scripts" / "gen_rules_doc.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_rules_doc_is_up_to_date():
    gen = _generator()
    expected = gen.render(gen.load_rules())
    current = gen.TARGET.read_text(encoding="utf-8") if gen.TARGET.exists() else ""
    assert current == expected, "docs/rules.md is out of date: run python scripts/gen_rules_doc.py"


def test_rules_doc_has_every_rule_in_both_languages():
    gen = _generator()
    text = gen.render(gen.load_rules())
    for rule in gen.load_rules():
        assert f"### {rule.id}\n" in text
        assert rule.text_for("zh").title in text and rule.text_for("en").title in text
