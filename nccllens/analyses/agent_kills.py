"""Workers the launcher stopped itself did not die of memory or of a scheduler's signal.

When one worker fails, torchrun stops the others: SIGTERM (``Sending process N closing signal SIGTERM``), then
SIGKILL for a worker that does not exit in time (``Unable to shutdown process N via 15, forcefully exiting via
9``). Their exit codes in its failure table (-15, -9) are the launcher's own signals. A finding that reads a kill
from those exits alone (a SIGKILL read as the OOM killer's, a SIGTERM read as the scheduler's) about workers that
were all stopped this way is a consequence of the failure that made torchrun stop them: it becomes a symptom
when another cause finding names a worker that was not stopped (the one that failed first).
"""

from __future__ import annotations

import polars as pl

from nccllens.analyses.activity import stopped_by_agent
from nccllens.report.model import Finding, RankStatus

# what a kill read from an exit code alone can be taken for
KILL_READINGS = ("host_oom", "job_killed")


def quiet_agent_kills(findings: list[Finding], events: pl.DataFrame, status: list[RankStatus]) -> None:
    """Demote (in place) kill findings about workers the launcher stopped, where another worker's failure
    is a cause."""
    stopped = stopped_by_agent(events, status) if events.height else set()
    if not stopped:
        return

    def only_stopped(f: Finding) -> bool:
        return bool(f.ranks) and set(f.ranks) <= stopped

    kills = [f for f in findings if f.severity in ("critical", "error") and f.role == "cause"
             and f.category in KILL_READINGS and only_stopped(f)]
    if not kills:
        return
    first = [f for f in findings if f.severity in ("critical", "error") and f.role == "cause"
             and f not in kills and f.ranks and not set(f.ranks) & stopped]
    if not first:
        return
    for f in kills:
        f.severity, f.role = "warning", "symptom"
        f.confidence = round(min(f.confidence, 0.3), 2)
