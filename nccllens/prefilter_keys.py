"""Keys: a few short strings that every prefilter literal contains, for a coarse first pass.

The literal pass of ``nccllens.prefilter`` checks ~400 literals, which the regex engine can only
run as an automaton (~450 MB/s per core). A few dozen short literals fit its SIMD searcher instead
(several GB/s), so extraction first looks for *keys* in large pieces of text (256 KiB each) and
reads as lines only the pieces where one occurs: most pieces of a healthy log hold none.

Every literal contains at least one key, so a piece without a key holds no literal: the coarse pass
never loses a line, it only decides which pieces are worth splitting into lines. Case-insensitive
literals get keys spelt as ASCII case classes (``[Dd][Oo][Nn][Ee]``), which is exactly what the
literal pass matches (ASCII case folding).
"""

from __future__ import annotations

import heapq
import re

from nccllens import lazy_regex

KEY_MIN = 5  # shorter keys occur in too many lines of an ordinary log
KEY_MAX = 12
VARIANTS_PER_GROUP = 40  # literals per regex that still run on the SIMD searcher (measured limit ~64)
# ASCII case variants of case-insensitive keys per regex: they share their first bytes in groups (the
# searcher's fingerprints), so far more fit. Key passes over 100 MB (one thread): 9 regexes of <= 40
# variants 0.061-0.079 s, 3 of <= 128 0.020-0.031 s, 2 of <= 160 0.081 s (synthetic and real logs)
NOCASE_VARIANTS_PER_GROUP = 128

# fragments of (nearly) every line of some log format: a key containing one keeps every piece
_COMMON = ("NCCL", "INFO", "CCL ", "rank", "Rank", "comm", "Channel", "TRACE", "opCount", "count",
           "buff", "stream", "datatype", "root", " op ", "[nranks", "AllReduce", "torch", "step",
           "iter", " the ", "ing ", "tion ", "ed ", "er ", "ment", " and ", " is ", " in ", " to ",
           "time", "train", "epoch", "batch")


_COMMON_RE = lazy_regex.compile("|".join(re.escape(c) for c in _COMMON))


def _usable(gram: str) -> bool:
    return _COMMON_RE.search(gram) is None


FINGERPRINT = 3  # the SIMD searcher finds candidates by a key's first bytes, then checks the whole key
_HOT_HEADS = frozenset(c[i:i + FINGERPRINT] for c in _COMMON for i in range(len(c) - FINGERPRINT + 1))


def hot(gram: str) -> bool:
    """Do the key's first bytes occur in a common fragment (``Count…`` in every ``opCount``, ``NCCL_`` in
    every ``NCCL INFO``)? The searcher would then stop at nearly every line to check it in full: one such
    key slowed its whole pass about threefold (measured on NCCL TRACE logs)."""
    return gram[:FINGERPRINT] in _HOT_HEADS


def _own_key(literal: str) -> str:
    """The key of a literal with no usable cut: from its first position whose first bytes are not hot
    (``NCCL_`` → ``CL_``), or the whole literal when every position is hot."""
    for i in range(len(literal) - FINGERPRINT + 1):
        if not hot(literal[i:]):
            return literal[i:]
    return literal


def _grams(literal: str, lo: int, hi: int) -> set[str]:
    out = {literal[i:i + n] for n in range(lo, min(len(literal), hi) + 1) for i in range(len(literal) - n + 1)}
    # a key must start with a letter: one that starts with a space or punctuation (common in every log
    # line) slows the SIMD searcher, which verifies every position whose first bytes match a key
    return {g for g in out if g[0].isalpha() and g[-1] != " " and _usable(g)}


def _order(gram: str, count: int) -> tuple:
    # keys whose first bytes are not hot first (a hot key costs its pass more than an extra key does);
    # then most literals covered; then keys that do not start with a space (a space-led key shares its
    # first bytes with countless words and slows the SIMD searcher), then the longer
    return (hot(gram), -count, gram.startswith(" "), -len(gram), gram)


def greedy_keys(literals: tuple[str, ...], lo: int = KEY_MIN) -> list[str]:
    """A small set of substrings such that every literal contains one (greedy set cover: the key
    covering most literals first). A literal too short or too common to cut is its own key."""
    holders: dict[str, set[str]] = {}
    for lit in set(literals):
        for g in _grams(lit, lo, KEY_MAX) or {_own_key(lit)}:
            holders.setdefault(g, set()).add(lit)
    heap = [(_order(g, len(lits)), g) for g, lits in holders.items()]
    heapq.heapify(heap)
    left, keys = set(literals), []
    while left and heap:
        order, g = heapq.heappop(heap)
        count = len(holders[g] & left)
        if count != -order[1]:  # stale: some of its literals were covered since it was queued
            if count:
                heapq.heappush(heap, (_order(g, count), g))
            continue
        keys.append(g)
        left -= holders[g]
    return sorted(keys)


def _case_class(key: str) -> tuple[str, int]:
    """``done`` → (``[Dd][Oo][Nn][Ee]``, 16): the ASCII case variants as one regex, and their number."""
    parts, variants = [], 1
    for ch in key:
        if ch.isascii() and ch.isalpha():
            parts.append(f"[{ch.upper()}{ch.lower()}]")
            variants *= 2
        else:
            parts.append(re.escape(ch))
    return "".join(parts), variants


def _nocase_key(literal: str) -> str:
    """The longest substring of a case-insensitive literal with at most 16 ASCII case variants."""
    best = literal
    best_score = None
    for n in range(1, min(len(literal), KEY_MAX) + 1):
        for i in range(len(literal) - n + 1):
            g = literal[i:i + n]
            variants = _case_class(g)[1]
            if not _usable(g):
                continue
            score = (variants <= 16, len(g), not g.startswith(" "), -variants, g)
            if best_score is None or score > best_score:
                best, best_score = g, score
    return best


_GROUPS: dict[tuple[tuple[str, ...], tuple[str, ...]], tuple[str, ...]] = {}  # key_groups, once per process


def known_groups() -> dict[tuple[tuple[str, ...], tuple[str, ...]], tuple[str, ...]]:
    """The key groups chosen so far, per (literals, case-insensitive literals): for ``plan_cache``."""
    return dict(_GROUPS)


def learn_groups(known: dict[tuple[tuple[str, ...], tuple[str, ...]], tuple[str, ...]]) -> None:
    _GROUPS.update(known)


def key_groups(literals: tuple[str, ...], literals_nocase: tuple[str, ...]) -> tuple[str, ...]:
    """Regexes (one pass each) that together find every piece holding any literal."""
    found = _GROUPS.get((literals, literals_nocase))
    if found is None:
        found = _GROUPS[(literals, literals_nocase)] = _key_groups(literals, literals_nocase)
    return found


def _key_groups(literals: tuple[str, ...], literals_nocase: tuple[str, ...]) -> tuple[str, ...]:
    nocase = sorted({_nocase_key(lit) for lit in literals_nocase})
    nocase = [k for k in nocase if not any(o != k and o in k for o in nocase)]  # a shorter key covers it
    return (_packed([(re.escape(k), 1) for k in greedy_keys(literals)], VARIANTS_PER_GROUP)
            + _packed([_case_class(k) for k in nocase], NOCASE_VARIANTS_PER_GROUP))


def _packed(items: list[tuple[str, int]], limit: int) -> tuple[str, ...]:
    """(regex, variants) items ORed into regexes of at most ``limit`` variants each, in order."""
    groups: list[str] = []
    current: list[str] = []
    size = 0
    for regex, variants in items:
        if current and size + variants > limit:
            groups.append("|".join(current))
            current, size = [], 0
        current.append(regex)
        size += variants
    if current:
        groups.append("|".join(current))
    return tuple(groups)
