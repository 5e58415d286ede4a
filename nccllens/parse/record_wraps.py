"""Records a terminal or a paste cut into pieces, and sections of a paste that belong to one rank.

- ``unwrap``: a record head that lacks its tail is rejoined with the lines a terminal hard-wrapped off it;
- ``rank_sections``: a line that is only a rank's name ("[Rank 0]", as Ray Train v2 lists failed workers)
  heads that rank's section: the lines under it that state no rank are that rank's.
"""

from __future__ import annotations

import polars as pl

from nccllens import lazy_regex
from nccllens.parse.headers import split_header
from nccllens.parse.pastes import PADDING
from nccllens.parse.prefixes import strip

WRAP_MIN = 60  # a terminal wraps long lines only
WRAP_LINES = 8  # continuation lines read for one head


def _open(text: str) -> int:
    return text.count("(") - text.count(")") + text.count("[") - text.count("]")


def _starts_a_record(raw: str) -> bool:
    """A line that begins a record of its own: a launcher prefix, a log header, an NCCL prefix, an
    indented continuation (tracebacks, tables) or a Python exception line."""
    if raw.startswith(" ") and not raw.startswith("  "):
        raw = raw[1:]
    if not raw or raw[0] == "\t" or raw.startswith("  "):  # a wrap may cut before one blank, not indent
        return True
    if strip(raw).message != raw or split_header(raw, None)[0] is not None:
        return True
    return bool(_RECORD_START.match(raw))


_RECORD_START = lazy_regex.compile(r"[^\s:\[\]]+:\d+:\d+ |Traceback |(?:[A-Za-z_][\w.]*)?(?:Error|Exception|Warning)\b:?|"
                           r"NCCL |\w+ \d\d-\d\d \d\d:|terminate called ")


_DIGITS = lazy_regex.compile(r"\d")
SHAPE_CHARS = 16  # a line that starts like the head (digits aside) is the same writer's next record


def _same_start(line: str, head: str) -> bool:
    """``[2023-07-14 18:21:41,193][...`` after ``[2023-07-14 18:21:31,182][...``: a log header this module
    does not know, repeated, is a record of its own, not the head's wrapped tail."""
    if len(line) < SHAPE_CHARS or len(head) < SHAPE_CHARS:
        return False
    return _DIGITS.sub("0", line[:SHAPE_CHARS]) == _DIGITS.sub("0", head[:SHAPE_CHARS]) and not line[:1].isalpha()


def unwrap(raw: str, row: int, line_no: int, frame: pl.DataFrame | None, end: int | None,
           wrap: int | None = None, lone: bool = False) -> tuple[str, list[int]]:
    """``raw`` rejoined with the lines a terminal hard-wrapped off it, and the rows taken.

    Only a record head that lacks its tail is rejoined, with the lines right after it that begin no
    record of their own: a line as wide as the file's wrap width (``wrap``) takes pieces until one is
    narrower (the tail); another long line with a bracket left open takes pieces until it closes. Where
    the file shows no wrap width (a short paste: one line was cut) and the caller allows it (``lone``: the file's
    widest line, not a record printed whole), a long line cut inside a word takes the lines after it that go on
    with that word as its pieces, its own length standing for the width: pieces as long as it, then a narrower
    tail. At most ``WRAP_LINES`` pieces; a head that finds no tail is left as it is."""
    by_width = wrap is not None and len(raw) == wrap and not raw.endswith(PADDING)
    # a lone cut ends inside a word or a number (a colon, a stop or a bracket ends a line of its own)
    lone = lone and wrap is None and len(raw) >= WRAP_MIN and raw[-1:].isalnum() and _open(raw) <= 0
    if frame is None or not (by_width or lone or (len(raw) >= WRAP_MIN and _open(raw) > 0)):
        return raw, []
    width = wrap if by_width else len(raw) if lone else None  # None: the open bracket decides
    end = frame.height if end is None else min(end, frame.height)
    text, taken = raw, []
    for k in range(1, WRAP_LINES + 1):
        r = row + k
        if r >= end:
            return raw, []
        nxt_line, nxt = frame["line"][r], frame["raw"][r]
        if nxt_line != line_no + k or _starts_a_record(nxt) or _same_start(nxt, raw):
            return raw, []
        if lone and (len(nxt) > width or not _same_token(text[-1:], nxt[:1])):
            return raw, []
        text += nxt
        taken.append(r)
        if (len(nxt) < width) if width is not None else (_open(text) <= 0):
            return text, taken
    return raw, []


def _same_token(before: str, after: str) -> bool:
    """Letters on both sides of a cut, or digits on both: a word or a number cut in two."""
    return (before.isalpha() and after.isalpha()) or (before.isdigit() and after.isdigit())


# a line that is only a rank's name heads that rank's section (Ray Train v2's "Training failed due to
# worker errors:" lists each failed worker as "[Rank 0]" followed by its traceback)
_SECTION = r"(?i)^\s*\[?rank[ =_]?(\d{1,6})\]?:?\s*$"
SECTION_LINES = 400  # lines a section header reaches at most


def rank_sections(frame: pl.DataFrame | None, start: int, end: int | None) -> tuple[list[int], list[int]]:
    """Rows (sorted) of the file's section headers and the rank each names."""
    if frame is None:
        return [], []
    end = frame.height if end is None else min(end, frame.height)
    raw = frame["raw"].slice(start, max(0, end - start))
    rows = raw.str.contains("ank", literal=True).arg_true()  # one literal pass, then the regex on few rows
    if not rows.len():
        return [], []
    ranks = raw.gather(rows).str.extract(_SECTION, 1)
    keep = ranks.is_not_null()
    return [start + r for r in rows.filter(keep).to_list()], [int(x) for x in ranks.filter(keep).to_list()]
