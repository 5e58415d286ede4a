"""The short timeline: the first error of each host, earliest first, from the rank states and the
evidence of error findings (dmesg lines have a host but no rank, so both are needed)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone

from nccllens import lazy_regex
from nccllens.report.model import Report

_FRACTION = lazy_regex.compile(r"(\.\d{6})\d+")
_SEVERE = ("critical", "error")


@dataclass
class Failure:
    """The first failure line of one host."""

    host: str
    text: str
    ts: str | None = None
    when: datetime | None = None
    rank: int | None = None
    file: str | None = None
    line: int | None = None
    finding: str | None = None  # the finding id the line is evidence of
    order: int = 0  # where it came from, for a stable order without clocks


def parse_ts(value: str | None) -> datetime | None:
    """ISO 8601 to a naive UTC datetime (naive stays as written); None when it does not parse."""
    if not value:
        return None
    text = _FRACTION.sub(r"\1", value.strip().replace("Z", "+00:00"))
    try:
        when = datetime.fromisoformat(text)
    except ValueError:
        return None
    if when.tzinfo is not None:
        when = when.astimezone(timezone.utc).replace(tzinfo=None)
    return when


def _candidates(report: Report) -> list[Failure]:
    out: list[Failure] = []
    hosts = report.job.rank_hosts
    for status in sorted(report.ranks, key=lambda r: r.rank):
        if status.first_error:
            host = status.host or hosts.get(str(status.rank)) or "?"
            out.append(Failure(host, status.first_error, status.first_error_ts,
                               parse_ts(status.first_error_ts), status.rank, order=len(out)))
    for f in report.findings:
        if f.severity not in _SEVERE:
            continue
        # a line without its own time takes the finding's first time when the finding is on one host
        fallback = f.first_seen if len(f.hosts) <= 1 else None
        for e in f.evidence:
            host = e.host or (hosts.get(str(e.rank)) if e.rank is not None else None) or "?"
            ts = e.ts or (fallback if host in f.hosts else None)
            out.append(Failure(host, e.text, ts, parse_ts(ts), e.rank, e.file, e.line, f.id, order=len(out)))
    return out


def _key(f: Failure) -> tuple:
    return (f.when is None, f.when or datetime.min, f.order)


def first_failures(report: Report, limit: int | None = None) -> list[Failure]:
    """One line per host: its earliest error; hosts ordered by that time (no clock: report order)."""
    best: dict[str, Failure] = {}
    for cand in _candidates(report):
        current = best.get(cand.host)
        if current is None or _key(cand) < _key(current):
            best[cand.host] = cand
    ordered = sorted(best.values(), key=_key)
    return ordered[:limit] if limit else ordered


def has_clock(failures: list[Failure]) -> bool:
    return any(f.when is not None for f in failures)


def error_marks(report: Report) -> dict[str, list[datetime]]:
    """Every timestamped error line per host (the small ticks of the swimlane)."""
    marks: dict[str, list[datetime]] = {}
    for cand in _candidates(report):
        if cand.when is not None:
            marks.setdefault(cand.host, []).append(cand.when)
    return {h: sorted(v) for h, v in marks.items()}


_NUMBERS = lazy_regex.compile(r"\d+")


def shape(text: str) -> str:
    """A line with its numbers masked: ``[Rank 8] … SeqNum=4000`` and ``[Rank 16] … SeqNum=4000`` alike."""
    return _NUMBERS.sub("#", text.strip())


def alike(failures: list[Failure]) -> list[tuple[Failure, int]]:
    """The first failures with the hosts whose first error reads the same (numbers aside) folded into
    the first of them: ``(failure, how many more hosts)``. 40 identical victim timeouts are one line."""
    out: list[tuple[Failure, int]] = []
    seen: dict[str, int] = {}
    for f in failures:
        key = shape(f.text)
        if key in seen:
            first, more = out[seen[key]]
            out[seen[key]] = (first, more + 1)
            continue
        seen[key] = len(out)
        out.append((f, 0))
    return out
