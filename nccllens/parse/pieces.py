"""The coarse pass: split into lines only the pieces of text where a prefilter key occurs.

Buffers (a 16 MiB block of a large file, or many small files) are cut into newline-aligned pieces
of about 32 KiB. polars runs the key regexes (``nccllens.prefilter_keys``) and counts newlines over
whole pieces, and reads as lines only the pieces holding a key, plus the ``FOLLOW`` pieces after each
so that a record's continuation lines (a traceback, a stack, a table: 64 KiB at least) are there.
Line numbers come from the per-piece newline counts.
"""

from __future__ import annotations

import io
from dataclasses import dataclass

import polars as pl

from nccllens.parse.lines import ReadStats
from nccllens.parse.pastes import pasted

PIECE = 32 << 10
FOLLOW = 2  # pieces read after one holding a key


@dataclass
class Candidates:
    """The lines of a block that the coarse pass kept, with line counts per buffer."""

    # columns line (u32, numbered across the buffers from first_line), raw (str), keyed (bool: the line's
    # piece holds a key; the pieces read after it only for continuation lines hold no literal at all)
    frame: pl.DataFrame
    counts: list[int]  # lines in each buffer
    lasts: list[tuple[int, str] | None]  # (line number, text) of each buffer's last line
    hits: pl.DataFrame | None = None  # the compiled engine's (``extract.engine``): line, bits of what matched it

    @property
    def lines(self) -> int:
        return sum(self.counts)

    @property
    def last(self) -> tuple[int, str] | None:
        return next((x for x in reversed(self.lasts) if x is not None), None)


def _cut(buffer: bytes, owner: int, spans: list[tuple[int, int, int]]) -> None:
    """(owner, start, end) of each newline-aligned piece of ``buffer``."""
    pos, n = 0, len(buffer)
    while pos < n:
        end = buffer.find(b"\n", min(pos + PIECE, n - 1))
        end = n if end < 0 else end + 1
        spans.append((owner, pos, end))
        pos = end


def _chosen(hits: list[bool], owners: list[int], dense: list[bool] | None = None) -> list[int]:
    """The pieces holding a key, the ``FOLLOW`` pieces after each (within the same buffer), and the
    pieces holding a dense family's line (``parse.dense``: summarised, not parsed)."""
    out, until = [], -1
    for i, hit in enumerate(hits):
        if hit:
            until = i + FOLLOW
        elif i > until or owners[i] != owners[i - 1]:
            until = -1
            if not (dense and dense[i]):
                continue
        out.append(i)
    return out


def _piece(buffers: list[bytes], span: tuple[int, int, int]) -> bytes:
    k, a, b = span
    piece = buffers[k][a:b]
    return piece if piece.endswith(b"\n") else piece + b"\n"


def _needs_cleaning(buffer: bytes) -> bool:
    return b"\x00" in buffer or b"\r" in buffer or b"\x1b" in buffer or pasted(buffer)


def _valid(buffer: bytes, ascii: bool) -> bool:
    if ascii:
        return True
    try:
        buffer.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _scanned(buffers: list[bytes], ascii: list[bool], spans: list[tuple[int, int, int]], engine, first_line: int):
    """With the compiled engine: per piece (holds a match, holds a dense line, newlines), and the lines'
    hit table (line numbers from ``first_line``). ``ascii``: which buffers are all ASCII (the others are
    scanned with the UTF-8 database)."""
    from nccllens.extract.engine import line_bits, scan

    hits, dense, counts, found = [], [], [], {}
    line = first_line
    views = [memoryview(b) for b in buffers]  # each piece scanned where it lies: no copy
    for k, a, b in spans:
        buffer = buffers[k]
        matches, is_dense = scan(engine, views[k][a:b], ascii[k])
        hits.append(bool(matches))
        dense.append(is_dense)
        if matches:
            bits, n = line_bits(buffer, matches, line, a, b)
            found.update(bits)
        else:
            n = buffer.count(b"\n", a, b)
        counts.append(n)
        line += n + (buffer[b - 1:b] != b"\n")
    table = pl.DataFrame({"line": list(found), "bits": list(found.values())},
                         schema={"line": pl.UInt32, "bits": pl.UInt32})
    return hits, dense, counts, table


def candidate_lines_many(buffers: list[bytes], first_line: int, keys: tuple[str, ...],
                         stats: ReadStats, dense: str | None = None, engine=None) -> Candidates | None:
    """None when a buffer needs the cleaning ``lines.frame`` does (NUL, CR, ANSI escapes, invalid
    UTF-8) or there are no keys: the caller then reads the buffers whole. Pieces that ``dense`` (a
    regex) finds in are read too, with ``keyed`` false: their lines hold no prefilter literal. With
    ``engine`` (``extract.engine.Spec``) the pieces are chosen by its scan instead of keys and regexes."""
    if (not keys and engine is None) or any(_needs_cleaning(b) for b in buffers):
        return None
    ascii = [b.isascii() for b in buffers] if engine is not None else []
    if engine is not None and not all(_valid(b, a) for b, a in zip(buffers, ascii, strict=True)):
        return None
    spans: list[tuple[int, int, int]] = []
    for k, buffer in enumerate(buffers):
        _cut(buffer, k, spans)
    if not spans:
        return Candidates(pl.DataFrame(schema=_SCHEMA), [0] * len(buffers),
                          [None] * len(buffers), _NO_HITS.clear() if engine is not None else None)
    owners = [k for k, _, _ in spans]
    if engine is not None:
        hits, dense_hits, counts, table = _scanned(buffers, ascii, spans, engine, first_line)
        return _numbered(buffers, spans, owners, hits, dense_hits, counts, first_line, stats, table)
    # the pieces are copied once, into polars; the few chosen are cut again from the buffers below
    try:
        text = pl.Series("p", [buffers[k][a:b] for k, a, b in spans], dtype=pl.Binary).cast(pl.String)
    except pl.exceptions.PolarsError:
        return None
    p = pl.col("p")
    marks = text.to_frame().select(
        hit=pl.any_horizontal([p.str.contains(k) for k in keys]),
        nl=p.str.count_matches("\n", literal=True).cast(pl.UInt32),
        dense=p.str.contains(dense) if dense else pl.lit(False),
    )
    del text
    counts, hits = marks["nl"].to_list(), marks["hit"].to_list()
    dense_hits = marks["dense"].to_list() if dense else None
    return _numbered(buffers, spans, owners, hits, dense_hits, counts, first_line, stats, None)


def _numbered(buffers, spans, owners, hits, dense_hits, counts, first_line, stats, table) -> Candidates:
    """The chosen pieces (``_chosen``) read as numbered lines."""
    for i, (k, _, b) in enumerate(spans):
        if buffers[k][b - 1:b] != b"\n":  # a buffer's last line without its newline is a line too
            counts[i] += 1
    starts, line = [], first_line
    per_buffer = [0] * len(buffers)
    for i, c in enumerate(counts):
        starts.append(line)
        line += c
        per_buffer[owners[i]] += c
    stats.lines += line - first_line
    chosen = _chosen(hits, owners, dense_hits)
    if len(chosen) == len(spans):  # every piece (a dense log): its lines numbered in order, all searched
        # the pieces are the buffers whole (a buffer's last line given its newline): joined without cutting them
        joined = b"".join(b if b.endswith(b"\n") else b + b"\n" for b in buffers if b)
        df = pl.read_lines(io.BytesIO(joined), name="raw")
        del joined
        df = df.select(pl.int_range(first_line, first_line + df.height, dtype=pl.UInt32).alias("line"), "raw",
                       pl.lit(True).alias("keyed"))
    elif chosen:
        joined = b"".join(_piece(buffers, spans[i]) for i in chosen)
        df = pl.read_lines(io.BytesIO(joined), name="raw")
        del joined
        pieces = pl.DataFrame({"start": [starts[i] for i in chosen], "count": [counts[i] for i in chosen],
                               "keyed": [hits[i] for i in chosen]}, schema={"start": pl.UInt32, "count": pl.UInt32,
                                                                           "keyed": pl.Boolean})
        numbered = pieces.select(pl.int_ranges("start", pl.col("start") + pl.col("count"), dtype=pl.UInt32)
                                 .explode().alias("line"), pl.col("keyed").repeat_by("count").explode())
        df = df.with_columns(numbered["line"], numbered["keyed"]).select("line", "raw", "keyed")
    else:
        df = pl.DataFrame(schema=_SCHEMA)
    lasts: list[tuple[int, str] | None] = []
    end = first_line
    for buffer, n in zip(buffers, per_buffer, strict=True):
        end += n
        cut = buffer.rfind(b"\n", 0, len(buffer) - 1) + 1
        lasts.append((end - 1, buffer[cut:].rstrip(b"\n").decode()) if n else None)
    return Candidates(df, per_buffer, lasts, table)


_SCHEMA = {"line": pl.UInt32, "raw": pl.String, "keyed": pl.Boolean}
_NO_HITS = pl.DataFrame(schema={"line": pl.UInt32, "bits": pl.UInt32})


def candidate_lines(block: bytes, first_line: int, keys: tuple[str, ...], stats: ReadStats,
                    dense: str | None = None, engine=None) -> Candidates | None:
    """``candidate_lines_many`` for one block."""
    return candidate_lines_many([block] if block else [], first_line, keys, stats, dense, engine)
