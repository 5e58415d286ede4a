"""Stage 1 of extraction: the plan, what decides which lines reach Python.

Every family's PREFILTER and the rules' patterns, unanchored (a pattern written for the message must not
insist on the raw line's first column). With the compiled engine (``extract.engine``) the plan is its
database's expressions; without it, the plain path's literals, keys and regex groups (``prefilter``).
A plan is a function of the patterns alone: it is kept between runs (``plan_cache``), under a digest of
the patterns and of whether the engine is wanted.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from nccllens import plan_cache
from nccllens.extract import engine
from nccllens.parse import load_families
from nccllens.parse.dense import KEY_REGEX
from nccllens.parse.dense_rows import watch_patterns
from nccllens.prefilter import Plan, plan
from nccllens.regex_groups import Patterns, as_list, pattern_groups, unanchor


def combined_prefilter(extra: str | Sequence[str] | None = None) -> Plan:
    """Every family's PREFILTER and the rules' patterns, unanchored: literal pass, then regex groups;
    dense families' lines (``parse.dense``) summarised, and tried only with the patterns that watch them."""
    raw = [f.prefilter for f in load_families()] + as_list(extra)
    return plan_cache.remembered("plan", [engine.wanted(), raw], lambda: _build(raw), _as_json, _from_json)


def _build(raw: list[str]) -> Plan:
    pats = [unanchor(p) for p in raw]
    compiled = engine.spec(pats)
    if compiled is not None:  # one compiled scan classifies every line: no literals, keys or regex groups
        return Plan((), (), (), dense=KEY_REGEX, engine=compiled)
    watch = tuple(sorted(watch_patterns(pats).items()))
    return dataclasses.replace(plan(pats, pattern_groups), dense=KEY_REGEX, watch=watch)


def _as_json(p: Plan) -> dict:
    spec = p.engine
    return {"literals": list(p.literals), "literals_nocase": list(p.literals_nocase), "unfiltered": list(p.unfiltered),
            "keys": list(p.keys), "dense": p.dense, "watch": [list(w) for w in p.watch],
            "engine": None if spec is None else {"expressions": list(spec.expressions), "bits": list(spec.bits),
                                                 "digest": spec.digest, "ascii": list(spec.ascii)}}


def _strings(values) -> tuple[str, ...]:
    if not isinstance(values, list) or not all(isinstance(v, str) for v in values):
        raise ValueError("bad plan entry")
    return tuple(values)


def _from_json(data: dict) -> Plan:
    spec = data["engine"]
    if spec is not None:
        bits = spec["bits"]
        if not isinstance(bits, list) or not all(type(b) is int for b in bits) or not isinstance(spec["digest"], str):
            raise ValueError("bad plan entry")
        spec = engine.Spec(_strings(spec["expressions"]), tuple(bits), spec["digest"], _strings(spec["ascii"]))
        if len(spec.bits) != len(spec.expressions) or len(spec.ascii) != len(spec.expressions):
            raise ValueError("bad plan entry")
    watch = tuple((fam, pattern) for fam, pattern in data["watch"])
    if not all(isinstance(fam, str) and isinstance(pattern, str) for fam, pattern in watch):
        raise ValueError("bad plan entry")
    if not isinstance(data["dense"], (str, type(None))):
        raise ValueError("bad plan entry")
    return Plan(_strings(data["literals"]), _strings(data["literals_nocase"]), _strings(data["unfiltered"]),
                _strings(data["keys"]), data["dense"], watch, spec)


def as_plan(pattern) -> Plan:
    if isinstance(pattern, Plan):
        return pattern
    return Plan((), (), (pattern,) if isinstance(pattern, str) else tuple(pattern))




def rule_groups(rule_pattern: str | Sequence[str] | Patterns | None) -> Patterns:
    """The rules' patterns as ``pattern_groups`` (already grouped ones as they are)."""
    if isinstance(rule_pattern, tuple) and all("(?:" in g for g in rule_pattern):
        return rule_pattern
    return pattern_groups(rule_pattern)
