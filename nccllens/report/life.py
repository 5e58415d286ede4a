"""The last sign of life of each rank, for hangs: when it last logged, its last collective, and how
long before the first watchdog timeout that was ("rank 3 last logged at 01:30:12, SeqNum 41, 70 min
before the first watchdog timeout"). The suspects (the ranks that went quiet first) are named; the
others are one line with their spread."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from nccllens.engine.wording import spoken_duration
from nccllens.rank_ranges import compact_ranks
from nccllens.repeats import latest
from nccllens.report.model import RankStatus, Report

SUSPECTS = 3
QUIET_GAP = 10.0  # seconds: a rank whose last line is this much before the others' went quiet first


def mark_last_seen(ranks: list[RankStatus], events) -> None:
    """Fill each rank's ``last_seen``: the time of its last timestamped line in ``events``."""
    if events is None or not getattr(events, "height", 0) or not ranks:
        return
    import polars as pl

    seen = (events.filter(pl.col("rank").is_not_null() & pl.col("ts").is_not_null())
            .group_by("rank").agg(latest()))
    last = {int(r): ts for r, ts in seen.iter_rows()}
    for status in ranks:
        ts = last.get(status.rank)
        if ts is not None:
            status.last_seen = ts.isoformat(timespec="seconds")


def _when(iso: str) -> datetime | None:
    try:
        return datetime.fromisoformat(iso)
    except (TypeError, ValueError):
        return None


def first_timeout(report: Report) -> datetime | None:
    times = [_when(f.first_seen) for f in report.findings if f.category == "collective_timeout" and f.first_seen]
    times = [t for t in times if t is not None]
    return min(times) if times else None


HANG_VERDICTS = ("unknown", "collective_timeout", "rank_divergence", "straggler")


def hang_start(report: Report) -> tuple[datetime, datetime, float] | None:
    """(estimated start, first watchdog time, its timeout in ms): the watchdog fires a timeout after
    the collective that never finished began, so the hang began about that long before."""
    events = report.events
    if events is None or not getattr(events, "height", 0) or "timeout_ms" not in events.columns:
        return None
    import polars as pl

    fired = (events.filter((pl.col("kind") == "torch.watchdog_timeout") & pl.col("ts").is_not_null()
                           & pl.col("timeout_ms").is_not_null()).sort("ts").head(1))
    if not fired.height:
        return None
    ts, timeout = fired["ts"][0], float(fired["timeout_ms"][0])
    return ts - timedelta(milliseconds=timeout), ts, timeout


def is_hang(report: Report) -> bool:
    """A job that stopped making progress: timeouts, and no crash named as the cause."""
    timed_out = any(r.state == "timed_out" for r in report.ranks) or first_timeout(report) is not None
    return timed_out and report.verdict.category in HANG_VERDICTS


@dataclass
class Sign:
    """The last sign of life of some ranks on a host."""

    ranks: list[int]
    host: str | None
    last_seen: datetime
    last_seq: int | None
    last_op: str | None


def signs(report: Report) -> tuple[list[Sign], list[Sign]]:
    """(suspects, the others): suspects are the ranks that went quiet first (by QUIET_GAP)."""
    seen = sorted(((r, _when(r.last_seen)) for r in report.ranks if r.last_seen), key=lambda p: (p[1], p[0].rank))
    seen = [(r, t) for r, t in seen if t is not None]
    if len(seen) < 2:
        return [Sign([r.rank], r.host, t, r.last_seq, r.last_op) for r, t in seen], []
    latest = seen[-1][1]
    quiet = [(r, t) for r, t in seen if (latest - t).total_seconds() >= QUIET_GAP][:SUSPECTS]
    named = {r.rank for r, _ in quiet}
    rest = [(r, t) for r, t in seen if r.rank not in named]
    suspects = [Sign([r.rank], r.host, t, r.last_seq, r.last_op) for r, t in quiet]
    others = [Sign(sorted(r.rank for r, _ in rest), None, rest[0][1], None, None),
              Sign([], None, rest[-1][1], None, None)] if rest else []
    return suspects, others


def _clock(t: datetime) -> str:
    return t.isoformat(timespec="seconds")


def life_lines(report: Report, lang: str) -> list[str]:
    """The view's lines (empty when the report is not a hang or no rank has a timestamp)."""
    if not is_hang(report):
        return []
    zh = lang == "zh"
    suspects, others = signs(report)
    watchdog = first_timeout(report)
    never = sorted(r.rank for r in report.ranks if r.state == "never_seen")
    out = [f"rank {compact_ranks(never)}：没有读到它们的任何一行日志" if zh else
           f"rank(s) {compact_ranks(never)}: no line of theirs was read"] if never else []
    for s in suspects:
        where = f"（{s.host}）" if zh and s.host else (f" ({s.host})" if s.host else "")
        seq = ""
        if s.last_seq is not None:
            op = f" {s.last_op}" if s.last_op else ""
            seq = f"，最后的集合通信 SeqNum {s.last_seq}{op}" if zh else f", last collective SeqNum {s.last_seq}{op}"
        before = ""
        if watchdog is not None and (watchdog - s.last_seen).total_seconds() >= QUIET_GAP:
            gap = spoken_duration((watchdog - s.last_seen).total_seconds() * 1000, zh)
            before = (f"，比第一个 watchdog 超时（{_clock(watchdog)}）早 {gap}" if zh else
                      f", {gap} before the first watchdog timeout ({_clock(watchdog)})")
        out.append(f"rank {s.ranks[0]}{where or ' '}最后一条日志在 {_clock(s.last_seen)}{seq}{before}" if zh else
                   f"rank {s.ranks[0]}{where} last logged at {_clock(s.last_seen)}{seq}{before}")
    if others:
        first, last = others[0].last_seen, others[1].last_seen
        ranks = compact_ranks(others[0].ranks)
        span = _clock(first) if first == last else f"{_clock(first)} – {_clock(last)}"
        if suspects or never:
            out.append(f"其余 rank {ranks} 的最后一条日志在 {span}" if zh else f"the other ranks ({ranks}) last logged {span}")
        else:
            out.append(f"rank {ranks} 的最后一条日志都在 {span}" if zh else f"ranks {ranks} all last logged {span}")
    start = hang_start(report)
    if start is not None:
        began, fired, timeout = start
        took = spoken_duration(timeout, zh)
        out.append(f"卡住大约从 {_clock(began)} 开始（第一个 watchdog 超时在 {_clock(fired)}，超时时间 {took}）" if zh else
                   f"the hang began about {_clock(began)} (the first watchdog timeout, at {_clock(fired)}, "
                   f"waited {took})")
    return out


def year_guessed(events) -> bool:
    """Whether the times a report shows carry a guessed year: some line gave a time without a year
    (``ts_kind`` ``no_year``) and no line of the job stated one to take it from (``timeline._fix_years``)."""
    import polars as pl

    if events is None or not getattr(events, "height", 0) or "ts_kind" not in events.columns:
        return False
    dated = events.filter(pl.col("ts").is_not_null())
    kinds = set(dated["ts_kind"].cast(pl.String).drop_nulls().unique().to_list())
    return "no_year" in kinds and "absolute" not in kinds
