"""The prefilter: which raw lines are worth parsing, found in two vectorised passes.

1. Literals. From every pattern we derive strings that any match must contain (``Init COMPLETE``,
   ``NVRM: Xid``...). One Aho-Corasick pass (polars ``str.contains_any``) over all lines keeps the
   few lines holding one of them.
2. Regexes. Pattern branches with no usable literal run on every line, still vectorised. The
   candidates go to ``pipeline.line_masks``, which matches each one against every family's PREFILTER
   and the rules' patterns, so a candidate no pattern wants yields no event.

The events are exactly those one big regex would give, only far faster (one big alternation of 170
patterns outgrows the regex engine's DFA cache).
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

import polars as pl

from nccllens import lazy_regex
from nccllens.prefilter_keys import key_groups

try:  # Python 3.11+
    from re import _constants as sre_c
    from re import _parser as sre_parse
except ImportError:  # pragma: no cover - Python 3.10
    import sre_constants as sre_c  # type: ignore[no-redef]
    import sre_parse  # type: ignore[no-redef]

MIN_LITERAL = 3  # a literal shorter than this is too common to filter with
FLAGS = lazy_regex.compile(r"^\(\?[a-zA-Z]+\)")  # a leading inline-flag group applies to every branch


@dataclass(frozen=True)
class Plan:
    """Which lines can match any pattern: required literals, unfiltered groups and coarse keys."""

    literals: tuple[str, ...]  # case-sensitive literals of the filterable patterns
    literals_nocase: tuple[str, ...]  # lower-cased literals of (?i) patterns
    unfiltered: tuple[str, ...]  # regex groups run on every line
    keys: tuple[str, ...] = ()  # coarse first pass (``prefilter_keys``): a piece with no key has no literal
    dense: str | None = None  # coarse pass: a piece this finds in holds a dense family's line (``parse.dense``)
    watch: tuple[tuple[str, str], ...] = ()  # (dense family, the patterns that could match its lines)
    engine: object = None  # the compiled engine's ``extract.engine.Spec``: when set, the fields above are unused


def _score(options: frozenset[str]) -> tuple[int, int]:
    return (min(len(s) for s in options), -len(options))


# tokens in (nearly) every line of some log format: filtering on them keeps everything
COMMON = frozenset({"NCCL ", "NCCL INFO", "NCCL INFO ", " NCCL ", "NCCL", "Channel ", "INFO", "TRACE", "WARN",
                    "Using ", "rank ", "comm "})


def _common(literal: str) -> bool:
    return literal in COMMON


def _best(cands: list[frozenset[str]], common=_common) -> frozenset[str] | None:
    cands = [c for c in cands if c and min(len(s) for s in c) >= MIN_LITERAL and not any(common(s) for s in c)]
    return max(cands, key=_score) if cands else None


def _required(items, common=_common) -> frozenset[str] | None:
    """Strings one of which every match of this parsed sequence contains (None: no such set)."""
    cands: list[frozenset[str]] = []
    run: list[str] = []

    def flush() -> None:
        if run:
            cands.append(frozenset(["".join(run)]))
            run.clear()

    for op, av in items:
        if op is sre_c.LITERAL:
            run.append(chr(av))
            continue
        flush()
        if op is sre_c.SUBPATTERN:
            if av[1] & re.IGNORECASE:  # (?i:...) inside: its literals cannot be matched case-sensitively
                continue
            sub = _required(av[-1], common)
            if sub:
                cands.append(sub)
        elif op is sre_c.BRANCH:
            parts = [_required(branch, common) for branch in av[1]]
            if all(parts):
                cands.append(frozenset().union(*parts))
        elif op in (sre_c.MAX_REPEAT, sre_c.MIN_REPEAT) and av[0] >= 1:
            sub = _required(av[2], common)
            if sub:
                cands.append(sub)
    flush()
    return _best(cands, common)


def structure(pattern: str):
    """(index, char, depth) for every character outside escapes and character classes; ``depth`` is
    the group nesting at that character (a ``(`` already counted, a ``)`` already closed)."""
    depth, i, in_class = 0, 0, False
    while i < len(pattern):
        ch = pattern[i]
        if ch == "\\":
            i += 2
            continue
        if in_class:
            in_class = ch != "]"
        elif ch == "[":
            in_class = True
            if pattern[i + 1:i + 2] == "]" or pattern[i + 1:i + 3] == "^]":
                i += 2 if pattern[i + 1] == "]" else 3
                continue
        else:
            depth += (ch == "(") - (ch == ")")
            yield i, ch, depth
        i += 1


def top_branches(pattern: str) -> list[str]:
    """Split a pattern at its top-level ``|`` (outside groups and classes)."""
    parts, start = [], 0
    for i, ch, depth in structure(pattern):
        if ch == "|" and depth == 0:
            parts.append(pattern[start:i])
            start = i + 1
    parts.append(pattern[start:])
    return parts


def closes_at_end(pattern: str) -> bool:
    """Does the group opened by ``pattern[0]`` close at its last character?"""
    return next((i == len(pattern) - 1 for i, ch, depth in structure(pattern) if ch == ")" and depth == 0),
                False)


_KNOWN: dict[str, tuple[frozenset[str] | None, bool]] = {}  # literals_of, per pattern, once per process


def known_literals() -> dict[str, tuple[frozenset[str] | None, bool]]:
    """Every pattern's literals found so far, to hand to worker processes (parsing patterns is slow)."""
    return dict(_KNOWN)


def learn_literals(known: dict[str, tuple[frozenset[str] | None, bool]]) -> None:
    _KNOWN.update(known)


def literals_of(pattern: str) -> tuple[frozenset[str] | None, bool]:
    """(required literals, case-insensitive?) of one pattern; None when it has no usable literal."""
    found = _KNOWN.get(pattern)
    if found is None:
        found = _KNOWN[pattern] = _literals_of(pattern)
    return found


def _literals_of(pattern: str) -> tuple[frozenset[str] | None, bool]:
    try:
        parsed = sre_parse.parse(pattern)
    except (re.error, OverflowError, RecursionError, ValueError):
        return None, False
    nocase = bool(parsed.state.flags & re.IGNORECASE)
    found = _required(list(parsed))
    if found and nocase:
        found = frozenset(s.lower() for s in found)
    return found, nocase


def selective(pattern: str, tokens: frozenset[str] = frozenset()) -> bool:
    """Does every match of ``pattern`` hold a literal (case-sensitive) that is not, spaces aside, a token of
    (nearly) every line of some log format (``COMMON``, and ``tokens``, spaces stripped)? A scanner keyed on it
    skips most lines of any log."""
    return _holds_literal(pattern, lambda s: s.strip() in COMMON or s.strip() in tokens)


def keyed(pattern: str) -> bool:
    """Does every match of ``pattern`` hold a literal (case-sensitive) of ``MIN_LITERAL`` characters or more,
    common tokens included? A scanner can key on it, where a pattern of classes and separators alone (an
    NCCL line head ``host:pid:tid [dev] ``) makes it run an automaton from nearly every position."""
    return _holds_literal(pattern, lambda s: False)


def _holds_literal(pattern: str, ignored) -> bool:
    """Whether every match of a case-sensitive ``pattern`` holds a required literal that ``ignored`` does not
    set aside (False for a pattern that does not parse or ignores case)."""
    try:
        parsed = sre_parse.parse(pattern)
    except (re.error, OverflowError, RecursionError, ValueError):
        return False
    if parsed.state.flags & re.IGNORECASE:
        return False
    return _required(list(parsed), ignored) is not None


def _requires_letter(items) -> bool:
    for op, av in items:
        if op is sre_c.LITERAL and chr(av).isalpha():
            return True
        if op is sre_c.IN and av and all(o is sre_c.LITERAL and chr(v).isalpha() for o, v in av):
            return True
        if op is sre_c.SUBPATTERN and _requires_letter(av[-1]):
            return True
    return False


def lettered(pattern: str, width: int) -> bool:
    """Is every match of ``pattern`` ``width`` characters wide at least, with a letter it requires (a literal
    one, or a class of letters only)? A head of digits and separators (a time stamp) is neither."""
    try:
        parsed = sre_parse.parse(pattern)
    except (re.error, OverflowError, RecursionError, ValueError):
        return False
    return parsed.getwidth()[0] >= width and _requires_letter(list(parsed))


def plan(patterns: list[str], group) -> Plan:
    """Required literals of the pattern branches that have them; the rest ORed in groups by ``group``."""
    lits: set[str] = set()
    nocase: set[str] = set()
    unfiltered: list[str] = []
    for pattern in patterns:
        branches = [pattern] if FLAGS.match(pattern) else top_branches(pattern)
        for branch in branches:
            found, ci = literals_of(branch)
            if found is None:
                unfiltered.append(branch)
                continue
            (nocase if ci else lits).update(found)
    literals, literals_nocase = tuple(sorted(lits)), tuple(sorted(nocase))
    return Plan(literals, literals_nocase, group(unfiltered), key_groups(literals, literals_nocase))


@functools.lru_cache(maxsize=8192)
def compiled(pattern: str) -> re.Pattern | None:
    """The pattern compiled once per process by Python's engine (None if its syntax is Rust-only)."""
    try:
        return re.compile(pattern)
    except (re.error, OverflowError, RecursionError, ValueError):
        return None


def survivors(df: pl.DataFrame, p: Plan, matches) -> pl.DataFrame:
    """The rows of ``df`` (with a ``row`` column) that some pattern matches, in row order."""
    raw = pl.col("raw")
    hit = pl.lit(False)
    if p.literals:
        hit = hit | raw.str.contains_any(list(p.literals))
    if p.literals_nocase:
        hit = hit | raw.str.contains_any(list(p.literals_nocase), ascii_case_insensitive=True)
    # Literal candidates are not re-checked here: every survivor's message is matched against each
    # family's PREFILTER and the rules' patterns right after (pipeline.line_masks), which drops the
    # few candidates no pattern wants; checking them twice cost more than it saved.
    # lines read only as continuation lines hold no literal: filtered out first, so that the literal
    # pass runs on the rest alone (one filter with both conditions would search every line)
    keyed = df.filter(pl.col("keyed")) if "keyed" in df.columns else df
    kept = keyed.filter(hit) if (p.literals or p.literals_nocase) else df.clear()
    if p.unfiltered:
        kept = pl.concat([kept, df.filter(matches(raw, p.unfiltered))]).unique("row", keep="first")
        kept = kept.sort("row")
    return kept
