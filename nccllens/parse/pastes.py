"""How pastes and log collectors wrap a log, found and undone as a block is read.

A bug ticket rarely holds a log as its program wrote it: an editor turned source-file names into links, a reply
quoted it (``> ``), a Markdown list indented it, ``docker compose logs`` put each container's name before its lines,
a terminal hard-wrapped the long lines. Each is found on the block's bytes at C speed (a log as its program wrote
it stops at the first test) and undone on its rows (``undo_paste``), so that every family reads the lines as
they were printed. ``pasted`` tells the piece scanner (``parse.pieces``) which blocks to read whole.
``bench/robustness.py`` measures it: the dev set scored with its lines wrapped each way.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Protocol

import polars as pl


class Notes(Protocol):
    def note(self, text: str) -> None: ...


def pasted(block: bytes) -> bool:
    """Does the block come wrapped in a way ``undo_paste`` undoes?"""
    return (AUTOLINK_MARK in block or quoted_block(block) or compose_block(block) or block_indent(block) > 0
            or wrap_width(block) is not None)


def undo_paste(df: pl.DataFrame, block: bytes, stats: Notes) -> pl.DataFrame:
    """``df`` (the block's rows: ``line``, ``raw``) read as the program printed them; each undoing is noted."""
    raw = pl.col("raw")
    width = wrap_width(block)
    if width:
        # the width was found on the rows as pasted: they are measured before anything else is undone (links, quote
        # marks and indents change a row's length, not where the terminal cut it)
        df = df.with_columns(raw.str.len_chars().alias(PASTED_WIDTH))
    if AUTOLINK_MARK in block:
        # a paste from an editor that turned "net_ib.cc:101" into a link ("[net_ib.cc:101](http://net_ib.cc:101/)":
        # .cc and .cu are web domains): read the link's text
        stats.note("links an editor added to the paste ('[x](http://x)') read as their text")
        df = df.with_columns(raw.str.replace_all(_AUTOLINK, "$1"))
    if quoted_block(block):
        # a log pasted as a Markdown or e-mail quote (a bug ticket's reply): read without the marks
        stats.note("quote marks ('> ') removed from a pasted quote")
        df = df.with_columns(raw.str.replace(r"^> ?", ""))
    if compose_block(block):
        # docker compose logs: every line behind its container's name and a bar ("trainer-1  | ")
        stats.note("docker compose's container prefixes ('name-1  | ') removed")
        df = df.with_columns(raw.str.replace(_COMPOSE_ROW, ""))
    indent = block_indent(block)
    if indent:
        # a log pasted indented as a whole (a code block inside a list item or a quote): read it from its own start
        stats.note(f"an indentation of {indent} characters on every line removed (an indented paste)")
        df = df.with_columns(raw.str.slice(indent))
    if width and width > indent:
        # a paste from a terminal that hard-wrapped long lines at ``width`` columns (then indented, maybe): each
        # line rejoined with the pieces cut off it (the pieces' rows stay, as ``WRAPPED_PIECE``, so that line
        # numbers go on as in the file)
        stats.note(f"lines hard-wrapped at {width - indent} columns rejoined")
        df = rejoin_wrapped(df, width)
    return df.drop(PASTED_WIDTH, strict=False)


AUTOLINK_MARK = b"](http"
_AUTOLINK = r"\[([^\]\s]+)\]\(https?://[^)\s]*\)"

# docker compose logs (v2 "name-1  | ", v1 "name_1  | "): the container's name, its index, padding and a bar
COMPOSE_PREFIX = r"[A-Za-z][\w.-]*[-_]\d+ +\| "  # the prefix table (``parse.prefixes``) knows it too
_COMPOSE = re.compile(rb"(?:^|\n)" + COMPOSE_PREFIX.encode())
_COMPOSE_ROW = "^" + COMPOSE_PREFIX + "?"  # an empty line's prefix may have lost its last blank in the paste


def compose_block(block: bytes) -> bool:
    """Do (nearly) all of the block's lines start with a docker compose container prefix, its first among them?"""
    if _COMPOSE.match(block) is None:
        return False
    return sum(1 for _ in _COMPOSE.finditer(block)) >= QUOTED_SHARE * max(_lines(block), 1)


WRAP_SAMPLE = 1 << 14  # bytes of a block looked at for a wrap width (a paste from a terminal is small)
WRAP_MIN = 60  # a terminal narrower than this is not one people paste from
WRAP_SHARE = 0.05  # of the sample's lines, at least, exactly as wide as the terminal
SHORT_PASTE = 40  # lines: a sample shorter than this needs two full-width rows to show a wrap width, else three
START_CHARS = 12  # how a line starts (digits aside): a record's header, or text cut anywhere
DISTINCT_ENDS = 3  # distinct full-width rows, at least, for their ends to tell cut text from a box's edge
FIXED_PROBE = 16  # full rows looked at first for records of one fixed width
HEADS_TO_TELL = 3  # lines after narrower ones, at least, for their starts to say how this log's records start
_DIGITS_TO_ZERO = bytes.maketrans(b"123456789", b"000000000")  # how a line starts, digits aside


def wrap_width(block: bytes) -> int | None:
    """The width a terminal hard-wrapped the block's lines at, or None. Each piece of a wrapped line but the
    last is exactly as wide as the terminal, so the widest lines of the sample share one length, and many do;
    a table or box drawn at a fixed width (``nvidia-smi``) has such lines too, but they end alike (``|``, ``+``),
    which cut text does not. Lengths are counted in bytes where the sample is ASCII (C speed: most blocks stop
    at the first test), in characters otherwise (a terminal wraps at columns)."""
    sample = block[:WRAP_SAMPLE]
    lines = sample.split(b"\n")
    if len(lines) < 4:
        return None
    if len(sample) == WRAP_SAMPLE:
        lines.pop()  # cut by the sample
    lengths = list(map(len, lines))
    if not sample.isascii():
        lengths = [len(line.decode("utf-8", "replace")) for line in lines]
    width = max(lengths)
    count = lengths.count(width)
    if width < WRAP_MIN or count < 2 or count < WRAP_SHARE * len(lines):
        return None
    if count < 3 and (len(lines) >= SHORT_PASTE or not _cut_mid_word(lines, lengths, width)):
        return None  # two full rows say as much only in a short paste, and only where both cut a word in two
    # each distinct line once: the same text printed twice (two ranks' copies of one message) is cut at the same
    # column and ends alike by itself, which says nothing of a drawn box; a box's right edge is a mark (``|``,
    # ``+``, ``│``), never a letter, digit or blank, which is where cut text mostly ends (ranks' copies of one
    # message behind different rank prefixes, a cut at a word's end)
    at = list(dict.fromkeys(line for line, n in zip(lines, lengths, strict=True) if n == width))
    # (with fewer than three distinct rows their ends say nothing either way: every end counts, as for a box)
    ends = Counter(line[-1:] for line in at
                   if len(at) < DISTINCT_ENDS or not line[-1:].isalnum() and not line[-1:].isspace())
    if ends and ends.most_common(1)[0][1] > len(at) // 2:
        return None
    # the line after a cut one goes on mid-text; after a record that merely is that wide (fixed-width fields, a
    # progress bar as wide as the terminal) comes the next record, which starts the way records start: the way
    # lines after narrower ones start, where there are enough of those to tell (a short paste repeats its cut
    # records, so their pieces' starts repeat too), else the way many lines start
    def start(i: int) -> bytes:
        return lines[i][:START_CHARS].translate(_DIGITS_TO_ZERO).strip()

    # fixed-width records (dense NCCL lines of one shape): the rows after full rows start the way full rows that
    # follow a narrower one (or open the sample: record heads) start; a few of them tell, and most logs stop here
    full = [i for i, n in enumerate(lengths[:-1]) if n == width]
    own = {start(i) for i in full[:FIXED_PROBE] if i == 0 or lengths[i - 1] < width}
    probe = [start(i + 1) for i in full[:FIXED_PROBE]]
    if own and sum(1 for s in probe if s in own) > len(probe) // 2:
        return None
    nexts = [start(i + 1) for i in full]
    after_short = [i + 1 for i, n in enumerate(lengths[:-1]) if n < width]
    if len(after_short) >= HEADS_TO_TELL:
        # the heads are read only until every start that follows a full row is among them (records that repeat,
        # the common case, stop this early)
        heads = {start(0)}
        missing = {s for s in nexts if s} - heads
        for i in after_short:
            if not missing:
                break
            head = start(i)
            heads.add(head)
            missing.discard(head)
        alike = sum(1 for s in nexts if not s or s in heads)
    else:
        common = Counter(start(i) for i in range(len(lines)))
        alike = sum(1 for s in nexts if not s or common[s] >= 3)
    return width if alike <= len(nexts) // 2 else None


def _cut_mid_word(lines: list[bytes], lengths: list[int], width: int) -> bool:
    """Every full-width row ends in a letter or digit and the row after it goes on with one: a word cut in two
    (a record that merely is as wide ends in a bracket, a quote, a stop, or the next record starts apart)."""
    full = [i for i, n in enumerate(lengths[:-1]) if n == width]
    return len(full) == lengths.count(width) and all(
        lines[i][-1:].isalnum() and lines[i + 1][:1].isalnum() for i in full)


PASTED_WIDTH = "_pasted_width"  # a row's length as pasted, before any undoing
PADDING = "  "  # the end of a row padded to the terminal's width (a cut one ends in text, or one blank)
WRAPPED_PIECE = "\x00"  # the text left on the row of a piece rejoined to the line above (a NUL: never a log's own)


def rejoin_wrapped(df: pl.DataFrame, width: int) -> pl.DataFrame:
    """Each row exactly ``width`` characters wide as pasted (``PASTED_WIDTH`` where other undoings changed it)
    joined with the rows after it, up to the first narrower one; those rows keep their line numbers and hold
    ``WRAPPED_PIECE``: record readers read across them."""
    raw = pl.col("raw")
    if PASTED_WIDTH not in df.columns:
        df = df.with_columns(raw.str.len_chars().alias(PASTED_WIDTH))
    # a row as wide as the terminal that ends in blanks was padded to the width (a copy of the screen keeps the
    # padding of lines that ended there), not cut: the next row is a line of its own
    full = (pl.col(PASTED_WIDTH) == width) & ~raw.str.ends_with(PADDING)
    cont = full.shift(1).fill_null(False) & ~_record_head(df, width)
    head = (~cont).cum_sum().alias("_head")
    joined = (df.with_columns(head).group_by("_head", maintain_order=True)
              .agg(pl.col("line").first(), raw.str.join("").alias("_text")))
    out = df.with_columns(head).join(joined.select("_head", "line", "_text"), on=["_head", "line"], how="left")
    return out.select("line", pl.when(pl.col("_text").is_not_null()).then(pl.col("_text"))
                      .otherwise(pl.lit(WRAPPED_PIECE)).alias("raw"))


def _record_head(df: pl.DataFrame, width: int) -> pl.Expr:
    """Rows that start the way this paste's records start: the way rows after narrower ones start (a record
    that merely is as wide as the terminal is followed by the next record, not by a piece of itself), where
    enough rows follow narrower ones to tell."""
    start = pl.col("raw").str.slice(0, START_CHARS).str.replace_all(r"\d", "0").str.strip_chars()
    after_short = (pl.col(PASTED_WIDTH) < width).shift(1).fill_null(False)
    heads = df.select(start.filter(after_short & (start != "")).alias("s"))["s"]
    if heads.len() < HEADS_TO_TELL:
        return pl.lit(False)
    return start.is_in(heads.unique().implode()) & (start != "")


_UNINDENTED = re.compile(rb"(?:^|\n)[^ \t\n\r>]")  # a line that starts at its first column
_INDENTS = re.compile(rb"^[ \t]*(?=[^ \t\n\r])", re.M)


def block_indent(block: bytes) -> int:
    """The indentation every non-blank line of the block shares (0 for a log's own lines, which start at
    their first column somewhere). Searched at C speed: only a block whose every line is indented (a paste,
    small) has its indentations measured."""
    if block[:1] not in (b" ", b"\t") and not block.startswith((b"\n", b"\r")):
        return 0
    if _UNINDENTED.search(block) is not None:
        return 0
    indents = [m.group(0) for m in _INDENTS.finditer(block)]
    lead = min(indents, key=len, default=b"")
    return len(lead) if lead and all(i.startswith(lead) for i in indents) else 0


QUOTED_SHARE = 0.8  # of a block's non-empty lines, for its "> " marks to be a quote, not the log's own


def quoted_block(block: bytes) -> bool:
    """Do (nearly) all of the block's lines start with ``>``, its first among them? Counted at C speed on the
    bytes, so that the scan that reads raw blocks (``parse.pieces``) and ``frame`` decide alike; a block whose
    first line is no quote costs nothing more (searching every block for ``\\n>`` cost ~1 CPU s per GB)."""
    if not block.lstrip()[:1] == b">":
        return False
    quoted = block.count(b"\n>") + block.startswith(b">")
    lines = max(_lines(block), 1)
    # three marks at least, or every line of a file that has fewer (a one-line excerpt quoted in a reply)
    return quoted >= min(3, lines) and quoted >= QUOTED_SHARE * lines


def _lines(block: bytes) -> int:
    """The block's non-blank lines, about (runs of blank lines counted once), at C speed."""
    return block.count(b"\n") + (not block.endswith(b"\n")) - block.count(b"\n\n") - block.startswith(b"\n")
