"""The rule engine: load and validate rule files, match them on the event table, make findings.

The names below load on first use: ``nccllens rules`` and the start of ``nccllens analyze`` need the
rule model, not polars (which the matching and the findings import).
"""

from __future__ import annotations

import importlib

_WHERE = {
    "compact_ranks": "findings", "finding_from_hit": "findings", "interpolate": "findings",
    "RuleError": "loader", "RuleSet": "loader", "builtin_rules_dir": "loader", "check_dirs": "loader",
    "load_dirs": "loader", "load_rules": "loader",
    "RuleHit": "match", "combined_pattern": "match", "evaluate": "match",
    "Example": "rule", "MatchSpec": "rule", "Rule": "rule", "Text": "rule",
    "select_rules": "select",
    "Problem": "validate",
}


def __getattr__(name: str):
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


__all__ = sorted(_WHERE)  # the names __getattr__ serves
