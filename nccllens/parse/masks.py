"""Which family (and whether a rule) wants each surviving line, without trying every regex on it.

Each family's PREFILTER and the rules' patterns are split at their top-level ``|`` into branches;
each branch's required literals are known (``prefilter.literals_of``). One polars Aho-Corasick pass
tells which literals a message holds, so only the branches holding one of them (and the few
branches without any literal) are tried, with regexes compiled once per process. The result is the
same as searching every whole pattern: a pattern matches exactly when one of its branches does.
The index of a set of patterns is kept between runs (``plan_cache``).
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

import polars as pl

from nccllens import lazy_regex, plan_cache
from nccllens.prefilter import FLAGS, closes_at_end, compiled, literals_of, top_branches

_SCOPED = lazy_regex.compile(r"^\(\?([a-zA-Z]+):(.*)\)$", re.S)


@dataclass(frozen=True)
class _Index:
    """The branches of a set of patterns, by the literals that let a line reach them."""

    branches: tuple[tuple[str, str], ...]  # (target, branch regex)
    cs: dict[str, tuple[int, ...]]  # case-sensitive literal → branches that need it
    nocase: dict[str, tuple[int, ...]]  # lower-cased literal → branches (ASCII case-insensitive)
    always: tuple[int, ...]  # branches without a usable literal: tried on every line


def _branches(pattern: str) -> list[str]:
    """Top-level branches; a branch that is one whole ``(?:...)`` group is its own branches (a rule group's
    ``(?:A|(?i:B))`` is A and (?i:B), so that each branch's literals and flags show)."""
    if FLAGS.match(pattern):
        return [pattern]
    out = []
    for b in top_branches(pattern):
        if b.startswith("(?:") and closes_at_end(b):
            out += _branches(b[3:-1])
        else:
            out.append(b)
    return out


def _literals(branch: str) -> tuple[frozenset[str] | None, bool]:
    m = _SCOPED.match(branch)
    if m and set(m[1]) <= {"i"} and m[1]:  # (?i:...) as a whole: its literals, matched without case
        return literals_of(f"(?i){m[2]}")
    return literals_of(branch)


@functools.lru_cache(maxsize=32)
def index(targets: tuple[tuple[str, tuple[str, ...]], ...]) -> _Index:
    """``targets``: (name, patterns) pairs; a name is wanted when any of its patterns matches."""
    return plan_cache.remembered("index", targets, lambda: _build(targets), _as_json, _from_json)


def _as_json(idx: _Index) -> dict:
    return {"branches": [list(b) for b in idx.branches], "cs": {k: list(v) for k, v in idx.cs.items()},
            "nocase": {k: list(v) for k, v in idx.nocase.items()}, "always": list(idx.always)}


def _ints(values) -> tuple[int, ...]:
    if not isinstance(values, list) or not all(type(v) is int for v in values):
        raise ValueError("bad index entry")
    return tuple(values)


def _from_json(data: dict) -> _Index:
    branches = tuple((name, branch) for name, branch in data["branches"])
    if not all(isinstance(name, str) and isinstance(branch, str) for name, branch in branches):
        raise ValueError("bad index entry")
    cs = {k: _ints(v) for k, v in data["cs"].items()}
    nocase = {k: _ints(v) for k, v in data["nocase"].items()}
    always = _ints(data["always"])
    if not all(0 <= k < len(branches) for ks in (*cs.values(), *nocase.values(), always) for k in ks):
        raise ValueError("bad index entry")
    return _Index(branches, cs, nocase, always)


def _build(targets: tuple[tuple[str, tuple[str, ...]], ...]) -> _Index:
    branches: list[tuple[str, str]] = []
    cs: dict[str, list[int]] = {}
    nocase: dict[str, list[int]] = {}
    always: list[int] = []
    for name, patterns in targets:
        for pattern in patterns:
            for b in _branches(pattern):
                k = len(branches)
                branches.append((name, b))
                found, ci = _literals(b)
                if found is None:
                    always.append(k)
                    continue
                for lit in found:
                    (nocase if ci else cs).setdefault(lit, []).append(k)
    return _Index(tuple(branches), {k: tuple(v) for k, v in cs.items()},
                  {k: tuple(v) for k, v in nocase.items()}, tuple(always))


def literal_gates(targets: tuple[tuple[str, tuple[str, ...]], ...]) -> dict[str, tuple[list[str], list[str]] | None]:
    """Per target name, (case-sensitive literals, lower-cased literals to match without ASCII case) one of
    which every match of its patterns holds, as ``masks`` reads them; None when a branch has no usable
    literal (every message is then a candidate)."""
    idx = index(targets)
    out: dict[str, tuple[list[str], list[str]] | None] = {name: ([], []) for name, _ in targets}
    for k in idx.always:
        out[idx.branches[k][0]] = None
    for position, held in ((0, idx.cs), (1, idx.nocase)):
        for lit, ks in held.items():
            for name in {idx.branches[k][0] for k in ks}:
                found = out[name]
                if found is not None:
                    found[position].append(lit)
    return out


def _held(messages: list[str], literals: list[str], nocase: bool) -> list[list[str]]:
    if not literals:
        return [[] for _ in messages]
    found = pl.Series(messages, dtype=pl.String).str.extract_many(
        literals, ascii_case_insensitive=nocase, overlapping=True)
    return found.to_list()


def masks(messages: list[str], targets: tuple[tuple[str, tuple[str, ...]], ...]) -> dict[str, list[bool]] | None:
    """For every target name, which messages one of its patterns matches (None when a pattern only
    compiles in polars' engine: the caller then uses polars)."""
    idx = index(targets)
    out = {name: [False] * len(messages) for name, _ in targets}
    if not messages:
        return out
    held_cs = _held(messages, list(idx.cs), False)
    held_ci = _held(messages, list(idx.nocase), True)
    for i, msg in enumerate(messages):
        tried: set[int] = set()
        done: set[str] = set()
        cands = [k for lit in held_cs[i] for k in idx.cs[lit]]
        cands += [k for lit in held_ci[i] for k in idx.nocase.get(lit.lower(), ())]
        for k in (*cands, *idx.always):
            name, branch = idx.branches[k]
            if name in done or k in tried:
                continue
            tried.add(k)
            regex = compiled(branch)  # compiled on first use: most branches never meet a candidate
            if regex is None:
                return None
            if regex.search(msg):
                out[name][i] = True
                done.add(name)
    return out
