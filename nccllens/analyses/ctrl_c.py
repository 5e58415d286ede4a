"""What a Ctrl-C shows: every interrupted process's traceback is a snapshot of where it stood.

When someone interrupts a hung job (Ctrl-C in the terminal: SIGINT to the launcher and its workers), each
worker that returns to Python prints a KeyboardInterrupt traceback. Those waiting in a collective or a
join of the job show it in their innermost frames (or in a traceback just before, where the wait failed as
its peer died); a rank interrupted in its own code never reached the collective the others wait in, so it
held them up: ``AN-INTERRUPT-ELSEWHERE`` (straggler, culprit = those ranks). The interrupt, the launcher's
"death signal" and the peers' closed connections after it are consequences.
"""

from __future__ import annotations

import polars as pl

from nccllens.analyses.common import hosts_of, make_finding
from nccllens.analyses.reads import reads
from nccllens.analyses.unclaimed_categories import is_interrupt, waits_in
from nccllens.parse.tracebacks import traceback_frames
from nccllens.rank_ranges import compact_ranks
from nccllens.report.model import Finding

_COLUMNS = ("rank", "exc_type", "signal", "detail")


def _innermost(detail: str | None) -> str:
    frames = traceback_frames(detail)
    return frames[-1] if frames else ""


@reads("python.traceback")
def interrupted_elsewhere(events: pl.DataFrame, rank_hosts: dict[int, str], lang: str) -> list[Finding]:
    tracebacks = events.filter((pl.col("kind") == "python.traceback") & pl.col("rank").is_not_null())
    if not tracebacks.height:
        return []
    rows = tracebacks.select([c for c in _COLUMNS if c in tracebacks.columns]).to_dicts()
    interrupts = [r for r in rows if is_interrupt(r)]
    if not interrupts:
        return []
    waiting = {int(r["rank"]) for r in rows if waits_in(r.get("detail"))}
    elsewhere = [r for r in interrupts if int(r["rank"]) not in waiting and _innermost(r.get("detail"))]
    if not waiting or not elsewhere:
        return []
    culprits = sorted({int(r["rank"]) for r in elsewhere})
    evidence = tracebacks.filter(pl.col("rank").is_in(culprits + sorted(waiting)))
    return [make_finding("AN-INTERRUPT-ELSEWHERE", lang, evidence, ranks=culprits,
                         hosts=hosts_of(culprits, rank_hosts), who=compact_ranks(culprits),
                         waiting=compact_ranks(sorted(waiting)), frames=_innermost(elsewhere[0].get("detail")))]
