"""Rule patterns must compile in polars' (Rust) regex engine and stay fast on hostile input."""

from __future__ import annotations

import time
from dataclasses import dataclass

import polars as pl

TIME_LIMIT_S = 0.2
# 64 KiB made of long runs of each character class a pattern may repeat over: letters, digits,
# then a mix with punctuation and spaces, as log lines have.
ADVERSARIAL = "a" * 32768 + "0" * 16384 + ("aZ0 _-:./=,[]()" * 1093)[:16384]


@dataclass(frozen=True)
class PatternCheck:
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


def combine(patterns: list[str]) -> str:
    """One pattern that matches where any of ``patterns`` does (each keeps its own inline flags)."""
    unique = list(dict.fromkeys(p for p in patterns if p))
    return "|".join(f"(?:{p})" for p in unique)
