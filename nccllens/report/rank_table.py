"""``nccllens ranks``: one line per group of consecutive ranks in the same state (readable at 4,096 ranks)."""

from __future__ import annotations

from nccllens.report.model import RankStatus, Report

COLUMNS = ("ranks", "host", "state", "exit", "last seq", "done", "op", "first error")


def _key(s: RankStatus) -> tuple:
    exit_text = s.signal or (str(s.exit_code) if s.exit_code is not None else "")
    return (s.host or "", s.state, exit_text, s.last_seq, s.last_completed, s.last_op or "")


def _span(first: int, last: int) -> str:
    return str(first) if first == last else f"{first}-{last}"


def groups(ranks: list[RankStatus]) -> list[tuple[str, tuple]]:
    """Consecutive ranks with identical (host, state, exit, seqs, op) collapse into one row; the row shows
    the first error of its first rank."""
    out: list[tuple[str, tuple]] = []
    start = prev = None
    current = None
    error = ""
    for s in sorted(ranks, key=lambda r: r.rank):
        k = _key(s)
        if current is not None and k == current and prev is not None and s.rank == prev + 1:
            prev = s.rank
            continue
        if current is not None:
            out.append((_span(start, prev), current + (error,)))
        start = prev = s.rank
        current = k
        error = (s.first_error or "")[:60]
    if current is not None:
        out.append((_span(start, prev), current + (error,)))
    return out


def render_ranks(report: Report) -> str:
    job = report.job
    head = [f"world size: {job.world_size if job.world_size is not None else '?'}   hosts: {len(job.hosts)}   "
            f"ranks seen: {len(job.ranks_seen)}" + (f"   attempts: {job.attempts}" if job.attempts else "")]
    rows = [COLUMNS] + [(span, *(("" if v is None else str(v)) for v in k)) for span, k in groups(report.ranks)]
    if len(rows) == 1:
        return "\n".join(head + ["no rank information in the logs"]) + "\n"
    widths = [min(max(len(r[i]) for r in rows), 60) for i in range(len(COLUMNS))]
    lines = ["  ".join(cell[:w].ljust(w) for cell, w in zip(r, widths, strict=True)).rstrip() for r in rows]
    return "\n".join(head + lines) + "\n"
