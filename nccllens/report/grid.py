"""The rank-status picture: one cell per rank, grouped by host, with hosts that all look the same
collapsed into one row so that 4,096 ranks on 512 hosts still fit on a screen."""

from __future__ import annotations

import os
from collections import Counter
from dataclasses import dataclass

from nccllens import lazy_regex
from nccllens.report.model import RankStatus, Report
from nccllens.report.view import top_finding

CHUNK = 64  # ranks per row when the logs do not name hosts
_TRAILING_DIGITS = lazy_regex.compile(r"\d+$")

# legend order: the worst first
STATE_ORDER = ("culprit", "crashed", "killed", "exited", "timed_out", "blocked", "silent", "never_seen",
               "unknown", "finished")


@dataclass
class Cell:
    """One rank's cell in the rank grid."""

    rank: int
    host: str | None
    state: str  # what the cell shows: the rank's state, or "culprit" for the top cause's ranks
    status: RankStatus


@dataclass
class HostRow:
    """One row of the rank grid: a host, or several collapsed into one."""

    label: str
    hosts: list[str]  # the hosts this row stands for (one, or many when collapsed)
    cells: list[Cell]  # the cells drawn (for a collapsed row: those of its first host)
    collapsed: int = 1  # how many hosts this row stands for

    @property
    def state(self) -> str | None:
        """The one state all cells share, or None."""
        states = {c.state for c in self.cells}
        return states.pop() if len(states) == 1 else None


def row_counts(row: HostRow) -> list[tuple[str, int]]:
    """(state, cells) of one row, in the order the states first appear."""
    return list(Counter(c.state for c in row.cells).items())


def host_of(status: RankStatus, report: Report) -> str | None:
    return status.host or report.job.rank_hosts.get(str(status.rank))


def cells(report: Report) -> list[Cell]:
    top = top_finding(report)
    culprits = set(top.ranks) if top is not None and top.role == "cause" else set()
    out = []
    for status in sorted(report.ranks, key=lambda r: r.rank):
        state = "culprit" if status.rank in culprits else status.state
        out.append(Cell(status.rank, host_of(status, report), state, status))
    return out


def by_host(all_cells: list[Cell]) -> list[tuple[str, list[Cell]]]:
    """Cells grouped by host in the order hosts first appear by rank; hostless ranks in chunks."""
    groups: dict[str, list[Cell]] = {}
    for c in all_cells:
        if c.host is not None:
            groups.setdefault(c.host, []).append(c)
    hostless = [c for c in all_cells if c.host is None]
    for i in range(0, len(hostless), CHUNK):
        chunk = hostless[i : i + CHUNK]
        first, last = chunk[0].rank, chunk[-1].rank
        groups[f"rank {first}-{last}" if last != first else f"rank {first}"] = chunk  # "rank" reads in zh too
    return list(groups.items())


def host_range(hosts: list[str]) -> str:
    """``gpu-node-000`` .. ``gpu-node-511`` -> ``gpu-node-000..511``."""
    first, last = hosts[0], hosts[-1]
    if len(hosts) == 1:
        return first
    prefix = os.path.commonprefix([first, last])
    if prefix and prefix[-1].isdigit():
        prefix = _TRAILING_DIGITS.sub("", prefix)
    return f"{first}..{last[len(prefix):]}" if prefix else f"{first}..{last}"


def host_rows(report: Report, max_rows: int = 24) -> list[HostRow]:
    """One row per host; when there are more than ``max_rows`` hosts, hosts whose cells all share one
    state (and have the same number of ranks) collapse into one row per state; the rest stay."""
    groups = by_host(cells(report))
    rows = [HostRow(name, [name], group) for name, group in groups]
    if len(rows) <= max_rows:
        return rows
    singles: list[HostRow] = []
    uniform: dict[tuple[str, int], list[HostRow]] = {}
    for row in rows:
        state = row.state
        if state is None:
            singles.append(row)
        else:
            uniform.setdefault((state, len(row.cells)), []).append(row)
    merged: list[HostRow] = []
    for same in uniform.values():
        if len(same) == 1:
            singles.append(same[0])
            continue
        names = [r.label for r in same]
        merged.append(HostRow(host_range(names), names, same[0].cells, len(same)))
    singles.sort(key=lambda r: r.cells[0].rank)
    merged.sort(key=lambda r: (-r.collapsed, r.cells[0].rank))
    return singles + merged


def state_counts(report: Report) -> list[tuple[str, int]]:
    """(state, number of ranks) for the legend, worst first; states with no ranks left out."""
    counts = Counter(c.state for c in cells(report))
    known = [(s, counts[s]) for s in STATE_ORDER if counts[s]]
    extra = sorted((s, n) for s, n in counts.items() if s not in STATE_ORDER)
    return known + extra
