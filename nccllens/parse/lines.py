"""Bytes to lines: newline-aligned blocks, decoding, and the cleaning real logs need.

Everything here is vectorised or runs at C speed on whole blocks (``bytes.replace``,
``bytes.count``, polars string kernels); no Python loop touches individual lines.
"""

from __future__ import annotations

import io
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

import polars as pl

from nccllens.parse.pastes import undo_paste

MAX_LINE = 1 << 20  # a line longer than 1 MiB is cut there (and the cut is reported)
HOLD = 1 << 20  # a block up to this size waits for the next chunk (``blocks``)
_ANSI = r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b[()][AB012]|\x1b[=>]"


@dataclass
class ReadStats:
    """What reading one input counted: lines, bytes, and notes for the inventory."""

    lines: int = 0
    bytes: int = 0
    notes: list[str] = field(default_factory=list)

    def note(self, text: str) -> None:
        if text not in self.notes and len(self.notes) < 20:
            self.notes.append(text)


def blocks(chunks: Iterable[bytes], stats: ReadStats) -> Iterator[tuple[int, bytes]]:
    """Yield (first line number, block) with every block ending at a line boundary. A block of at most
    ``HOLD`` bytes waits for the next chunk, so that a last line without its newline (a log cut while it
    was written) joins it instead of being a block of its own: each block costs ~20 polars queries."""
    carry = b""
    dropping = False
    line_no = 1
    held: tuple[int, bytes] | None = None
    for block in chunks:
        stats.bytes += len(block)
        if dropping:
            nl = block.find(b"\n")
            if nl < 0:
                continue
            block = block[nl + 1 :]
            dropping = False
        buf = carry + block if carry else block
        nl = buf.rfind(b"\n")
        if nl < 0:
            if len(buf) > MAX_LINE:
                stats.note(f"line {line_no} is longer than {MAX_LINE >> 20} MiB: cut there")
                if held:
                    yield held
                    held = None
                yield line_no, buf[:MAX_LINE] + b"\n"
                line_no += 1
                dropping, carry = True, b""
            else:
                carry = buf
            continue
        out, carry = buf[: nl + 1], buf[nl + 1 :]
        if held:
            yield held
            held = None
        if len(out) <= HOLD:
            held = (line_no, out)
        else:
            yield line_no, out
        line_no += out.count(b"\n")
        if len(carry) > MAX_LINE:
            stats.note(f"line {line_no} is longer than {MAX_LINE >> 20} MiB: cut there")
            if held:
                yield held
                held = None
            yield line_no, carry[:MAX_LINE] + b"\n"
            line_no += 1
            dropping, carry = True, b""
    if held:
        yield held[0], held[1] + carry
    elif carry:
        yield line_no, carry


def frame(block: bytes, first_line: int, stats: ReadStats) -> pl.DataFrame:
    """One block as a DataFrame with columns ``line`` (u32, 1-based) and ``raw`` (str)."""
    if b"\x00" in block:
        stats.note("NUL bytes removed")
        block = block.replace(b"\x00", b"")
    try:
        df = pl.read_lines(io.BytesIO(block), name="raw")
    except pl.exceptions.ComputeError:
        stats.note("invalid UTF-8 replaced with U+FFFD")
        df = pl.read_lines(io.BytesIO(block.decode("utf-8", errors="replace").encode()), name="raw")
    df = df.with_row_index("line", offset=first_line)
    stats.lines += df.height
    raw = pl.col("raw")
    if b"\x1b" in block:
        df = df.with_columns(raw.str.replace_all(_ANSI, ""))
    if b"\r" in block:
        # CRLF endings, and tqdm-style redraws glued with bare CRs: each CR-separated part is a line
        # (a blank line stays, one row: record readers stop where line numbers jump)
        parts = raw.str.strip_chars_end("\r").str.split("\r")
        kept = parts.list.eval(pl.element().filter(pl.element().str.len_bytes() > 0))
        df = df.with_columns(pl.when(kept.list.len() > 0).then(kept).otherwise(pl.lit([""]))).explode("raw")
    return undo_paste(df, block, stats)

