"""What a file's own lines say of all of them (``parse.file_facts``), read from polars columns.

``file_facts`` looks closer at the few sample lines that hold a hint's text (``FACT_HINTS``) in its window,
and at the lengths of every sample line (a terminal's wrap width). Both are found here in polars: for one
file (``with_file_facts``), or for every file of a batch in one pass (``facts_of_files``), since a pass
per file costs more than its lines on the small files of a batch.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import polars as pl

from nccllens.ingest.layout import PathHints
from nccllens.parse.file_facts import FACT_HINTS, WRAP_MIN, FileFacts, file_facts, stated_host
from nccllens.parse.prefixes import SAMPLE

_RAW = pl.col("raw")
_META = set("\\.+*?()|[]{}^$#&-~")
# a hint's text anywhere in the line first (no slicing), then its window on the few lines that hold one
_ANYWHERE = _RAW.str.contains("|".join("".join("\\" + c if c in _META else c for c in text) for text, _, _ in FACT_HINTS))
_IN_WINDOW = pl.any_horizontal([(_RAW.str.slice(start, None if stop is None else stop - start) if start or stop
                                 else _RAW).str.contains(text, literal=True) for text, start, stop in FACT_HINTS])


class _Lazy:
    """A column's lines as a list only when ``file_facts`` needs all of them (a candidate leading segment)."""

    def __init__(self, series: pl.Series):
        self.series, self.items = series, None

    def __getitem__(self, index):
        if isinstance(index, slice) and index.start is None and (index.stop or 0) >= self.series.len():
            return self  # the sample is the whole column already
        return self._list()[index]

    def __iter__(self):
        return iter(self._list())

    def _list(self) -> list[str]:
        if self.items is None:
            self.items = self.series.to_list()
        return self.items


def facts_of_files(raw: pl.Series, bounds: Sequence[tuple[int, int]]) -> list[FileFacts]:
    """``file_facts`` of each file whose lines are rows ``start`` to ``end`` of ``raw`` (``bounds``)."""
    spans = [(a, max(0, min(b - a, SAMPLE))) for a, b in bounds]
    if not spans:
        return []
    sample = pl.concat([raw.slice(a, n) for a, n in spans]) if len(spans) > 1 else raw.slice(*spans[0])
    owner = pl.DataFrame({"owner": range(len(spans)), "n": [n for _, n in spans]}, schema={
        "owner": pl.UInt32, "n": pl.UInt32}).filter(pl.col("n") > 0).select(pl.col("owner").repeat_by("n").explode())
    marks = owner.with_columns(sample.rename("raw")).with_columns(_ANYWHERE.alias("any"),
                                                                       _RAW.str.len_chars().alias("n"))
    n = pl.col("n")
    widths = dict(((k, (w, c)) for k, w, c in marks.group_by("owner").agg(
        n.max().alias("w"), (n == n.max()).sum().alias("c")).iter_rows()))
    held = marks.filter("any").select("owner", "raw")
    picked: dict[int, list[str]] = {}
    if held.height:
        for k, text in held.filter(held.select(_IN_WINDOW).to_series()).iter_rows():
            picked.setdefault(k, []).append(text)
    out = []
    for k, (a, m) in enumerate(spans):
        width, count = widths.get(k, (None, 0))
        wrap = width if width is not None and width >= WRAP_MIN and count >= 2 else None
        out.append(file_facts(_Lazy(raw.slice(a, m)), picked.get(k, []), wrap))
    return out


def with_facts(hints: PathHints, facts: FileFacts) -> PathHints:
    """``hints`` with what ``facts`` say of every line of the file."""
    if not facts.leads and facts.host is None and facts.rank is None and facts.wrap is None and not facts.host_marks:
        return hints
    return replace(hints, leads=facts.leads, line_host=facts.host, host_marks=facts.host_marks,
                   line_rank=facts.rank, wrap=facts.wrap)


def with_file_facts(hints: PathHints, raws) -> PathHints:
    """``hints`` with what the file's own lines (``raws``: a sequence or polars Series of its raw lines) say of
    all of them: repeating leading segments, and the host its shell prompts name."""
    if isinstance(raws, pl.Series):
        return with_facts(hints, facts_of_files(raws, [(0, raws.len())])[0])
    return with_facts(hints, file_facts(raws))


_STATES_HOST = "ostname|Host name|JobEnvironment\\("


def stated_host_of(raw: pl.Series) -> str | None:
    """``stated_host`` of a file's first ``SAMPLE`` lines (``raw``), only the lines that may state one in Python."""
    head = raw.head(SAMPLE)
    return stated_host(head.filter(head.str.contains(_STATES_HOST)).to_list())
