"""What of a surviving line the patterns and parsers see: its first MATCH_MAX characters, with any
run of digits longer than MAX_DIGITS cut to that (``int()`` refuses 4,300 digits).

Python's regex engine backtracks: an unanchored ``\\S+ x`` is quadratic in the length of a line
shaped against it. Cutting what is matched bounds every pattern's time per line, whatever the
pattern; the line itself (``raw``, the evidence) is kept whole. The inventory says how many lines
were cut (``InputFile.notes``).
"""

from __future__ import annotations

from nccllens import lazy_regex

MATCH_MAX = 16 << 10
MAX_DIGITS = 1000
_LONG_NUMBER = lazy_regex.compile(rf"(?<!\d)\d{{{MAX_DIGITS + 1},}}")  # from a run's start only: linear


def for_matching(raw: str) -> str:
    if len(raw) <= MAX_DIGITS:
        return raw
    text = raw[:MATCH_MAX]
    return _LONG_NUMBER.sub(lambda m: m.group(0)[:MAX_DIGITS], text)


def cut_note(count: int) -> str:
    return f"{count} line(s) longer than {MATCH_MAX >> 10} KiB matched on their first {MATCH_MAX >> 10} KiB"
