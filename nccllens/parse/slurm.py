"""Slurm messages found in job output (family ``slurm``): slurmstepd and srun.

- ``slurmstepd: error: *** JOB 123 ON node01 CANCELLED AT 2026-01-01T10:00:00 DUE TO TIME LIMIT ***``
  (also ``STEP 123.0``, older ``*** JOB 123 CANCELLED AT … DUE TO … on node ***``, ``slurmstepd-<host>:``)
- ``slurmstepd: error: Detected 1 oom_kill event in StepId=123.0. …`` / ``oom-kill event(s) in step …`` (also
  without the daemon's name: slurmd's own log, a paste of the message)
- ``srun: error: node01: task 3: Killed`` / ``tasks 2,4-5: Exited with exit code 1`` / ``Out Of Memory``
- ``srun: Job step aborted: …``, ``srun: forcing job termination``, ``srun: Force Terminated …``,
  ``srun: Terminating job step …``, other ``slurmstepd: error:`` / ``srun: error:`` lines.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime

from nccllens import lazy_regex
from nccllens.parse.base import FileContext, Line
from nccllens.parse.python import SIGNAL_BY_DESCRIPTION

FAMILY = "slurm"

PREFILTER = (
    r"slurmstepd(?:-[\w.-]+)?: |Detected \d+ oom[-_]kill events?(?:\(s\))? in "
    r"|^\s*srun: (?:error: |Job step aborted|forcing job termination|Force Terminated|Terminating )"
    r"|^\s*(?:salloc|sbatch): error: Node failure on "
    r"|Caught signal SIG[A-Z0-9]+ on \S+: this job is |Job has timed out\. Ran \d+ minutes|Job not requeued because: timed-out"
)

_STEPD = lazy_regex.compile(r"slurmstepd(?:-(?P<host>[\w.-]+))?: (?:error: )?(?P<rest>.*)$")
_CANCEL = lazy_regex.compile(
    r"\*\*\* (?P<what>JOB|STEP) (?P<id>\S+) (?:ON (?P<node>\S+) )?CANCELLED AT (?P<ts>\S+)"
    r"(?: DUE TO (?P<reason>[A-Z][A-Z _]*?))?(?: by \S+)?(?: on (?P<node_old>\S+))? \*\*\*"
)
_OOM = lazy_regex.compile(r"Detected (?P<count>\d+) oom[-_]kill events?(?:\(s\))? in (?:StepId=|step )?(?P<step>\w+(?:\.\w+)?)"
                          # the accounting plugin's own enforcement (JobAcctGatherParams=OverMemoryKill); its
                          # "Exceeded job memory limit at some point." alone is a warning jobs finish after
                          r"|(?:Job|Step) (?P<step2>\S+) exceeded memory limit \(\d+ > \d+\), being killed")
_WENT_OVER = lazy_regex.compile(r"Exceeded (?:job|step) memory limit at some point")
_TASKS = lazy_regex.compile(r"^srun: error: (?P<node>[\w.-]+): tasks? (?P<tasks>[\d,-]+): (?P<status>.+?)\s*$")
_EXIT = lazy_regex.compile(r"Exited with exit code (?P<code>-?\d+)")
_SRUN = lazy_regex.compile(
    r"^srun: (?P<what>Job step aborted|forcing job termination|Force Terminated|Terminating|error: )(?P<rest>.*)$"
)
# submitit (a Slurm job launcher) on the node where the job ran: the signal Slurm sent before the end
_SUBMITIT = lazy_regex.compile(r"Caught signal (?P<sig>SIG[A-Z0-9]+) on (?P<host>[\w.-]+): this job is (?P<what>timed-out|preempted)")
# its time-limit handler: "Job has timed out. Ran 240 minutes out of requested 240 minutes.", and when the job
# cannot be resubmitted: "Job not requeued because: timed-out and not checkpointable."
_SUBMITIT_TIMEOUT = lazy_regex.compile(r"Job has timed out\. Ran \d+ minutes|Job not requeued because: timed-out")
# srun's and salloc's report of the node slurmctld lost (the failed node, not the printer's own)
_NODE_FAILURE = lazy_regex.compile(r"^(?:srun|salloc|sbatch): error: Node failure on (?P<node>[\w.-]+)")
_STEP_ID = lazy_regex.compile(r"(?:StepId=|job step |job )(?P<id>\d+(?:\.\w+)?)")


def _ts(text: str) -> datetime | None:
    try:
        return datetime.strptime(text, "%Y-%m-%dT%H:%M:%S")
    except ValueError:
        return None


def _host(*names: str | None) -> str | None:
    for name in names:
        if name and name.strip(".") and name != "...":
            return name
    return None


def _single_task(tasks: str) -> int | None:
    return int(tasks) if tasks.isdigit() else None


def _stepd(body: str) -> dict | None:
    m = _STEPD.search(body)
    if not m:
        return None
    rest = m["rest"]
    cancel = _CANCEL.search(rest)
    if cancel:
        reason = cancel["reason"]
        event = {
            "kind": "slurm.node_fail" if reason == "NODE FAILURE" else "slurm.cancelled",
            "value": reason or "CANCELLED", "key": f"{cancel['what']} {cancel['id']}",
            "host": _host(cancel["node"], cancel["node_old"], m["host"]), "level": "error",
        }
        ts = _ts(cancel["ts"])
        if ts is not None:
            event["ts"], event["ts_kind"] = ts, "absolute"
        return event
    oom = _OOM.search(rest)
    if oom:
        return _oom_event(oom, _host(m["host"]))
    if _WENT_OVER.search(rest):  # a warning, printed by jobs that finish too: no failure by itself
        return {"kind": "slurm.memory_warning", "value": rest.strip(), "host": _host(m["host"]), "level": "warning"}
    if "error: " in body[: m.start("rest")]:
        return {"kind": "slurm.step_error", "value": rest.strip(), "host": _host(m["host"]), "level": "error"}
    return None


def _oom_event(oom, host: str | None = None) -> dict:
    return {"kind": "slurm.oom_kill", "key": oom["step"] or oom["step2"], "value": oom["count"], "host": host,
            "level": "error", "signal": "SIGKILL"}


def _oom_alone(body: str) -> dict | None:
    """The step daemon's OOM report where its name is not on the line: slurmd's own log (``[2025-10-16T08:52:15.650]
    [269582.0] error: Detected 3 oom_kill events in StepId=269582.0``), a paste that kept only the message."""
    oom = _OOM.search(body)
    return _oom_event(oom) if oom is not None and oom["step"] is not None else None


def _srun(body: str) -> dict | None:
    m = _TASKS.search(body)
    if m:
        status = m["status"]
        event = {"kind": "slurm.step_error", "host": _host(m["node"]), "rank": _single_task(m["tasks"]),
                 "key": f"tasks {m['tasks']}", "value": status, "level": "error"}
        code = _EXIT.search(status)
        if code:
            event["exit_code"] = int(code["code"])
        elif status.lower() == "out of memory":
            event["kind"], event["signal"] = "slurm.oom_kill", "SIGKILL"
        else:
            event["signal"] = SIGNAL_BY_DESCRIPTION.get(status.lower())
        return event
    m = _NODE_FAILURE.search(body)
    if m:
        return {"kind": "slurm.node_fail", "peer": m["node"], "value": "NODE FAILURE", "level": "error"}
    m = _SRUN.search(body)
    if not m:
        return None
    event = {"kind": "slurm.step_error", "value": (m["what"] + m["rest"]).removeprefix("error: ").strip(),
             "level": "error" if m["what"] == "error: " else "warning"}
    step = _STEP_ID.search(m["rest"])
    if step:
        event["key"] = step["id"]
    return event


def _submitit(body: str) -> dict | None:
    m = _SUBMITIT.search(body)
    if m:
        return {"kind": "slurm.cancelled", "value": "TIME LIMIT" if m["what"] == "timed-out" else "PREEMPTION",
                "signal": m["sig"], "host": _host(m["host"]), "level": "error"}
    if _SUBMITIT_TIMEOUT.search(body):
        return {"kind": "slurm.cancelled", "value": "TIME LIMIT", "level": "error"}
    return None


def parse(lines: list[Line], ctx: FileContext) -> Iterator[dict]:
    for line in lines:
        try:
            body = line.message.strip()
            event = _srun(body) if body.startswith(("srun: ", "salloc: ", "sbatch: ")) else _stepd(body) or _oom_alone(body) or _submitit(body)
        except Exception:  # noqa: BLE001 - one odd line must not cost the file its events
            continue
        if event is None:
            continue
        event = {k: v for k, v in event.items() if v is not None}
        event.update({"family": FAMILY, "message": body})
        yield event
