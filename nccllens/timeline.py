"""Make timestamps of different styles comparable, and say how far they can be trusted.

- ``no_year`` (glog ``MMDD``, syslog ``Mon DD``): the parser guessed the year from the file's
  modification time; when the same job printed absolute timestamps elsewhere (torchrun failure
  tables ``%Y-%m-%d_%H:%M:%S``, kubectl/ISO prefixes, flight-recorder wall clocks) their year wins,
  with a December/January wrap.
- ``boot`` (dmesg seconds since boot, in ``ts_rel``): anchored when a line of the same file also
  states a wall clock (kern.log/journal lines carry both), or when the same kernel message appears
  with a wall clock in another file of the same host (a ``dmesg -T`` twin). Otherwise ``ts`` stays
  null and :func:`clock_notes` says so.

Everything is vectorised; ``normalize`` is idempotent and keeps the schema.
"""

from __future__ import annotations

import weakref
from datetime import datetime

import polars as pl

HALF_YEAR_DAYS = 183
MAX_UPTIME_S = 100 * 366 * 86400  # seconds since boot beyond a century are not a clock: left unanchored


# the range a report can show (Python's datetime); a time moved outside it (a year-9999 clock and a
# December/January wrap, a boot time before year 1) is unknown, not a traceback
EARLIEST, LATEST = datetime(1, 1, 2), datetime(9999, 12, 30)


def representable(events: pl.DataFrame) -> pl.DataFrame:
    """``ts`` set to null where it left the range a report can show."""
    ts = pl.col("ts")
    if events.filter(ts.is_not_null() & ~ts.is_between(EARLIEST, LATEST)).height == 0:
        return events
    return events.with_columns(pl.when(ts.is_between(EARLIEST, LATEST)).then(ts).alias("ts"))


def _since_boot() -> pl.Expr:
    """``ts_rel`` as a duration; null when it cannot be one (negative, NaN, or overflowing)."""
    rel = pl.col("ts_rel")
    micros = pl.when(rel.is_between(0, MAX_UPTIME_S)).then((rel * 1e6).cast(pl.Int64, strict=False))
    return pl.duration(microseconds=micros)


def _reference_year(events: pl.DataFrame) -> int | None:
    absolute = events.filter((pl.col("ts_kind") == "absolute") & pl.col("ts").is_not_null())
    if not absolute.height:
        return None
    years = absolute["ts"].dt.year()
    return int(years.mode().sort()[-1])


def _fix_years(events: pl.DataFrame, year: int) -> pl.DataFrame:
    ts = pl.col("ts")
    moved = pl.datetime(pl.lit(year), ts.dt.month(), ts.dt.day(), ts.dt.hour(), ts.dt.minute(), ts.dt.second(),
                        ts.dt.microsecond(), time_unit="us")
    anchor = events.filter(pl.col("ts_kind") == "absolute")["ts"].drop_nulls().median()
    fixed = moved
    if anchor is not None:
        days = (moved - pl.lit(anchor)).dt.total_days()
        fixed = (pl.when(days > HALF_YEAR_DAYS).then(moved.dt.offset_by("-1y"))
                 .when(days < -HALF_YEAR_DAYS).then(moved.dt.offset_by("1y")).otherwise(moved))
    return events.with_columns(
        pl.when((pl.col("ts_kind") == "no_year") & ts.is_not_null()).then(fixed).otherwise(ts).alias("ts"))


def _boot_offsets(events: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Per file and per host: wall-clock time of boot (ts - ts_rel), median over matching lines."""
    both = events.filter(pl.col("ts_rel").is_not_null() & pl.col("ts").is_not_null()
                         & (pl.col("ts_kind") == "boot"))
    boot = pl.col("ts") - _since_boot()
    per_file = both.group_by("file").agg(boot.median().alias("boot_file"))
    unanchored = events.filter(pl.col("ts_rel").is_not_null() & pl.col("ts").is_null()
                               & (pl.col("ts_kind") == "boot") & pl.col("host").is_not_null())
    walls = events.filter(pl.col("ts").is_not_null() & pl.col("ts_rel").is_null() & (pl.col("family") == "kernel")
                          & pl.col("host").is_not_null()).select("host", "message", pl.col("ts").alias("wall"))
    twins = unanchored.select("host", "message", "ts_rel").join(walls, on=["host", "message"], how="inner")
    twin_boot = pl.col("wall") - _since_boot()
    per_host = twins.group_by("host").agg(twin_boot.median().alias("boot_host"))
    return per_file, per_host


def _anchor_boot(events: pl.DataFrame) -> pl.DataFrame:
    if not events.filter(pl.col("ts_kind") == "boot").height:
        return events
    per_file, per_host = _boot_offsets(events)
    out = events.join(per_file, on="file", how="left").join(per_host, on="host", how="left")
    offset = _since_boot()
    anchored = pl.coalesce(pl.col("boot_file"), pl.col("boot_host")) + offset
    out = out.with_columns(
        pl.when((pl.col("ts_kind") == "boot") & pl.col("ts").is_null() & pl.col("ts_rel").is_not_null())
        .then(anchored).otherwise(pl.col("ts")).alias("ts"))
    return out.select(events.columns)


# the tables ``normalize`` returned, weakly: the analyses each normalize the table they are given, and a
# table normalized once (run_analysis does it first) is not worked on again (six passes took 0.12 s on
# 4,096 ranks). Keyed by id, checked by identity: an id reused by a new table is not mistaken for it.
_NORMALIZED: weakref.WeakValueDictionary[int, pl.DataFrame] = weakref.WeakValueDictionary()


def normalize(events: pl.DataFrame) -> pl.DataFrame:
    """The same events with comparable ``ts`` (see module docstring)."""
    if _NORMALIZED.get(id(events)) is events:
        return events
    out = _normalized(events)
    _NORMALIZED[id(out)] = out
    return out


def _normalized(events: pl.DataFrame) -> pl.DataFrame:
    if not events.height:
        return events
    stated = events["ts"]
    year = _reference_year(events)
    if year is not None and events.filter(pl.col("ts_kind") == "no_year").height:
        events = _fix_years(events, year)
    out = representable(_anchor_boot(events))
    if "last_ts" in out.columns and out["last_ts"].is_not_null().any():  # a repeated event's last time moves with its first
        out = out.with_columns((pl.col("last_ts") + (pl.col("ts") - stated)).alias("last_ts"))
    return out


def clock_notes(events: pl.DataFrame, lang: str = "en") -> list[str]:
    """One note per host whose times are uncertain, plus one when hosts' clocks are compared."""
    if not events.height:
        return []
    zh = lang == "zh"
    notes: list[str] = []
    styles = (events.filter(pl.col("ts_kind").is_not_null())
              .group_by("host").agg(pl.col("ts_kind").unique().sort().alias("kinds"),
                                    (pl.col("ts_kind").eq("boot") & pl.col("ts").is_null()).sum().alias("loose"))
              .sort("host", nulls_last=True))
    has_absolute = events.filter(pl.col("ts_kind") == "absolute").height > 0
    for row in styles.iter_rows(named=True):
        host = row["host"] or ("未知主机" if zh else "unknown host")
        if row["loose"]:
            notes.append(f"{host}：{row['loose']} 条内核日志只有开机秒数（dmesg），无法与其他日志对齐时间" if zh else
                         f"{host}: {row['loose']} kernel line(s) carry only seconds since boot (dmesg) and nothing "
                         "anchors them to the wall clock; they are not ordered against other logs")
        if "no_year" in row["kinds"] and not has_absolute:
            notes.append(f"{host}：时间戳没有年份，年份为推测值" if zh else
                         f"{host}: timestamps print no year; the year is a guess from the file date")
    hosts = styles["host"].drop_nulls().n_unique()
    if hosts > 1:
        notes.append("不同主机的时钟未必同步：跨主机相差一秒以内的先后顺序不可靠" if zh else
                     "clocks of different hosts are not known to be synchronised: a cross-host order "
                     "within about a second is uncertain")
    return notes
