"""--select / --ignore by rule id, alias, id prefix or category."""

from __future__ import annotations

import pytest
from engine_helpers import rule

from nccllens.engine.rule import rule_from_dict
from nccllens.engine.select import select_rules

RULES = [
    rule("NL-GPU-001", pattern="a"),
    rule("NL-GPU-002", pattern="b"),
    rule("NL-IB-001", pattern="c", category="ib_fabric"),
    rule_from_dict({
        "id": "NL-NET-010", "aliases": ["NL-OLD-003"], "category": "network_unreachable", "severity": "error",
        "role": "cause", "match": {"pattern": "d"},
        "en": {"title": "t", "summary": "s", "remediation": "r"}, "zh": {"title": "t", "summary": "s",
                                                                          "remediation": "r"},
    }),
]


def ids(**kw) -> list[str]:
    return [r.id for r in select_rules(RULES, **kw)]


def test_everything_by_default():
    assert ids() == ["NL-GPU-001", "NL-GPU-002", "NL-IB-001", "NL-NET-010"]


def test_select_by_id_alias_prefix_and_category():
    assert ids(select=["NL-GPU-002"]) == ["NL-GPU-002"]
    assert ids(select=["NL-OLD-003"]) == ["NL-NET-010"]
    assert ids(select=["NL-GPU"]) == ["NL-GPU-001", "NL-GPU-002"]
    assert ids(select=["ib_fabric", "network_unreachable"]) == ["NL-IB-001", "NL-NET-010"]


def test_ignore_after_select():
    assert ids(select=["gpu_hardware"], ignore=["NL-GPU-001"]) == ["NL-GPU-002"]
    assert ids(ignore=["NL-GPU", "ib_fabric"]) == ["NL-NET-010"]


def test_a_prefix_is_whole_segments_unless_it_ends_in_a_digit():
    assert ids(select=["NL-GPU-00"]) == ["NL-GPU-001", "NL-GPU-002"]
    with pytest.raises(ValueError, match="'NL-GP'"):
        ids(select=["NL-GP"])


def test_unknown_selector_is_an_error_not_silence():
    with pytest.raises(ValueError, match=r"no rule or category named 'gpu_hw'"):
        ids(ignore=["gpu_hw"])
    # a real category with no loaded rule is fine
    assert ids(select=["straggler"]) == []
