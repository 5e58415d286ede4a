"""The parsers' window over one file's rows: the lines after a record's first one (``FileContext.following``,
read lazily) and the lines right before a line (``FileContext.preceding``), made from the frame's rows as they
are asked for (each row's prefixes stripped once, ``make_line``)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import polars as pl

from nccllens.ingest.layout import PathHints
from nccllens.parse.base import FileContext, Line
from nccllens.parse.file_facts import host_at
from nccllens.parse.guard import for_matching
from nccllens.parse.pastes import WRAPPED_PIECE
from nccllens.parse.prefixes import split_glued, strip

CHUNK = 256  # rows the follower reads from the frame at once


def make_line(path: str, line_no: int, row: int, raw: str, hints: PathHints) -> Line:
    """A surviving line with what its own prefixes state (host, rank, local rank). What the path suggests
    is no part of it: ``fill_path_hints`` adds that to the events that state nothing themselves."""
    p = strip(for_matching(raw), hints.leads)
    return Line(
        file=path, line=line_no, raw=raw, message=p.message,
        host=p.host or hints.line_host or (host_at(hints.host_marks, line_no) if hints.host_marks else None), rank=p.rank if p.rank is not None else hints.line_rank,
        local_rank=p.local_rank,
        attempt=hints.attempt, ts=p.ts, ts_kind="absolute" if p.ts else None,
        stream=p.stream, row=row,
    )


class Following(Sequence):
    """The lines after a record's first one, read only as far as the parser looks: a record that ends at
    its next line (a one-line traceback before a new log record) no longer costs the 200 lines a
    traceback may have (a file of 2,000 such records: 5.5 s of its 10). Iterating, indexing, slicing
    from the start and truthiness read what they need; ``len`` and negative indexes read up to ``n``."""

    def __init__(self, lines: Iterator[Line]):
        self._lines: Iterator[Line] | None = lines
        self._got: list[Line] = []

    def _read(self, upto: int | None) -> None:
        while self._lines is not None and (upto is None or len(self._got) < upto):
            nxt = next(self._lines, None)
            if nxt is None:
                self._lines = None
            else:
                self._got.append(nxt)

    def __iter__(self) -> Iterator[Line]:
        i = 0
        while True:
            self._read(i + 1)
            if i >= len(self._got):
                return
            yield self._got[i]
            i += 1

    def __len__(self) -> int:
        self._read(None)
        return len(self._got)

    def __bool__(self) -> bool:
        self._read(1)
        return bool(self._got)

    def __getitem__(self, index):
        if isinstance(index, slice):
            whole = index.step not in (None, 1) or index.stop is None or index.stop < 0 or (index.start or 0) < 0
            self._read(None if whole else index.stop)
        else:
            self._read(None if index < 0 else index + 1)
        return self._got[index]

    def __eq__(self, other) -> bool:
        return list(self) == list(other) if isinstance(other, (list, Following)) else NotImplemented

    __hash__ = None  # type: ignore[assignment]


def lines_of(path: str, line_no: int, row: int, raw: str, hints: PathHints) -> list[Line]:
    """The Lines of one row: a row may hold records glued together (``split_glued``), each a Line of its own."""
    return [make_line(path, line_no, row, part, hints) for part in split_glued(raw)]


def attach_window(ctx: FileContext, df: pl.DataFrame, hints: PathHints, shift: int = 0, end: int | None = None,
                  begin: int = 0) -> None:
    """Give ``ctx`` its ``following`` and ``preceding`` over one file's rows of ``df`` (``begin`` to ``end``)."""
    following, preceding = follower(df, ctx.path, hints, shift, end, begin)
    ctx.attach(following, preceding)


def follower(df: pl.DataFrame, path: str, hints: PathHints, shift: int = 0, end: int | None = None, begin: int = 0):
    """(``ctx.following``, ``ctx.preceding``) for one file's rows of ``df`` (rows from ``begin`` before ``end``; line
    numbers minus ``shift``): windows are read in slices, each row's prefixes stripped once. ``df`` may hold only
    some pieces of the file (``candidate_lines``): a window stops where line numbers jump."""
    seen: dict[int, list[Line]] = {}  # consecutive records ask for overlapping windows
    end = df.height if end is None else end
    chunks: dict[int, tuple[list, list, list]] = {}  # the last few CHUNK-row slices, as lists

    def chunk(k: int) -> tuple[list, list, list]:
        got = chunks.get(k)
        if got is None:
            # as lists: iterating polars Series value by value cost more than the parsing, and slicing
            # the frame for every record's window (most records ask for one line) cost nearly as much
            window = df.slice(k * CHUNK, max(0, min(CHUNK, end - k * CHUNK)))
            got = chunks[k] = (window["row"].to_list(), window["line"].to_list(), window["raw"].to_list())
            if len(chunks) > 4:
                del chunks[next(iter(chunks))]
        return got

    def rows_from(start: int, count: int):
        stop = min(start + count, end)
        while start < stop:
            k = start // CHUNK
            rows, numbers, raws = chunk(k)
            upto = min(stop - k * CHUNK, len(rows))
            for i in range(start - k * CHUNK, upto):
                row = rows[i]
                cands = seen.get(row)
                if cands is None:
                    cands = seen[row] = ([] if raws[i] == WRAPPED_PIECE
                                         else lines_of(path, numbers[i] - shift, row, raws[i], hints))
                yield numbers[i], cands
            if upto < CHUNK:
                return
            start = (k + 1) * CHUNK

    def lines_after(line: Line, n: int) -> Iterator[Line]:
        # lazily: a reader that stops at the first line not part of its record (a table, a dump) makes no
        # more Lines than it reads (each costs a prefix strip; a record's window may be ~100 rows of others)
        count = 0
        start, step = line.row + 1, min(n, 32) + min(n, 8)  # a few more: other streams' lines are skipped
        prev = line.line + shift
        while count < n and start < end and start <= line.row + n * 4 + 16:
            for line_no, cands in rows_from(start, step):
                if line_no > prev + 1:  # the next lines were not read (a piece without any key)
                    return
                prev = line_no
                for c in cands:
                    if c.stream == line.stream:
                        yield c
                        count += 1
                        if count >= n:
                            return
            start += step
            step *= 2

    def following(line: Line, n: int) -> Following:
        return Following(lines_after(line, n))

    def preceding(line: Line, n: int) -> list[Line]:
        out: list[Line] = []
        row, nearest = line.row - 1, line.line + shift
        while row >= begin and len(out) < n and row >= line.row - (n * 4 + 16):
            line_no, cands = next(rows_from(row, 1), (None, None))
            if line_no is None or line_no < nearest - 1:  # the lines above were not read (a piece without a key)
                break
            nearest = line_no
            out.extend(c for c in reversed(cands) if c.stream == line.stream)
            row -= 1
        return out[:n][::-1]

    return following, preceding
