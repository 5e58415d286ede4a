"""Progress bars as signs of life while other ranks wait: which bars were still moving, and whose.

A bar is read from a ``progress.bar``/``progress.count`` event, from the front of another writer's message it
was glued to (tqdm redraws without a newline; the next writer's line starts right after it, sometimes before
the bar's own counts), or from the last row of a tqdm bar the dense progress family summarised. tqdm rounds
its percent (497/499 shows 100%): the counts decide whether it was done.
"""

from __future__ import annotations

import polars as pl

from nccllens.parse.progress import CUT_BAR, bar_detail, last_bar

WAIT_KINDS = ("torch.watchdog_timeout", "torch.store_timeout", "torch.gloo_error", "torch.monitored_barrier")
# how a waiting rank fails once its wait times out: lines that say nothing of what the others did
FAILING_WAIT = (*WAIT_KINDS, "torch.taking_down", "torch.watchdog_exception", "cpp.terminate", "other.file_end")


def _bar_row(file, line, ts, rank, m, detail: str) -> dict:
    """One bar state from a ``BAR``/``CUT_BAR`` match: its label, percent, the counts shown, the bar's text."""
    return {"file": file, "line": line, "ts": ts, "rank": rank, "label": m["desc"].strip().strip(":").strip() or None,
            "pct": int(m["pct"]), "detail": detail, "message": m.group(0)}


def _summary_bars(summaries: pl.DataFrame | None) -> list[dict]:
    """The last state of each tqdm bar the dense progress family summarised (one row per process and shape)."""
    if summaries is None or not summaries.height:
        return []
    rows = summaries.filter((pl.col("family").cast(pl.String) == "progress") & (pl.col("key") == "tqdm"))
    out = []
    for file, line, ts, rank, raw in rows.select("file", "last_line", "last_ts", "rank", "raw").iter_rows():
        m = last_bar(raw or "")
        if m:
            out.append(_bar_row(file, line, ts, rank, m, bar_detail(m)))
    return out


def bars_of(events: pl.DataFrame, waiting: set[int], summaries: pl.DataFrame | None = None) -> pl.DataFrame:
    """The last state of every progress bar: its rank (None when it has no rank of its own or names a
    waiting rank: a rank blocked in a wait moves no bar), label, percent, counts. Bars glued in front of
    another writer's message (``...[29:55<4:48:08, 155.57 examples/s][E ProcessGroupNCCL.cpp:475] [Rank 2]``)
    are read from that message and have no rank."""
    own = events.filter(pl.col("kind").is_in(["progress.bar", "progress.count"])).select(
        "file", "line", "ts", "rank", pl.col("key").alias("label"), pl.col("value").cast(pl.Int64, strict=False).alias("pct"),
        "detail", "message")
    glued_rows = events.filter((pl.col("kind") != "progress.bar")
                               & pl.col("message").fill_null("").str.contains(r"\d%\||\d task/s, elapsed: \d+s"))
    glued = []
    for file, line, ts, message in glued_rows.select("file", "line", "ts", "message").iter_rows():
        m = last_bar(message)
        if m and m.end() < len(message):  # another message follows the bar on this line
            glued.append(_bar_row(file, line, ts, None, m, bar_detail(m)))
        elif m is None and (cut := CUT_BAR.match(message)):  # cut off by the message that follows it
            glued.append(_bar_row(file, line, ts, None, cut, ""))
    glued += _summary_bars(summaries)
    if glued:
        own = pl.concat([own, pl.DataFrame(glued, schema=own.schema)], how="vertical_relaxed")
    if not own.height:
        return own
    own = own.with_columns(pl.when(pl.col("rank").is_in(sorted(waiting))).then(None).otherwise(pl.col("rank"))
                           .alias("rank"))
    # tqdm rounds its percent: 497/499 shows 100%; the counts say whether the bar was done
    counts = pl.col("detail").fill_null("").str.extract_groups(r"^(\d+)/(\d+)\b")
    short = counts.struct.field("1").cast(pl.Int64, strict=False) < counts.struct.field("2").cast(pl.Int64, strict=False)
    own = own.sort(["file", "line"]).with_columns(((pl.col("pct") < 100) | short.fill_null(False)).alias("open"))
    # a bar is busy when its last state is incomplete; every incomplete state of a busy bar is kept (to show)
    last = own.unique(["rank", "label"], keep="last", maintain_order=True).filter("open")
    return own.join(last.select("rank", "label"), on=["rank", "label"], how="semi", nulls_equal=True)


def still_moving(bars: pl.DataFrame, waits: pl.DataFrame, events: pl.DataFrame) -> pl.DataFrame:
    """Bars still moving when the others gave up: printed at or after the first wait line of their file, or
    as the last thing the file printed before it (the waiting ranks' own way of failing aside: a bar cut off
    by ``terminate called ...`` was drawn as the wait failed), or (with times) after the wait began."""
    first_line = dict(waits.group_by("file").agg(pl.col("line").min()).iter_rows())
    began = waits.select((pl.col("ts") - pl.duration(milliseconds=pl.col("timeout_ms").fill_null(0))).min()).item()
    last_before: dict = {}  # file -> the line of its last bar before the first wait, if nothing came between
    for f, wait in first_line.items():
        before = bars.filter((pl.col("file") == f) & (pl.col("line") < wait))["line"]
        if len(before):
            line = before.max()
            between = events.filter((pl.col("file") == f) & (pl.col("line") > line) & (pl.col("line") < wait)
                                    & ~pl.col("kind").is_in(FAILING_WAIT))
            if not between.height:
                last_before[f] = line
    keep = []
    for f, line, ts in bars.select("file", "line", "ts").iter_rows():
        wait = first_line.get(f)
        if wait is not None and line < wait:
            keep.append(last_before.get(f) == line)
        else:
            keep.append(wait is not None or (began is not None and ts is not None and ts >= began))
    return bars.filter(pl.Series(keep, dtype=pl.Boolean))
