"""Dense families, summarised in polars: no line of theirs reaches per-line Python.

Lines a failed job prints by the million (shared/reference/nccl_logs.md §2) are NCCL transport
lines (``Channel 00/0 : 0[0] -> 1[1] [send] via NET/IB/0/GDRDMA``), ring and tree dumps, per-operation
lines of ``NCCL_DEBUG_SUBSYS=COLL`` (``AllReduce: opCount 1f sendbuff ... comm 0x... [nranks=8] stream
...``) and training progress (``step N``, Megatron ``iteration N/``, tqdm bars, HF Trainer dicts).
Each block's rows are classified by literal tests (a regex only for ring/tree dumps and progress shapes,
on their few candidates), then aggregated per (family, process, key) with ``group_by``: count, first and
last line and their text. Only the first and last rows of each group are parsed in Python, once per file
(``parse.dense_rows``, which also checks their structure).

A dense line is also handed to the family parsers and rules when one of the patterns that could
match a line of its family (``watch``, built by ``dense_rows.watch_patterns``) matches it.
"""

from __future__ import annotations

import re

import polars as pl

# COLL lines hold ": opCount ", " sendbuff " and " [nranks="; transport lines "NCCL INFO Channel ", "] -> " and
# "] via " (literal tests decide them); ring/tree dumps and progress shapes are confirmed by these regexes
_KV = r"(?:[\s,|]+[\w/.()-]+(?:[:=]\s*|\s+)[-+]?(?:[\d.]+(?:[eE][-+]?\d+)?|nan|inf|NaN|Inf)%?)"
GRAPH = r"NCCL INFO (Trees|Ring|Tree|Channel) (?:\[\d+\] |\d+ : -?\d+ -> |\d+/\d+ :(?: +\d+)+(?: ?\.\.\.)?\s*$)"
PROGRESS_GATE = r"[Ss]tep|STEP|iteration|it/s[\],]|s/it[\],]|\{'|[Ee]poch"
# the whole line after launcher prefixes is the shape: an error that names a step is not progress
_PROGRESS_LEAD = (r"^(?:\s*(?:\[[^\]]*\](?:<\w+>)?:?|\([^)]*\)|\d+:|[a-z_][\w.-]*:|\d{4}-\d\d-\d\d[T ][\d:.,]+Z?"
                  r"|(?:INFO|WARNING|DEBUG)\b:?|[IWD]\d{4} [\d:.]+ +\d+ [\w.]+:\d+\]|-|\|))*\s*")
_SHAPES = {
    "step": r"(?:[Ss]tep|STEP)(?:[\s:=\[]+)\d+(?:/\d+)?\]?" + _KV + r"*",
    "iteration": r"iteration\s+\d+\s*/\s*\d+\s*\|(?:\s*[\w\s()/.-]+:\s*[-+\w.]+\s*\|)*",
    "tqdm": (r"(?:[\w\s.-]+:\s*)?\d+%\|[^|]*\|\s*\d+/\d+ \[[\d:]+<[\d:?]+,\s*[\d.?]+\s?(?:it/s|s/it)"
             r"(?:,[^\]]*)?\]"),
    "hf": r"\{'\w+': [-+\w.]+(?:, '\w+': [-+\w.]+)*\}",
    # an epoch with its loss, as PyTorch's examples and many scripts print it: "Train Epoch: 1 [2700/246000
    # (18%)]\tLoss: 0.000002", "epoch is: 1 and train loss is 3.17e-06" (a number: "loss nan" is no progress)
    "epoch": (r"(?:[Tt]rain(?:ing)?\s+)?[Ee]poch(?:\s+is)?[\s:=\[]+\d+\b[^\n]*?\b[Ll]oss\b(?:\s+is)?[\s:=]+"
              r"[-+]?\d[\d.]*(?:[eE][-+]?\d+)?[^\n]*"),
}
PROGRESS = _PROGRESS_LEAD + "(?:" + "|".join(f"(?P<{k}>{v})" for k, v in _SHAPES.items()) + r")\s*$"
PROGRESS_SHAPES = tuple(_SHAPES)
# each shape alone, to tell them apart without capture groups (a capturing search is ~15x slower in polars)
# and a literal every line of that shape holds (the shape's regex runs only where one is)
_SHAPE_LITERALS = {"step": ("Step", "step", "STEP"), "iteration": ("iteration",), "tqdm": ("%|",), "hf": ("{'",),
                   "epoch": ("poch",)}
_LATER_LITERALS = [t for shape in PROGRESS_SHAPES[1:] for t in _SHAPE_LITERALS[shape]]
_SHAPE_ONLY = {k: _PROGRESS_LEAD + f"(?:{v})" + r"\s*$" for k, v in _SHAPES.items()}
FAMILIES = ("nccl.transport", "nccl.graph", "nccl.coll", "progress")
# NCCL lines: the process that wrote them (host:pid); progress: the launcher's rank tag, if any
_NCCL_WHO = r"([^\s:\[\]]+:\d+:)\d+ \["
_TAG_WHO = r"(\[(?:rank|default)\d+\]|\[\d+,\d+\]<|^\s*\d+: |\(\w+ pid=\d+)"
KEY_REGEX = r": opCount |\] via |NCCL INFO (?:Channel|Trees|Ring|Tree) |" + PROGRESS_GATE

_PARTIAL = {"fam": pl.String, "who": pl.String, "key": pl.String, "count": pl.UInt32, "first_line": pl.UInt32,
            "last_line": pl.UInt32, "first_raw": pl.String, "last_raw": pl.String}


def empty_partial(extra: dict | None = None) -> pl.DataFrame:
    return pl.DataFrame(schema={**(extra or {}), **_PARTIAL})


def _after(raw: pl.Expr, start: str, stop: str) -> pl.Expr:
    """The text after the first ``start`` up to the next ``stop``: literal searches and a slice, no regex."""
    a = raw.str.find(start, literal=True) + len(start)
    b = raw.str.find(stop, literal=True)
    return raw.str.slice(a, b - a)


def _who(rows: pl.DataFrame, regex: str) -> pl.DataFrame:
    """``rows`` with ``who``, the process (or rank tag) of each: where a row starts as the first row of its file
    (``owner`` in a batch of files) does, that one without a regex (one process per file, the usual case);
    the other rows extracted one by one."""
    raw = rows["raw"]
    if "owner" in rows.columns:
        run = rows["owner"].rle_id()  # the rows of one file are together (in row order)
        firsts = [_head(regex, text) for text in raw.filter(run.is_first_distinct()).to_list()]
        if regex == _TAG_WHO and all(h is None or _TAG_ONLY.fullmatch(h) for h in firsts):
            # each file's head a rank tag (or none): a row that starts with it gives that very tag by the
            # literal search of ``_extract_who``, so one pass over every row costs less than telling them apart
            # (a console log prints every local rank's tag: most rows do not start as its first row)
            return rows.with_columns(_extract_who(raw, regex).alias("who"))
        head = pl.Series(firsts, dtype=pl.String).gather(run)
    else:
        head = pl.Series([_head(regex, raw[0])], dtype=pl.String).gather(pl.zeros(rows.height, pl.UInt32, eager=True))
    same = raw.str.starts_with(head).fill_null(False)
    if not same.all():
        others = (~same).arg_true()
        head = head.scatter(others, _extract_who(raw.gather(others), regex))
    return rows.with_columns(head.alias("who"))


# a rank tag at the start of a line is the leftmost match of ``_TAG_WHO`` (its first branch), and ends at the
# line's first ']': found by a literal search and checked on the short text, not by a capturing search
_TAG_AT_START = r"^\[(?:rank|default)\d+\]$"
_TAG_ONLY = re.compile(r"\[(?:rank|default)\d+\]")


def _extract_who(texts: pl.Series, regex: str) -> pl.Series:
    """``regex``'s group 1 in each of ``texts`` ("" where it has none)."""
    if regex != _TAG_WHO:
        return texts.str.extract(regex, 1).fill_null("")
    lead = texts.str.slice(0, texts.str.find("]", literal=True) + 1)
    tagged = lead.str.contains(_TAG_AT_START).fill_null(False)
    if tagged.all():
        return lead
    rest = (~tagged).arg_true()
    return lead.scatter(rest, texts.gather(rest).str.extract(regex, 1).fill_null(""))


def _head(regex: str, text: str | None) -> str | None:
    m = re.match(regex, text) if text is not None else None
    return m.group(1) if m else None


# each family's literal gate: the first literal is searched in every remaining row, the others only in the rows
# that hold it (COLL and transport lines need nothing more; ring/tree dumps and progress their regex after)
_GATES: dict[str, tuple[str, ...]] = {
    "nccl.coll": (": opCount ", " [nranks=", " sendbuff "),
    "nccl.transport": ("] via ", "] -> ", "NCCL INFO Channel "),
}
# literals (spaces aside) that every line of a dense family holds, whatever the NCCL version: a scan keyed on
# one of them stops at every line of a log of that family (``extract.superset.scan_parts``)
EVERY_LINE = frozenset({
    "Channel", ":", "] ->", "] via", "via",  # Channel 00/0 : 0[0] -> 1[1] [send] via NET/IB/0/GDRDMA
    ": opCount", "sendbuff", "recvbuff", "count", "datatype", "op", "root", "comm", "[nranks=", "] stream",
    "stream",  # AllReduce: opCount 1f sendbuff 0x... recvbuff 0x... count 8 datatype 7 op 0 root 0 comm 0x... [nranks=8] stream 0x...
})
_GRAPH_GATE = ["NCCL INFO Channel ", "NCCL INFO Trees ", "NCCL INFO Ring ", "NCCL INFO Tree "]


def _candidates(rest: pl.DataFrame, fam: str) -> tuple[pl.DataFrame, pl.Series]:
    """The rows of ``rest`` that pass ``fam``'s gate, and the mask of them in ``rest``. A literal gate's rows
    carry ``_at``, where its first literal starts (``_family`` cuts the key from there)."""
    raw = pl.col("raw")
    if fam in _GATES:
        first, *others = _GATES[fam]
        at = rest.select(raw.str.find(first, literal=True)).to_series()
        mask = at.is_not_null()
        if others and mask.any():
            held = rest.filter(mask).select(pl.all_horizontal([raw.str.contains(t, literal=True) for t in others]))
            mask = mask.scatter(mask.arg_true(), held.to_series())  # the rows holding the first literal, narrowed
        return rest.with_columns(at.alias("_at")).filter(mask), mask
    if fam == "nccl.graph":
        mask = rest.select(raw.str.contains_any(_GRAPH_GATE)).to_series()
    else:
        mask = rest.select(raw.str.contains(PROGRESS_GATE)).to_series()
    return rest.filter(mask), mask


def _progress_shapes(df: pl.DataFrame) -> pl.DataFrame:
    """The rows of ``df`` that are a progress shape, with the shape's name as ``key``: the name the capturing
    ``PROGRESS`` gives, found by testing each shape alone on the rows holding its literal (a line two shapes
    match is captured)."""
    raw = df["raw"]
    hits = {}
    shapes = PROGRESS_SHAPES  # the shapes after the first are rare: one pass tells whether any literal of theirs is here
    if not raw.str.contains_any(_LATER_LITERALS).any():
        shapes = shapes[:1]
    for shape in shapes:
        literals = _SHAPE_LITERALS[shape]
        gate = raw.str.contains(literals[0], literal=True) if len(literals) == 1 else raw.str.contains_any(literals)
        if not gate.any():
            continue
        if gate.all():
            hit = raw.str.contains(_SHAPE_ONLY[shape])
        else:
            held = gate.arg_true()
            hit = gate.scatter(held, raw.gather(held).str.contains(_SHAPE_ONLY[shape]))
        if hit.any():
            hits[shape] = hit
    if len(hits) < 2:  # one shape in the block (the usual case): its rows, without combining masks
        shape, hit = next(iter(hits.items()), (None, pl.repeat(False, df.height, eager=True)))
        return df.filter(hit).with_columns(pl.lit(shape, pl.String).alias("key"))
    hits = pl.DataFrame({s: hits.get(s, pl.repeat(False, df.height, eager=True)) for s in PROGRESS_SHAPES})
    n = hits.select(pl.sum_horizontal(PROGRESS_SHAPES)).to_series()
    key = pl.when(n == 1).then(pl.coalesce([pl.when(pl.col(s)).then(pl.lit(s)) for s in PROGRESS_SHAPES]))
    rows = df.with_columns(hits.select(key.alias("key")).to_series())
    if (n > 1).any():  # a line two shapes match: the capture decides, as ``PROGRESS`` reads it
        shapes = pl.col("raw").str.extract_groups(PROGRESS)
        captured = pl.coalesce([pl.when(shapes.struct.field(s).is_not_null()).then(pl.lit(s)) for s in PROGRESS_SHAPES])
        rows = rows.with_columns(pl.when(pl.lit(n > 1)).then(captured).otherwise(pl.col("key")).alias("key"))
    return rows.filter(pl.col("key").is_not_null())


def _family(df: pl.DataFrame, fam: str) -> pl.DataFrame:
    """The candidate rows ``df`` of ``fam`` that are in it, with ``fam``, ``who`` and ``key`` columns."""
    columns = [c for c in df.columns if c != "_at"]
    raw = pl.col("raw")
    if fam == "nccl.transport":  # the text after the gate's "] via "
        rows = df.with_columns(raw.str.slice(pl.col("_at") + len(_GATES[fam][0])).alias("key"))
    elif fam == "nccl.coll":
        rows = df.with_columns(_after(raw, " comm ", " [nranks=").alias("key"))
    elif fam == "nccl.graph":
        rows = df.with_columns(raw.str.extract(GRAPH, 1).alias("key")).filter(pl.col("key").is_not_null())
    else:
        rows = _progress_shapes(df)
    if not rows.height:
        return df.clear().select(*columns, *(pl.lit(None, pl.String).alias(c) for c in ("fam", "who", "key")))
    rows = _who(rows, _TAG_WHO if fam == "progress" else _NCCL_WHO)
    return rows.select(*columns, pl.lit(fam).alias("fam"), "who", "key")


def classify(df: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame]:
    """(the dense rows of ``df`` with ``fam``, ``who`` and ``key`` columns, in row order; the other rows). ``df``
    has columns ``row``, ``line``, ``raw`` and maybe others. Each family's gate runs on the rows no earlier
    family took, its regex (if it needs one) on its candidates only."""
    parts, rest = [], df
    for fam in ("nccl.coll", "nccl.transport", "nccl.graph", "progress"):
        if not rest.height:
            break
        cand, mask = _candidates(rest, fam)
        if not cand.height:
            continue
        found = _family(cand, fam)
        if found.height == cand.height:
            rest = rest.filter(~mask)
        elif found.height:
            rest = rest.join(found.select("row"), on="row", how="anti", maintain_order="left")
        if found.height:
            parts.append(found)
    if not parts:
        return _family(df.clear(), "nccl.coll"), df
    return (pl.concat(parts).sort("row") if len(parts) > 1 else parts[0]), rest


def watched(dense: pl.DataFrame, watch: dict[str, str]) -> pl.DataFrame:
    """The dense rows that a pattern of their family's ``watch`` matches: these go to the parsers too."""
    if not dense.height or not watch:
        return dense.clear()
    parts = [dense.filter(pl.col("fam") == fam) for fam in watch]  # each family's regex on its own rows only
    parts = [p.filter(pl.col("raw").str.contains(watch[fam])) for fam, p in zip(watch, parts, strict=True) if p.height]
    return pl.concat(parts).sort("row") if parts else dense.clear()


def aggregate(dense: pl.DataFrame, by: tuple[str, ...] = ()) -> pl.DataFrame:
    """Per (``by``…, family, process, key): count, first and last line number and text (rows in line order)."""
    if not dense.height:
        return empty_partial({b: dense.schema[b] for b in by})
    raw = pl.col("raw")
    return (dense
            .group_by([*by, "fam", "who", "key"], maintain_order=True)
            .agg(pl.len().cast(pl.UInt32).alias("count"), pl.col("line").first().alias("first_line"),
                 pl.col("line").last().alias("last_line"), raw.first().alias("first_raw"),
                 raw.last().alias("last_raw")))


def owned(partial: pl.DataFrame) -> pl.DataFrame:
    """``partial`` with text of its own, to be kept while later blocks are read. A polars string is a view
    into the buffer it was cut from: a block's few groups (their process, key, first and last line) would
    keep the whole block alive, and a file's partials every block of it (one file of 1 GB peaked at
    1.4 GB). A partial has one row per group, so the copy is small; rebuilding it from Python values is a
    copy polars cannot elide."""
    return pl.DataFrame(partial.to_dict(as_series=False), schema=partial.schema)


def merge(partials: list[pl.DataFrame], by: tuple[str, ...] = ()) -> pl.DataFrame:
    """Partial aggregates of several blocks of one file (or batch) as one per group."""
    parts = [p for p in partials if p.height]
    if not parts:
        return empty_partial()
    if len(parts) == 1:
        return parts[0]
    return (pl.concat(parts).sort("first_line")
            .group_by([*by, "fam", "who", "key"], maintain_order=True)
            .agg(pl.col("count").sum(), pl.col("first_line").first(), pl.col("last_line").last(),
                 pl.col("first_raw").first(), pl.col("last_raw").last()))


def split(df: pl.DataFrame, watch: dict[str, str], by: tuple[str, ...] = (),
          keep_dense: bool = False) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    """``df`` (with ``row``) → (rows that are not dense, dense rows a pattern wants, partial summaries).
    With ``keep_dense`` the second item is every dense row, with its ``fam`` (the caller chooses)."""
    dense, rest = classify(df)
    if keep_dense:
        return (df if not dense.height else rest), dense, aggregate(dense, by)
    if not dense.height:
        return df, dense.select(df.columns), aggregate(dense, by)
    return rest, watched(dense, watch).select(df.columns), aggregate(dense, by)
