"""Dense families, summarised in polars: no line of theirs reaches per-line Python.

Lines a failed job prints by the million (shared/reference/nccl_logs.md §2) are NCCL transport
lines (``Channel 00/0 : 0[0] -> 1[1] [send] via NET/IB/0/GDRDMA``), ring and tree dumps, per-operation
lines of ``NCCL_DEBUG_SUBSYS=COLL`` (``AllReduce: opCount 1f sendbuff ... comm 0x... [nranks=8] stream
...``) and training progress (``step N``, Megatron ``iteration N/``, tqdm bars, HF Trainer dicts).
Each block's rows are classified by a literal gate and one regex per family, then aggregated per
(family, process, key) with ``group_by``: count, first and last line and their text. Only the first
and last rows of each group are parsed in Python, once per file (``parse.dense_rows``).

A dense line is also handed to the family parsers and rules when one of the patterns that could
match a line of its family (``watch``, built by ``dense_rows.watch_patterns``) matches it.
"""

from __future__ import annotations

import re

import polars as pl

# family → (literal gate, regex confirming the family: all of it, or only the rows its gate leaves ambiguous)
_KV = r"(?:[\s,|]+[\w/.()-]+(?:[:=]\s*|\s+)[-+]?(?:[\d.]+(?:[eE][-+]?\d+)?|nan|inf|NaN|Inf)%?)"
TRANSPORT = (r"NCCL INFO Channel \d+(?:/\d+)? : \d+\[[0-9a-f]+\] -> \d+\[[0-9a-f]+\] "
             r"(?:\[(?:send|receive)\] )?via \S")
GRAPH = r"NCCL INFO (Trees|Ring|Tree|Channel) (?:\[\d+\] |\d+ : -?\d+ -> |\d+/\d+ :(?: +\d+)+(?: ?\.\.\.)?\s*$)"
COLL = (r"NCCL (?:INFO|TRACE) \w+: opCount [0-9a-f]+ sendbuff \S+ recvbuff \S+ count \d+ datatype \d+ op \d+ "
        r"root -?\d+ comm \S+ \[nranks=\d+\]")
PROGRESS_GATE = r"[Ss]tep|STEP|iteration|it/s[\],]|s/it[\],]|\{'"
# the whole line after launcher prefixes is the shape: an error that names a step is not progress
PROGRESS = (r"^(?:\s*(?:\[[^\]]*\](?:<\w+>)?:?|\([^)]*\)|\d+:|[a-z_][\w.-]*:|\d{4}-\d\d-\d\d[T ][\d:.,]+Z?"
            r"|(?:INFO|WARNING|DEBUG)\b:?|[IWD]\d{4} [\d:.]+ +\d+ [\w.]+:\d+\]|-|\|))*\s*"
            r"(?:(?P<step>(?:[Ss]tep|STEP)(?:[\s:=\[]+)\d+(?:/\d+)?\]?" + _KV + r"*)"
            r"|(?P<iteration>iteration\s+\d+\s*/\s*\d+\s*\|(?:\s*[\w\s()/.-]+:\s*[-+\w.]+\s*\|)*)"
            r"|(?P<tqdm>(?:[\w\s.-]+:\s*)?\d+%\|[^|]*\|\s*\d+/\d+ \[[\d:]+<[\d:?]+,\s*[\d.?]+\s?(?:it/s|s/it)"
            r"(?:,[^\]]*)?\])"
            r"|(?P<hf>\{'\w+': [-+\w.]+(?:, '\w+': [-+\w.]+)*\}))\s*$")
PROGRESS_SHAPES = ("step", "iteration", "tqdm", "hf")
FAMILIES = ("nccl.transport", "nccl.graph", "nccl.coll", "progress")
# NCCL lines: the process that wrote them (host:pid); progress: the launcher's rank tag, if any
_NCCL_WHO = r"([^\s:\[\]]+:\d+:)\d+ \["
_TAG_WHO = r"(\[(?:rank|default)\d+\]|\[\d+,\d+\]<|^\s*\d+: |\(\w+ pid=\d+)"
KEY_REGEX = r": opCount |\] via |NCCL INFO (?:Channel|Trees|Ring|Tree) |" + PROGRESS_GATE

_PARTIAL = {"fam": pl.String, "who": pl.String, "key": pl.String, "count": pl.UInt32, "first_line": pl.UInt32,
            "last_line": pl.UInt32, "first_raw": pl.String, "last_raw": pl.String}


def empty_partial(extra: dict | None = None) -> pl.DataFrame:
    return pl.DataFrame(schema={**(extra or {}), **_PARTIAL})


def _after(raw: pl.Expr, start: str, stop: str | None = None) -> pl.Expr:
    """The text after the first ``start`` (up to the next ``stop``): literal searches and a slice, no regex."""
    a = raw.str.find(start, literal=True) + len(start)
    if stop is None:
        return raw.str.slice(a)
    b = raw.str.find(stop, literal=True)
    return raw.str.slice(a, b - a)


def _who(rows: pl.DataFrame, regex: str) -> pl.Expr:
    """The process (or rank tag) of each row: when every row starts as the first one does (one process
    per file, the usual case), that one without a regex; else extracted row by row."""
    first = re.match(regex, rows["raw"][0])
    if first is not None and rows.select(pl.col("raw").str.starts_with(first.group(1)).all()).item():
        return pl.lit(first.group(1))
    return pl.col("raw").str.extract(regex, 1).fill_null("")


def _family(df: pl.DataFrame, fam: str) -> pl.DataFrame:
    """The rows of ``df`` in ``fam``, with ``fam``, ``who`` and ``key`` columns."""
    raw = pl.col("raw")
    if fam == "nccl.transport":
        rows = df.filter(raw.str.contains("] via ", literal=True)).filter(raw.str.contains(TRANSPORT))
        key = _after(raw, "] via ")
    elif fam == "nccl.graph":
        rows = df.filter(raw.str.contains("NCCL INFO (?:Channel|Trees|Ring|Tree) ")).filter(raw.str.contains(GRAPH))
        key = raw.str.extract(GRAPH, 1)
    elif fam == "nccl.coll":
        rows = df.filter(raw.str.contains(": opCount ", literal=True)).filter(raw.str.contains(COLL))
        key = _after(raw, " comm ", " [nranks=")
    else:
        rows = df.filter(raw.str.contains(PROGRESS_GATE))
        shapes = raw.str.extract_groups(PROGRESS)
        key = pl.coalesce([pl.when(shapes.struct.field(s).is_not_null()).then(pl.lit(s)) for s in PROGRESS_SHAPES])
        rows = rows.with_columns(key.alias("key")).filter(pl.col("key").is_not_null())
        key = pl.col("key")
    if not rows.height:
        return df.clear().with_columns(*(pl.lit(None, pl.String).alias(c) for c in ("fam", "who", "key")))
    who = _who(rows, _TAG_WHO if fam == "progress" else _NCCL_WHO)
    return rows.select(*df.columns, pl.lit(fam).alias("fam"), who.alias("who"), key.alias("key"))


def classify(df: pl.DataFrame) -> pl.DataFrame:
    """The dense rows of ``df`` (columns ``row``, ``line``, ``raw`` and any others) with ``fam``, ``who`` and
    ``key``, in row order. Each family: a literal gate first (memmem), its regex on the rows that passed."""
    parts = []
    rest = df
    for fam in FAMILIES:
        found = _family(rest, fam)
        if found.height:
            parts.append(found)
            rest = rest.join(found.select("row"), on="row", how="anti", maintain_order="left")
    if not parts:
        return _family(df.clear(), "nccl.coll")
    return pl.concat(parts).sort("row") if len(parts) > 1 else parts[0]


def watched(dense: pl.DataFrame, watch: dict[str, str]) -> pl.DataFrame:
    """The dense rows that a pattern of their family's ``watch`` matches: these go to the parsers too."""
    if not dense.height or not watch:
        return dense.clear()
    cond = pl.lit(False)
    for fam, regex in watch.items():
        cond = cond | ((pl.col("fam") == fam) & pl.col("raw").str.contains(regex))
    return dense.filter(cond)


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


def split(df: pl.DataFrame, watch: dict[str, str], by: tuple[str, ...] = ()) -> tuple[pl.DataFrame, pl.DataFrame,
                                                                                   pl.DataFrame]:
    """``df`` (with ``row``) → (rows that are not dense, dense rows a pattern wants, partial summaries)."""
    dense = classify(df)
    if not dense.height:
        return df, dense.select(df.columns), aggregate(dense, by)
    rest = df.join(dense.select("row"), on="row", how="anti", maintain_order="left")
    return rest, watched(dense, watch).select(df.columns), aggregate(dense, by)
