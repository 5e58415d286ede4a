"""The rule engine: load and validate rule files, match them on the event table, make findings."""

from __future__ import annotations

from nccllens.engine.findings import compact_ranks, finding_from_hit, interpolate
from nccllens.engine.loader import RuleError, RuleSet, builtin_rules_dir, check_dirs, load_dirs, load_rules
from nccllens.engine.match import RuleHit, combined_pattern, evaluate
from nccllens.engine.rule import Example, MatchSpec, Rule, Text
from nccllens.engine.select import select_rules
from nccllens.engine.validate import Problem

__all__ = [
    "Example",
    "MatchSpec",
    "Problem",
    "Rule",
    "RuleError",
    "RuleHit",
    "RuleSet",
    "Text",
    "builtin_rules_dir",
    "check_dirs",
    "combined_pattern",
    "compact_ranks",
    "evaluate",
    "finding_from_hit",
    "interpolate",
    "load_dirs",
    "load_rules",
    "select_rules",
]
