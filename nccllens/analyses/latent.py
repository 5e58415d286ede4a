"""Latent conditions: causes of failure that a run which did not fail can show too.

Some messages state a fact about the machine that breaks jobs of one kind and leaves the others alone:
TensorRT-LLM naming the GPU pairs without peer access (its custom all-reduce needs them; NCCL does not) is
printed at every start on such a machine. A rule says so with ``latent = true``. Its finding stays a cause
where the job shows it failed (an error or critical finding, a warning symptom, an error line printed, a
rank that crashed, was killed or timed out, a launcher that stopped the workers still running) and becomes
context where nothing did: a log that only states the condition is no failure report.
"""

from __future__ import annotations

import polars as pl

from nccllens.analyses.silent_death import TEARDOWN_RULES
from nccllens.analyses.unclaimed import failure_counts
from nccllens.report.model import Finding, RankStatus
from nccllens.report.outcome import TROUBLE

SERIOUS = ("critical", "error")


def quiet_latent(findings: list[Finding], latent_rules: set[str], events: pl.DataFrame,
                 status: list[RankStatus]) -> None:
    """Demote the latent rules' causes to context when the job shows no sign of failing (in place)."""
    held = [f for f in findings if f.rule in latent_rules and f.role == "cause"]
    if not held or _failed(findings, latent_rules, events, status):
        return
    for f in held:
        f.role = "context"


def _failed(findings: list[Finding], latent_rules: set[str], events: pl.DataFrame,
            status: list[RankStatus]) -> bool:
    others = [f for f in findings if f.rule not in latent_rules]
    if any(f.severity in SERIOUS or (f.severity == "warning" and f.role == "symptom") or f.rule in TEARDOWN_RULES
           for f in others):
        return True
    if any(s.state in TROUBLE for s in status):
        return True
    return bool(events.height) and failure_counts(events)[0] > 0
