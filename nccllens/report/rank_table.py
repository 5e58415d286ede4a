"""``nccllens ranks``: one line per group of consecutive ranks in the same state (readable at 4,096 ranks)."""

from __future__ import annotations

import json

from nccllens.repeats import latest
from nccllens.report.model import RankStatus, Report
from nccllens.report.view import top_finding

COLUMNS = ("ranks", "host", "state", "culprit", "exit", "last seq", "done", "op", "last seen", "first error")
COLUMNS_ZH = ("rank", "节点", "状态", "故障源", "退出", "最后序号", "已完成", "操作", "最后活动", "首个错误")


def culprits(report: Report) -> set[int]:
    top = top_finding(report)
    return set(top.ranks) if top is not None and top.role == "cause" else set()


def last_seen(report: Report) -> dict[int, str]:
    """Each rank's last timestamped line (ISO 8601), as the report says, else from its event table."""
    said = {r.rank: r.last_seen for r in report.ranks if r.last_seen}
    if said:
        return said
    events = report.events
    if events is None or not getattr(events, "height", 0):
        return {}
    import polars as pl

    seen = (events.filter(pl.col("rank").is_not_null() & pl.col("ts").is_not_null())
            .group_by("rank").agg(latest()))
    return {int(r): ts.isoformat() for r, ts in seen.iter_rows()}


def _key(s: RankStatus, culprit: set[int] = frozenset()) -> tuple:
    exit_text = s.signal or (str(s.exit_code) if s.exit_code is not None else "")
    return (s.host or "", s.state, "yes" if s.rank in culprit else "", exit_text, s.last_seq, s.last_completed,
            s.last_op or "")


def _span(first: int, last: int) -> str:
    return str(first) if first == last else f"{first}-{last}"


def groups(ranks: list[RankStatus], culprit: set[int] = frozenset(),
           seen: dict[int, str] | None = None) -> list[tuple[str, tuple]]:
    """Consecutive ranks with identical (host, state, culprit, exit, seqs, op) collapse into one row; the
    row shows the latest last-seen time of its ranks (to the second) and the first error of its first rank."""
    seen = seen or {}
    out: list[tuple[str, tuple]] = []
    start = prev = current = None
    error, latest = "", ""
    for s in sorted(ranks, key=lambda r: r.rank):
        k = _key(s, culprit)
        when = seen.get(s.rank, "")[:19].replace("T", " ")
        if current is not None and k == current and prev is not None and s.rank == prev + 1:
            prev, latest = s.rank, max(latest, when)
            continue
        if current is not None:
            out.append((_span(start, prev), current + (latest, error)))
        start = prev = s.rank
        current, latest = k, when
        error = s.first_error or ""
    if current is not None:
        out.append((_span(start, prev), current + (latest, error)))
    return out


def render_ranks(report: Report, full: bool = True) -> str:
    """The table, one row per line; ``full`` False (a terminal): cells over 60 characters are cut with …
    and a last line says so."""
    from nccllens.text_tables import cut_note, layout

    job, zh = report.job, report.lang == "zh"
    if zh:
        world = job.world_size if job.world_size is not None else f"至少 {len(job.ranks_seen)}"
        head = [f"总 rank 数：{world}   节点：{len(job.hosts)}   出现的 rank：{len(job.ranks_seen)}"
                + (f"   尝试次数：{job.attempts}" if job.attempts else "")]
    else:
        world = job.world_size if job.world_size is not None else f"at least {len(job.ranks_seen)}"
        head = [f"world size: {world}   hosts: {len(job.hosts)}   "
                f"ranks seen: {len(job.ranks_seen)}" + (f"   attempts: {job.attempts}" if job.attempts else "")]
    grouped = groups(report.ranks, culprits(report), last_seen(report))
    rows = [COLUMNS_ZH if zh else COLUMNS] + [(span, *(("" if v is None else str(v)) for v in k)) for span, k in grouped]
    if len(rows) == 1:
        return "\n".join(head + ["日志中没有 rank 信息" if zh else "no rank information in the logs"]) + "\n"
    lines, cut = layout(rows, limits=dict.fromkeys(range(len(COLUMNS)), 60), full=full)
    return "\n".join(head + lines + ([cut_note(cut)] if cut else [])) + "\n"


def ranks_json(report: Report) -> str:
    """``nccllens ranks --format json``: one object per rank, the culprit marked, its last-seen time."""
    culprit, seen = culprits(report), last_seen(report)
    rows = [{"rank": s.rank, "host": s.host, "state": s.state, "culprit": s.rank in culprit,
             "exit_code": s.exit_code, "signal": s.signal, "last_seq": s.last_seq, "last_completed": s.last_completed,
             "last_op": s.last_op, "last_seen": seen.get(s.rank), "first_error": s.first_error,
             "first_error_ts": s.first_error_ts} for s in sorted(report.ranks, key=lambda r: r.rank)]
    job = report.job
    return json.dumps({"world_size": job.world_size, "hosts": job.hosts, "ranks": rows}, ensure_ascii=False,
                      indent=2) + "\n"
