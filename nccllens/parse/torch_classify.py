"""Classify one c10d message body (header already removed) into a torch event's fields.

``classify(body)`` returns a dict with ``kind`` and typed columns, plus private hints that
``resolve_rank`` turns into the ``rank`` column:
``_group_rank``/``_pg_default`` (the PG log prefix), ``_self_rank`` (the line names the rank that
prints it), ``_missing_rank`` (a store wait names the rank that never wrote its key).
Formats: shared/reference/pytorch_c10d.md §2.
"""

from __future__ import annotations

import re

from nccllens import lazy_regex
from nccllens.events import MAX_RANK
from nccllens.parse.torch_debug import classify_barrier, classify_ddp
from nccllens.parse.torch_patterns import nccl_error_code, pg_fields, ranks_list, work_fields
from nccllens.parse.torch_store import classify_gloo, classify_store

_WATCHDOG_DIED = lazy_regex.compile(r"(?:Process group|NCCL) watchdog thread terminated with exception: ?(?P<what>.*)$")
_TIMEOUT = lazy_regex.compile(r"(?:Watchdog caught|Caught) collective operation timeout: Work\w*\(")
_BLOCKING = lazy_regex.compile(r"Work Work\w*\(.*\) timed out in (?:call to wait|blocking wait)")
_TAKING_DOWN = lazy_regex.compile(r"Some NCCL operations have failed or timed out|To avoid (?:data|this) inconsistency, we are "
                          r"taking the entire process down")
_STATUS = lazy_regex.compile(
    r"(?:Timeout at NCCL work|Exception \(either an error or timeout\) detected by watchdog at work|"
    r"Exception hit in NCCL work|failure detected by watchdog at work sequence id): (?P<seq>-?\d+)"
)
_ENQ_COMP = lazy_regex.compile(r"last enqueued (?:NCCL )?work: (?P<enq>-?\d+), last completed (?:NCCL )?work: (?P<comp>-?\d+)",
                       re.IGNORECASE)
_PERIODIC = "NCCL Work update periodically"
_HEARTBEAT = lazy_regex.compile(r"Heartbeat monitor timed out|watchdog got stuck for (?P<s>\d+) seconds|detected no heartbeat "
                        r"of its watchdog|Could not acquire GIL|c\+\+ stacktraces|verify there is indeed a watchdog "
                        r"hang|due to ProcessGroupNCCL watchdog hang")
_DUMP_SIGNAL = lazy_regex.compile(r"Received a dump signal due to a collective timeout from\s+(?:this local rank|rank (?P<r>\d+))")
_DUMP = lazy_regex.compile(r"Received a global timeout from another rank|watchdog detected a collective timeout and notified|"
                   r"preparing to dump debug info|dumping nccl trace to|debug info to |Flight Recorder trace "
                   r"successfully dumped|Finished flight recorder successfully|Error opening file for writing|"
                   r"Future for Flight recorder dump|Terminating the process after attempting to dump debug info|"
                   r"First PG on this rank to signal dumping|Observed flight recorder dump signal|Dump signal received "
                   r"through pipe|Sending extra dumping signal|has been opened, write to it to trigger|"
                   r"Stack trace of the failed collective not found", re.IGNORECASE)
_DUMP_FILE = lazy_regex.compile(r"(?:dumping nccl trace to|debug info to|for writing \w+ debug info:) (?P<f>\S+)", re.IGNORECASE)
_FAILED_STACK = "Stack trace of the failed collective"
_NCCL_IN = lazy_regex.compile(r"NCCL error in: (?P<file>\S+?):(?P<line>\d+), (?P<str>.*?),? NCCL version (?P<ver>\d[\w.+-]*)")
_NCCL_ASYNC = lazy_regex.compile(r"NCCL error: (?P<str>.*?),? NCCL version (?P<ver>\d[\w.+-]*)")
_NCCL_OTHER = lazy_regex.compile(r"NCCL communicator encountered error set by ProcessGroupNCCL: |NCCL communicator was aborted "
                         r"on rank (?P<r>\d+)\.|raised the following async exception: |found async exception when "
                         r"checking for NCCL errors: ")
_REMOTE = lazy_regex.compile(r"remote error detected from rank: ?(?P<r>\d+)")
_DIST_BACKEND = lazy_regex.compile(r"DistBackendError: ")
_DESYNC = lazy_regex.compile(r"Timeout at collective: (?P<op>\w+), #(?P<seq>\d+)|ranks \[(?P<lag>[\d, ]*)\] are the lagging ranks|"
                     r"\[(?P<ranks>[\d, ]+)\] (?:(?P<joined>joined but didn't finish)|finished collective #\d+, but didn't join)")
# which list a desync report's ``peer`` holds (its ``value``): the ranks it calls lagging, the ranks that entered the
# collective and did not finish it (waiting inside it), or the ranks that finished it and never joined the next
DESYNC_LAGGING, DESYNC_JOINED, DESYNC_NOT_JOINED = "lagging", "joined, not finished", "finished, not joined"
_EXC_TYPE = lazy_regex.compile(r"(?:^|[\s:])(?P<t>[A-Za-z_][\w.]*(?:::\w+)*(?:Error|Exception|EnforceNotMet)): ")
_PRINTED_RANK = lazy_regex.compile(r"\s*\[rank(?P<r>\d+)\] ")
DEFAULT_LEVEL = {
    "torch.warning": "warning", "torch.dump": "error", "torch.heartbeat": "error", "torch.store_error": "error",
}


def _nccl_error(body: str) -> dict | None:
    located = _NCCL_IN.search(body)  # names the file and line that raised it
    m = located or _NCCL_ASYNC.search(body)
    if m:
        name, code = nccl_error_code(m["str"])
        out = {"kind": "torch.nccl_error", "version": f"nccl {m['ver'].rstrip('.')}", "error_code": code,
               "value": name or m["str"]}
        if located:
            out["key"] = f"{m['file'].rsplit('/', 1)[-1]}:{m['line']}"
        return out
    m = _NCCL_OTHER.search(body)
    if m:
        name, code = nccl_error_code(body[m.end():])
        out = {"kind": "torch.nccl_error", "error_code": code, "value": name}
        if m["r"]:
            out["_self_rank"] = int(m["r"])
        return out
    return None


def _watchdog(body: str) -> dict | None:
    m = _WATCHDOG_DIED.search(body)
    if m:
        out = {"kind": "torch.watchdog_exception", **work_fields(m["what"])}
        nccl = _nccl_error(m["what"])
        if nccl:
            out.update({k: v for k, v in nccl.items() if k != "kind"})
        return out
    if _TIMEOUT.search(body) or _BLOCKING.search(body):
        return {"kind": "torch.watchdog_timeout", **work_fields(body)}
    if _TAKING_DOWN.search(body):
        return {"kind": "torch.taking_down"}
    return None


def _status(body: str) -> dict | None:
    m = _STATUS.search(body)
    if not m and _PERIODIC not in body:
        return None
    out = {"kind": "torch.pg_status"}
    if m:
        out["seq"] = int(m["seq"])
    ec = _ENQ_COMP.search(body)
    if ec:
        enq, comp = int(ec["enq"]), int(ec["comp"])
        out["last_enqueued"] = enq
        # ≈2.3 printed an uninitialized counter (e.g. 76280750235782912): larger than enqueued = unknown
        out["last_completed"] = comp if comp <= enq else None
    return out


def _dump_or_heartbeat(body: str) -> dict | None:
    m = _HEARTBEAT.search(body)
    if m:
        out = {"kind": "torch.heartbeat"}
        if m["s"]:
            out["elapsed_ms"] = int(m["s"]) * 1000
        return out
    m = _DUMP_SIGNAL.search(body)
    if m:
        out = {"kind": "torch.dump", "peer": f"rank {m['r']}" if m["r"] else "this local rank"}
        ec = _ENQ_COMP.search(body)
        if ec:
            enq, comp = int(ec["enq"]), int(ec["comp"])
            out.update(last_enqueued=enq, last_completed=comp if comp <= enq else None)
        return out
    if _DUMP.search(body):
        f = _DUMP_FILE.search(body)
        out = {"kind": "torch.dump", "value": f["f"].rstrip(".") if f else None}
        if "Stack trace of the failed collective" in body:
            out["key"] = "failed_collective_stack"
        return out
    return None


def _misc(body: str) -> dict | None:
    if _FAILED_STACK in body:
        # the watchdog's timeout report goes on with the Python stack of the collective that timed out: the
        # timeout is the failure, this line (glog level E) only says where it was issued
        return {"kind": "torch.warning", "key": "failed_collective_stack", "_report_part": True}
    m = _REMOTE.search(body)
    if m:
        return {"kind": "torch.warning", "peer": f"rank {m['r']}", "value": "remote error"}
    m = _DESYNC.search(body)
    if m:
        out = {"kind": "torch.warning", "key": "desync_report"}
        if m["op"]:
            out.update(op=m["op"], seq=int(m["seq"]))
        ranks = m["lag"] if m["lag"] is not None else m["ranks"]
        if ranks:
            out["peer"] = ranks_list(ranks)
            out["value"] = (DESYNC_LAGGING if m["lag"] is not None else DESYNC_JOINED if m["joined"]
                            else DESYNC_NOT_JOINED)
        return out
    return None


def _dist_backend(body: str) -> dict | None:
    return {"kind": "torch.nccl_error"} if _DIST_BACKEND.search(body) else None


_CLASSIFIERS = (_watchdog, _dump_or_heartbeat, _status, _nccl_error, _misc, classify_store, classify_gloo,
                classify_barrier, classify_ddp, _dist_backend)


def classify(body: str) -> dict | None:
    """Fields of the first c10d message recognised in ``body``, or ``None``."""
    for fn in _CLASSIFIERS:
        out = fn(body)
        if out is not None:
            break
    else:
        return None
    if out["kind"] == "torch.watchdog_timeout" or out.get("_group_rank") is None:
        for key, value in pg_fields(body).items():
            out.setdefault(key, value)
    if out["kind"] in ("torch.monitored_barrier", "torch.gloo_error") and "_group_rank" in out:
        out.setdefault("_self_rank", out["_group_rank"])  # gloo/wrapper "[Rank 0]: " names no PG
    printed = _PRINTED_RANK.match(body)  # "[rank1] caught builtins.RuntimeError: ..." (a script's own print)
    if printed:
        out.setdefault("_self_rank", int(printed["r"]))
    exc = _EXC_TYPE.search(body)
    if exc:
        out.setdefault("exc_type", exc["t"])
    out.setdefault("level", DEFAULT_LEVEL.get(out["kind"], "error"))
    return out


def resolve_rank(fields: dict, line_rank: int | None) -> int | None:
    """Pop the private hints from ``fields``; return the ``rank`` to set (``None``: keep the line's)."""
    group_rank = fields.pop("_group_rank", None)
    pg_default = fields.pop("_pg_default", False)
    size = fields.pop("_group_size", None)
    if size is not None and pg_default and size <= MAX_RANK:
        fields.setdefault("nranks", size)  # the default group's size: the job's world size
    self_rank = fields.pop("_self_rank", None)
    missing = fields.pop("_missing_rank", None)
    fields.pop("_message", None)
    if missing is not None:
        return missing
    if line_rank is not None:
        return None  # the launcher/excepthook prefix is the global rank: trust it
    if self_rank is not None:
        return self_rank
    if group_rank is not None and pg_default:
        return group_rank
    return None
