"""Rank lists as people write them: ``[0, 1, 2, 3, 8]`` -> ``0-3,8`` (shared by rule texts and reports)."""

from __future__ import annotations


def compact_ranks(ranks: list[int]) -> str:
    """``[0, 1, 2, 3, 8]`` -> ``0-3,8``; runs of three or more become a range."""
    values = sorted(set(ranks))
    parts: list[str] = []
    i = 0
    while i < len(values):
        j = i
        while j + 1 < len(values) and values[j + 1] == values[j] + 1:
            j += 1
        parts.append(f"{values[i]}-{values[j]}" if j - i >= 2 else ",".join(map(str, values[i : j + 1])))
        i = j + 1
    return ",".join(parts)
