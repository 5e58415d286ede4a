"""Rule patterns must compile in polars' (Rust) regex engine and stay fast on hostile input."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from dataclasses import dataclass

import polars as pl

try:
    import re._parser as _parser  # Python 3.11+
except ImportError:  # pragma: no cover - Python 3.10
    import sre_parse as _parser

TIME_LIMIT_S = 0.2
# 64 KiB made of long runs of each character class a pattern may repeat over: letters, digits,
# then a mix with punctuation and spaces, as log lines have.
ADVERSARIAL = "a" * 32768 + "0" * 16384 + ("aZ0 _-:./=,[]()" * 1093)[:16384]


@dataclass(frozen=True)
class PatternCheck:
    """Whether a rule pattern compiles in polars, and how slow it is on adversarial text."""

    pattern: str
    error: str | None = None  # why it does not compile, in one line
    seconds: float | None = None  # compile + search over ADVERSARIAL, when measured


def _one_line(err: Exception) -> str:
    text = str(err)
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("error:"):
            return line[len("error:") :].strip()
    first = text.strip().splitlines()[0] if text.strip() else type(err).__name__
    return first.removeprefix("regex error:").strip()


def compile_error(pattern: str) -> str | None:
    """None when polars accepts ``pattern``, else the engine's reason in one line."""
    try:
        pl.Series([""]).str.contains(pattern)
    except Exception as err:  # polars raises ComputeError; any failure means the rule is unusable
        reason = _one_line(err)
        if "look-around" in reason or "backreference" in reason:
            reason += " (polars uses Rust regex: match more broadly, then narrow with kinds or where)"
        return reason
    return None


def search_seconds(pattern: str, text: str = ADVERSARIAL) -> float:
    """Seconds polars takes to compile ``pattern`` and search it in ``text``.

    Measured once: polars caches compiled patterns, so a second try would time the search alone.
    """
    start = time.perf_counter()
    pl.Series([text]).str.contains(pattern)
    return time.perf_counter() - start


def check_patterns(patterns: list[str], limit_s: float = TIME_LIMIT_S) -> dict[str, PatternCheck]:
    """Check every pattern; time them together first and one by one only when that is slow."""
    checks = {p: PatternCheck(p, compile_error(p)) for p in dict.fromkeys(patterns)}
    good = [p for p, c in checks.items() if c.error is None]
    if not good:
        return checks
    if len(good) > 1 and search_seconds(combine(good)) <= limit_s:
        return checks
    for p in good:
        seconds = search_seconds(p)
        if seconds > limit_s:
            checks[p] = PatternCheck(p, seconds=seconds)
    return checks


def _repeats(tree) -> Iterator[tuple[int, object]]:
    """Every (max count, subpattern) repeat in a parsed pattern, outermost first."""
    for op, arg in tree:
        name = str(op)
        if name in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"):
            yield arg[1], arg[2]
            yield from _repeats(arg[2])
        elif name == "SUBPATTERN":
            yield from _repeats(arg[-1])
        elif name == "BRANCH":
            for branch in arg[1]:
                yield from _repeats(branch)
        elif name in ("ASSERT", "ASSERT_NOT"):
            yield from _repeats(arg[1])


def nested_quantifiers(pattern: str) -> str | None:
    """Why ``pattern`` can backtrack exponentially in Python's engine (which the rule pass uses on
    candidate lines): a repeated group that itself holds a repetition, like ``(a+)+`` or ``(\\w*\\s?)*``.
    None when it has no such nesting, or only compiles in polars' engine (then polars runs it)."""
    try:
        tree = _parser.parse(pattern)
    except (re.error, OverflowError, RecursionError, ValueError):
        return None
    for top, sub in _repeats(tree):
        if top <= 1:
            continue
        if any(inner > 1 for inner, _ in _repeats(sub)) and not _fenced(sub):
            return "a repeated group holds another repetition (nested quantifiers)"
    return None


_CATEGORIES = {"CATEGORY_WORD": lambda c: c.isalnum() or c == "_", "CATEGORY_DIGIT": str.isdigit,
               "CATEGORY_SPACE": str.isspace}


def _may_match(item, ch: str) -> bool:
    """Whether one-character ``item`` (a parsed LITERAL, IN or ANY) may match ``ch`` (True when unsure)."""
    op, arg = item
    name = str(op)
    if name == "LITERAL":
        return chr(arg) == ch
    if name == "NOT_LITERAL":
        return chr(arg) != ch
    if name != "IN":
        return True
    hit, negate = False, False
    for sop, sarg in arg:
        sname = str(sop)
        if sname == "NEGATE":
            negate = True
        elif sname == "LITERAL":
            hit = hit or chr(sarg) == ch
        elif sname == "RANGE":
            hit = hit or sarg[0] <= ord(ch) <= sarg[1]
        elif sname == "CATEGORY":
            cat = str(sarg)
            test = _CATEGORIES.get(cat.replace("NOT_", ""))
            if test is None:
                return True
            hit = hit or (test(ch) != cat.startswith("CATEGORY_NOT_"))
        else:
            return True
    return hit != negate


def _fenced(sub) -> bool:
    """A repeated group whose inner repetitions each stop at a literal they cannot match, like
    ``(?:\\w+\\.)*``: one way only to split the text, so no exponential backtracking."""
    items = list(sub)
    while len(items) == 1 and str(items[0][0]) == "SUBPATTERN":
        items = list(items[0][1][-1])
    for i, (op, arg) in enumerate(items):
        if str(op) in ("SUBPATTERN", "BRANCH", "ASSERT", "ASSERT_NOT") and any(
                n > 1 for n, _ in _repeats([(op, arg)])):
            return False  # a repetition further in: not judged, so not trusted
        if str(op) not in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT") or arg[1] <= 1:
            continue
        body = list(arg[2])
        after = items[i + 1] if i + 1 < len(items) else None
        if len(body) != 1 or after is None or str(after[0]) != "LITERAL":
            return False
        if _may_match(body[0], chr(after[1])):
            return False
    return True


def combine(patterns: list[str]) -> str:
    """One pattern that matches where any of ``patterns`` does (each keeps its own inline flags)."""
    unique = list(dict.fromkeys(p for p in patterns if p))
    return "|".join(f"(?:{p})" for p in unique)
