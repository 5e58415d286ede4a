"""A traceback cut before its exception line takes the exception of the same traceback printed whole.

Pastes cut tracebacks (a reporter copies one rank's traceback whole and the next one's first frames), and
interleaved output garbles them. A cut traceback says that its rank raised, not what. When another traceback of
the same job ran through every frame the cut one shows (at least ``MIN_FRAMES``), in the same order, and every such
traceback ended in the same exception, the cut one is that exception too: the ranks ran the same code to the same
failure (every rank indexing one dataset, every rank loading one missing checkpoint). Its ``detail`` says where the
exception was read from; a cut traceback that matches none, or tracebacks that disagree, stays unread.
"""

from __future__ import annotations

import polars as pl

from nccllens.parse.tracebacks import traceback_frames

MIN_FRAMES = 2  # frames a cut traceback must show to be matched (one frame, ``<module>``, is every traceback's)
_KIND = "python.traceback"


def _within(part: list[str], whole: list[str]) -> bool:
    """Are the frames of ``part`` all in ``whole``, in the same order?"""
    it = iter(whole)
    return all(any(f == g for g in it) for f in part)


def complete_cut_tracebacks(events: pl.DataFrame) -> pl.DataFrame:
    """``events`` with each cut traceback's ``exc_type`` and ``message`` read from the whole ones it matches."""
    if not events.height or "exc_type" not in events.columns:
        return events
    tracebacks = events.with_row_index("_row").filter(pl.col("kind") == _KIND)
    cut = tracebacks.filter(pl.col("exc_type").is_null())
    whole = tracebacks.filter(pl.col("exc_type").is_not_null())
    if not cut.height or not whole.height:
        return events
    known = [(traceback_frames(d), str(t), m, f, n) for d, t, m, f, n in whole.select(
        "detail", "exc_type", "message", "file", "line").iter_rows()]
    rows, types, messages, details = [], [], [], []
    for row, detail in cut.select("_row", "detail").iter_rows():
        frames = traceback_frames(detail)
        if len(frames) < MIN_FRAMES:
            continue
        found = [k for k in known if _within(frames, k[0])]
        if not found or len({k[1] for k in found}) != 1:
            continue
        _, exc_type, message, file, line = found[0]
        rows.append(row)
        types.append(exc_type)
        messages.append(message)
        details.append(f"{detail}\ncut: its exception read from the same traceback at {file}:{line}")
    if not rows:
        return events
    filled = pl.DataFrame({"_row": pl.Series(rows, dtype=pl.UInt32), "_type": types, "_message": messages,
                           "_detail": details})
    out = events.with_row_index("_row").join(filled, on="_row", how="left", maintain_order="left")
    return out.with_columns(
        pl.coalesce(pl.col("_type").cast(events.schema["exc_type"]), "exc_type").alias("exc_type"),
        pl.coalesce("_message", "message").alias("message"),
        pl.coalesce("_detail", "detail").alias("detail"),
    ).drop("_row", "_type", "_message", "_detail")
