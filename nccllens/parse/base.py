"""What every family parser gets and gives.

A family parser is a module in ``nccllens.parse`` that defines:

``FAMILY``     the family name it writes into the ``family`` column (``nccl``, ``torch``...);
``PREFILTER``  one regular expression, in the syntax of polars' (Rust) regex engine: no
               look-around, no back-references. It is searched (not anchored) in each line's
               ``message`` (the text after launcher prefixes). The pipeline ORs all families'
               PREFILTERs with the rules' patterns into one combined pattern; only lines it
               matches ever reach Python.
``parse(lines, ctx)``  takes the surviving :class:`Line` objects that this family's PREFILTER
               matched (in file order) and yields event dicts (keys = columns of
               ``nccllens.events.SCHEMA``; missing keys are null). Every event MUST carry
               ``line`` (the ``Line.line`` it came from: use ``event_for(line, ...)``); then
               ``file``, ``raw``, ``host``, ``rank``, ``local_rank``, ``attempt``, ``ts``/``ts_kind``
               default to that line's own values, so a parser sets only what it learns beyond them.

A parser must never raise on odd input: the pipeline guards each call, but a parser that raises
loses its whole file's events for that family.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime


@dataclass(slots=True)
class Line:
    """One surviving line, with what the prefixes around it told us."""

    file: str
    line: int  # 1-based
    raw: str
    message: str  # prefixes (launcher, tee, rank, kubectl timestamps...) removed
    host: str | None = None
    rank: int | None = None
    local_rank: int | None = None
    attempt: int | None = None
    ts: datetime | None = None
    ts_kind: str | None = None
    ts_rel: float | None = None
    stream: str = ""  # identifies the writer (prefix rank/host): lines of one stream belong together
    row: int = 0  # index of this line in the current chunk (for ctx.following)


@dataclass
class FileContext:
    """Per-file facts and bounded access to neighbouring lines.

    ``following(line, n)`` returns up to ``n`` Line objects that come after ``line`` in the same
    stream (same prefix), read from the chunk in memory: use it for multi-line records
    (tracebacks, ``what():`` blocks, failure tables, WARN continuations). It is a lazy sequence:
    a parser that stops at the record's end reads no further, one that takes ``len`` reads ``n``;
    so a parser may call it once per record, never per input line. ``preceding(line, n)`` returns up to ``n``
    lines of the same stream right before ``line`` (in file order), for a record whose head was cut off (a
    traceback's frames above its exception line).
    """

    path: str
    host: str | None = None
    rank: int | None = None
    local_rank: int | None = None
    attempt: int | None = None
    year: int | None = None  # for timestamps printed without a year
    cut_for_matching: int = 0  # survivors longer than parse.guard.MATCH_MAX (matched on their start)
    _following: Callable[[Line, int], Sequence[Line]] | None = field(default=None, repr=False)
    _preceding: Callable[[Line, int], list[Line]] | None = field(default=None, repr=False)

    def attach(self, following: Callable[[Line, int], Sequence[Line]],
               preceding: Callable[[Line, int], list[Line]] | None = None) -> None:
        """Give the parsers their access to the file's neighbouring lines (``extract`` does, per file)."""
        self._following, self._preceding = following, preceding

    def preceding(self, line: Line, n: int) -> list[Line]:
        """The (up to ``n``) lines of the same stream right before ``line``, in file order; none past a gap (a
        piece of the file that was not read) or the file's start."""
        if self._preceding is None or n <= 0:
            return []
        return self._preceding(line, n)

    def following(self, line: Line, n: int) -> Sequence[Line]:
        """The (up to ``n``) lines of the same stream after ``line``, read only as far as they are looked at."""
        if self._following is None or n <= 0:
            return []
        return self._following(line, n)

    def lines_after(self, line: Line, n: int) -> Iterator[Line]:
        """``following`` one line at a time, read as they are asked for: for a reader that stops at the
        first line that is not part of its record."""
        if self._following is None or n <= 0:
            return iter(())
        return iter(self._following(line, n))


def event_for(line: Line, kind: str, **fields) -> dict:
    """A new event dict tied to ``line`` (its number and text); ``fields`` are typed columns."""
    return {"file": line.file, "line": line.line, "raw": line.raw, "kind": kind, **fields}


def events_per_line(lines: list[Line], read: Callable[[str], dict | None], family: str) -> Iterator[dict]:
    """The event ``read`` makes of each line's message (None: no event), without empty fields, with ``family``
    and the message. A line that makes ``read`` raise is left out: one odd line must not cost the file its events."""
    for line in lines:
        try:
            event = read(line.message)
        except Exception:  # noqa: BLE001
            continue
        if event is None:
            continue
        event = {k: v for k, v in event.items() if v not in (None, "")}
        event.update({"family": family, "message": line.message.strip()})
        yield event
