"""Shared by the engine tests: fixture paths, real log lines, a rule factory, event rows."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from nccllens.engine.rule import rule_from_dict
from nccllens.events import from_rows

HERE = Path(__file__).parent
GOOD = HERE / "rules_good"
BAD = HERE / "rules_bad"

# shared/reference/dmesg_xid.md: "current" (>= R470-525) and "middle" driver formats
XID79 = "NVRM: Xid (PCI:0000:5d:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus."
XID63 = "NVRM: Xid (PCI:0000:10:1c): 63, pid=1896, Row Remapper: New row marked for remapping, reset gpu to activate."
# shared/reference/pytorch_c10d.md §2.2: real 2.4-era sample
WATCHDOG = (
    "[Rank 1] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=6463, OpType=ALLREDUCE, "
    "NumelIn=1, NumelOut=1, Timeout(ms)=1800000) ran for 1800017 milliseconds before timing out."
)
# shared/reference/nccl_logs.md: IB devices / chosen network lines
IB_NONE = "NET/IB : No device found."
SOCKET = "Using network Socket"


def rule(rid: str = "TEST-X-001", **match) -> object:
    """A valid rule whose [match] table is ``match``."""
    return rule_from_dict({
        "id": rid,
        "category": match.pop("category", "gpu_hardware"),
        "severity": "error",
        "role": "cause",
        "match": match,
        "en": {"title": "on {host} ranks {ranks} xid {xid}", "summary": "s", "remediation": "r"},
        "zh": {"title": "{host} 上 rank {ranks}", "summary": "s", "remediation": "r"},
        "examples": [],
    })


def event(message: str, *, kind: str = "other.text", line: int = 1, file: str = "a.log", ts: str | None = None,
          **typed) -> dict:
    return {
        "file": file, "line": line, "kind": kind, "family": kind.split(".")[0], "message": message,
        "raw": message, "ts": datetime.fromisoformat(ts) if ts else None, **typed,
    }


def table(*rows: dict):
    return from_rows(rows)
