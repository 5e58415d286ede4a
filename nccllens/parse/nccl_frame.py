"""Regular NCCL INFO lines parsed as a frame, not one by one (issue 17).

A job with many communicators prints, per rank, an ``Init START``/``Init COMPLETE`` and a ``Connected
all rings`` for each one: tens of thousands of surviving lines whose event is a fixed function of the
line, at ~100 µs each through the line-by-line path (prefix stripping, pattern masks, the parser,
defaults, row cleaning). Here they are recognised and parsed with polars expressions over all of a
batch's survivors at once, into the very rows that path gives them.

A line is taken here only where that path is known to give exactly this row: the plain NCCL prefix
``host:pid:tid [dev] NCCL INFO`` and nothing around it (no launcher prefix, stamp, rank marker,
unbalanced bracket, glued second record, trailing blank), printable ASCII, at most ``MAX_LINE``
characters, not a wrapped head (``_not_rejoined``), and a body that one of the ``REGULAR`` entries of
``nccl_info.BODIES`` matches and no entry before it does. The NCCL family is offered every line first
and claims the lines it parses, so no other family and no rule's ``other.text`` sees such a line. Every
other line, every line of a file whose survivors hold a traceback (sections there may give lines a
rank), and every line of a block with fewer than ``MIN_ROWS`` NCCL INFO lines goes the usual way.
tests/extract/test_nccl_frame.py checks both ways give the same rows on every fixture log.
"""

from __future__ import annotations

import re

import polars as pl

from nccllens import events as ev
from nccllens.parse.nccl_info import BODIES

REGULAR = ("nccl.init", "nccl.connected")  # kinds of ``BODIES`` whose fields are computed below
# the frame's ~20 queries cost ~10-13 ms whatever the rows, a line parsed alone ~0.1 ms, and about half the
# NCCL INFO lines of a job's start are regular: fewer NCCL INFO lines than this (16 ranks' start-up in a batch
# of a sparse log: 128-144) are cheaper one by one, and give the same rows
MIN_ROWS = 256
MAX_LINE = 1000  # longer lines are cut for matching (``parse.guard``): left to the usual path
# the plain prefix: no stamp, no elapsed time, no source position; a host that starts no launcher prefix
_HEAD = (r"^(?P<host>[A-Za-z][A-Za-z0-9._-]*):(?P<pid>\d{1,9}):\d{1,9} \[\d{1,9}\] NCCL INFO "
         r"(?P<body>[^\[ ].*[^ ])$")
_HEAD_SHAPE = re.sub(r"\(\?P<\w+>", "(?:", _HEAD)
# a line this module may take (the line path leaves such a line alone where only it could join it to the next)
PLAIN_INFO = re.compile(_HEAD_SHAPE)
# a line that begins a record of its own (the NCCL prefix), never the tail of a wrapped one
_RECORD = r"^[A-Za-z0-9._-]+:[0-9]+:[0-9]+ "
# text that makes the usual path strip, split or rejoin a line
_ODD = ("[rank", "[default", "Traceback (most recent call last):")
_RANK_WORD = r"(?:^|[^A-Za-z0-9_\[])Rank [0-9]"  # a rank marker (not ``ncclCommInitRank comm``)
_FIELDS = {  # per entry of ``REGULAR``: its columns, from the groups of its pattern
    "nccl.init": lambda g: {
        "kind": pl.when(g("phase") == "START").then(pl.lit("nccl.init_start")).otherwise(pl.lit("nccl.init_complete")),
        "_comm_rank": g("rank").cast(pl.Int64, strict=False),  # too long for Int64: out of bounds anyway
        "nranks": g("nranks").cast(pl.Int64, strict=False),
        "comm_id": pl.when(g("commId").is_not_null()).then(pl.concat_str(pl.lit("0x"), g("commId"))),
        "key": g("busId"),
        "value": g("fn"),
        "detail": pl.concat_str(
            pl.lit("comm "), g("comm"), pl.lit(" rank "), g("rank"), pl.lit(" nranks "), g("nranks"),
            pl.lit(" cudaDev "), g("cudaDev"),
            pl.when(g("parent").is_not_null()).then(pl.concat_str(
                pl.lit(" parent "), g("parent"), pl.lit(" color "), g("color"), pl.lit(" key "), g("splitkey")))
            .otherwise(pl.lit(""))),
    },
    "nccl.connected": lambda g: {"kind": pl.lit("nccl.connected"), "value": g("what")},
}


def _open(raw: pl.Expr) -> pl.Expr:
    def n(c: str) -> pl.Expr:
        return raw.str.count_matches(c, literal=True).cast(pl.Int64)

    return n("(") - n(")") + n("[") - n("]")


def _candidates(kept: pl.DataFrame) -> pl.DataFrame:
    """The rows of ``kept`` the line-by-line path would not strip, split or rejoin, with their head."""
    raw = pl.col("raw")
    gate = raw.str.contains(" NCCL INFO ", literal=True) & (raw.str.len_bytes() <= MAX_LINE) \
        & raw.str.contains(r"^[\x20-\x7e]*$") & (raw.str.count_matches(" NCCL ", literal=True) == 1)
    for text in _ODD:
        gate = gate & ~raw.str.contains(text, literal=True)
    gate = gate & ~raw.str.contains(_RANK_WORD)
    # the head's groups cut by literal searches, not captured (polars captures ~20x slower than it matches): the
    # host (no ':') ends at the first ':', the pid at the next, and the body follows the first " NCCL INFO "
    # (the head before it holds no blank)
    pid = raw.str.slice(raw.str.find(":", literal=True) + 1)
    return (kept.lazy().filter(gate).filter(_open(raw) <= 0).filter(raw.str.contains(_HEAD_SHAPE))
            .with_columns(host=raw.str.slice(0, raw.str.find(":", literal=True)),
                          pid=pid.str.slice(0, pid.str.find(":", literal=True)),
                          body=raw.str.slice(raw.str.find(" NCCL INFO ", literal=True) + len(" NCCL INFO ")))
            .collect())


def _not_rejoined(rows: pl.DataFrame, by: str, wraps: pl.DataFrame, frame: pl.DataFrame) -> pl.DataFrame:
    """``rows`` less those a terminal may have wrapped: a line as wide as its file's wrap width (``wraps``:
    ``by``, ``wrap``) is rejoined with the next row of ``frame`` when that row continues it (the next line
    of the same file, not starting a record of its own)."""
    rows = rows.join(wraps, on=by, how="left", maintain_order="left")
    wide = (pl.col("raw").str.len_chars() == pl.col("wrap")).fill_null(False)
    if not rows.select(wide.any()).item():
        return rows.drop("wrap")
    rows = rows.with_columns((pl.col("row") + 1).alias("_next"))
    after = frame.filter(pl.col("row").is_in(rows.filter(wide)["_next"].implode())).select(
        pl.col("row").alias("_next"), pl.col("line").alias("_nl"), pl.col(by).alias("_nb"),
        pl.col("raw").str.contains(_RECORD).alias("_nr"))
    rows = rows.join(after, on="_next", how="left", maintain_order="left")
    alone = pl.col("_nl").is_null() | (pl.col("_nb") != pl.col(by)) | (pl.col("_nl") != pl.col("line") + 1) \
        | pl.col("_nr")
    return rows.filter(~wide | alone).drop("wrap", "_next", "_nl", "_nb", "_nr")


def split(kept: pl.DataFrame, by: str, wraps: pl.DataFrame,
          frame: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame]:
    """(rows of ``kept`` left to the line-by-line path, regular NCCL rows with their parsed columns).
    ``by`` names the column of the file a row belongs to; ``wraps`` and ``frame`` (every row read, with
    ``row``, ``line``, ``raw`` and ``by``): see ``_not_rejoined``."""
    if kept.select(pl.col("raw").str.contains(" NCCL INFO ", literal=True).sum()).item() < MIN_ROWS:
        return kept, kept.clear()
    rows = _candidates(kept)
    if not rows.height:
        return kept, rows
    traced = kept.filter(pl.col("raw").str.starts_with("Traceback"))[by].unique()
    rows = _not_rejoined(rows.filter(~pl.col(by).is_in(traced.implode())), by, wraps, frame)
    parsed, earlier = [], []
    for kind, pattern, _ in BODIES:
        anchored = "^(?:" + pattern + ")"
        if kind in REGULAR and rows.height:
            body = pl.col("body")
            taken = rows.lazy().filter(body.str.contains(anchored))
            if earlier:  # the first entry that matches a body is the one the parser uses
                taken = taken.filter(~body.str.contains("^(?:" + "|".join(earlier) + ")"))
            taken = taken.with_columns(body.str.extract_groups(anchored).alias("_g")).unnest("_g") \
                .select("row", "host", "pid", "body", **_FIELDS[kind](pl.col)).collect()
            if taken.height:
                parsed.append(taken)
                rows = rows.join(taken.select("row"), on="row", how="anti")
        earlier.append(re.sub(r"\(\?P<\w+>", "(?:", pattern))  # one alternation of them: no group twice
    if not parsed:
        return kept, kept.clear()
    regular = pl.concat(parsed, how="diagonal_relaxed")
    regular = kept.join(regular, on="row", how="inner", maintain_order="left")
    return kept.join(regular.select("row"), on="row", how="anti", maintain_order="left"), regular


def _bounded(value: pl.Expr, low: int, high: int) -> pl.Expr:
    return pl.when(value.is_between(low, high)).then(value)


def events(regular: pl.DataFrame, files: pl.DataFrame, by: str) -> pl.DataFrame:
    """The event rows of ``split``'s regular rows. ``files`` has, per value of ``by``: ``file``, ``shift``
    (subtracted from ``line``), ``wrap``, ``line_rank``, ``rank``, ``local_rank``, ``attempt`` (the
    file's path hints, as the line-by-line path uses them)."""
    frame = regular.join(files, on=by, how="left", maintain_order="left")
    low, high = ev.MAX_RANK - 1, ev.MAX_RANK
    comm_rank = pl.col("_comm_rank") if "_comm_rank" in frame.columns else pl.lit(None, pl.Int64)
    rank = pl.when(pl.col("kind").str.starts_with("nccl.init_")).then(pl.coalesce("line_rank", comm_rank)) \
        .otherwise(pl.coalesce("line_rank", "rank"))
    out = frame.select(
        pl.col("file"), (pl.col("line").cast(pl.Int64) - pl.col("shift")).alias("line"), pl.col("host"),
        pl.col("pid").cast(pl.Int64), _bounded(rank.cast(pl.Int64), 0, low).alias("rank"),
        _bounded(pl.col("local_rank").cast(pl.Int64), 0, low).alias("local_rank"), _bounded(pl.col("attempt").cast(pl.Int64), -(1 << 31), (1 << 31) - 1).alias("attempt"),
        pl.lit("nccl").alias("family"), pl.lit("info").alias("level"), pl.col("kind"),
        pl.col("body").alias("message"), pl.col("raw"),
        *((_bounded(pl.col("nranks"), 1, high).alias("nranks"),) if "nranks" in frame.columns else ()),
        *(pl.col(c) for c in ("comm_id", "key", "value", "detail") if c in frame.columns),
    )
    return out.with_columns(pl.lit(None).alias(c) for c in ev.COLUMNS if c not in out.columns) \
        .select(ev.COLUMNS).cast(ev.SCHEMA)

