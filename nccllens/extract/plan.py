"""Stage 1 of extraction: the plan, what decides which lines reach Python.

Every family's PREFILTER and the rules' patterns, unanchored (a pattern written for the message must not
insist on the raw line's first column). With the compiled engine (``extract.engine``) the plan is its
database's expressions; without it, the plain path's literals, keys and regex groups (``prefilter``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from nccllens.extract import engine
from nccllens.parse import load_families
from nccllens.parse.dense import KEY_REGEX
from nccllens.parse.dense_rows import watch_patterns
from nccllens.prefilter import Plan, plan
from nccllens.regex_groups import Patterns, as_list, pattern_groups, unanchor


def combined_prefilter(extra: str | Sequence[str] | None = None) -> Plan:
    """Every family's PREFILTER and the rules' patterns, unanchored: literal pass, then regex groups;
    dense families' lines (``parse.dense``) summarised, and tried only with the patterns that watch them."""
    pats = [unanchor(f.prefilter) for f in load_families()] + [unanchor(p) for p in as_list(extra)]
    compiled = engine.spec(pats)
    if compiled is not None:  # one compiled scan classifies every line: no literals, keys or regex groups
        return Plan((), (), (), dense=KEY_REGEX, engine=compiled)
    watch = tuple(sorted(watch_patterns(pats).items()))
    return dataclasses.replace(plan(pats, pattern_groups), dense=KEY_REGEX, watch=watch)


def as_plan(pattern) -> Plan:
    if isinstance(pattern, Plan):
        return pattern
    return Plan((), (), (pattern,) if isinstance(pattern, str) else tuple(pattern))




def rule_groups(rule_pattern: str | Sequence[str] | Patterns | None) -> Patterns:
    """The rules' patterns as ``pattern_groups`` (already grouped ones as they are)."""
    if isinstance(rule_pattern, tuple) and all("(?:" in g for g in rule_pattern):
        return rule_pattern
    return pattern_groups(rule_pattern)
