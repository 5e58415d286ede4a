"""Shared pieces of c10d message text: the PG log prefix, the WorkNCCL description, NCCL result codes.

Formats: shared/reference/pytorch_c10d.md §2.1 (work), §2.3 (PG prefix), §2.9 (NCCL errors).
"""

from __future__ import annotations

import re

from nccllens import lazy_regex

# [Rank 3] | [PG 1 Rank 5] | [PG 0 (default_pg) Rank 1] | [PG ID 0 PG GUID 0(default_pg) Rank 0]
# | [PG ID 1 PG GUID 1 Rank 1] | [PG GUID 3 Rank 6] (≈2.14+)
PG_PREFIX = lazy_regex.compile(
    r"\[(?:PG (?:ID (?P<pgid>\d+) PG GUID (?P<guid>[^\s(\]]+)|GUID (?P<guid2>[^\s(\]]+)|(?P<uid>\d+))"
    r" ?(?:\((?P<desc>[^)]*)\))? )?Rank (?P<rank>\d+)\]"
)

# WorkNCCL(SeqNum=1, OpType=ALLREDUCE[, TensorShape=[..]][, NumelIn=1, NumelOut=1], Timeout(ms)=600000);
# torch 1.9 states no SeqNum: WorkNCCL(OpType=BROADCAST[, TensorShape=[..]], Timeout(ms)=60000)
# vendor forks: WorkXCCL(, WorkHCCL( ...
WORK = lazy_regex.compile(
    r"Work\w*\((?:SeqNum=(?P<seq>\d+), )?OpType=(?P<op>\w+)(?:, TensorShape=\[[^\]]*\])?"
    r"(?:, NumelIn=(?P<nin>-?\d+), NumelOut=(?P<nout>-?\d+))?, Timeout\(ms\)=(?P<tmo>\d+)\)"
)
RAN_FOR = lazy_regex.compile(r" ran for (?P<ran>\d+) milliseconds before timing out")

# ncclResult_t names and values (nccl.h) and the strings ncclGetErrorString prints for them.
NCCL_RESULT_CODES = {
    "ncclSuccess": 0, "ncclUnhandledCudaError": 1, "ncclSystemError": 2, "ncclInternalError": 3,
    "ncclInvalidArgument": 4, "ncclInvalidUsage": 5, "ncclRemoteError": 6, "ncclInProgress": 7,
}
NCCL_ERROR_STRINGS = (
    ("unhandled cuda error", "ncclUnhandledCudaError"),
    ("unhandled system error", "ncclSystemError"),
    ("internal error", "ncclInternalError"),
    ("invalid argument", "ncclInvalidArgument"),
    ("invalid usage", "ncclInvalidUsage"),
    ("remote process exited or there was a network error", "ncclRemoteError"),
)
NCCL_DETAIL_LINE = lazy_regex.compile(r"^\s*(?P<name>nccl[A-Z]\w+): |^\s*Unknown NCCL error")
LAST_ERROR = lazy_regex.compile(r"^\s*Last error:\s*(?P<text>.*)$")


def pg_fields(text: str) -> dict:
    """Fields from the first PG prefix in ``text``: ``pg`` and the private rank hints."""
    m = PG_PREFIX.search(text)
    if not m:
        return {}
    pg = m["guid"] or m["guid2"] or m["uid"]
    out = {"pg": pg, "_group_rank": int(m["rank"])}
    # the default PG is uid/GUID 0 (desc default_pg); a bare [Rank N] names no PG
    out["_pg_default"] = pg is None or pg == "0" or m["desc"] == "default_pg"
    return out


def work_fields(text: str) -> dict:
    m = WORK.search(text)
    if not m:
        return {}
    out = {"seq": int(m["seq"]) if m["seq"] else None, "op": m["op"], "timeout_ms": int(m["tmo"])}
    size = group_size(m["op"], m["nin"], m["nout"])
    if size:
        out["_group_size"] = size
    ran = RAN_FOR.search(text, m.end())
    if ran:
        out["elapsed_ms"] = int(ran["ran"])
    return out


def group_size(op: str, nin: str | None, nout: str | None) -> int | None:
    """The process group's size a gathering or scattering work states by its element counts: an all-gather
    returns every rank's input (``NumelOut`` = size x ``NumelIn``), a reduce-scatter keeps one share of it."""
    if not nin or not nout or nin.startswith("-") or nout.startswith("-") or len(nin) > 12 or len(nout) > 12:
        return None
    n_in, n_out = int(nin), int(nout)
    big, small = (n_out, n_in) if "GATHER" in op.upper() else (n_in, n_out) if "REDUCE_SCATTER" in op.upper() else (0, 0)
    if small <= 0 or big <= small or big % small:
        return None
    return big // small


def nccl_error_code(text: str) -> tuple[str | None, int | None]:
    """The ncclResult name and value an error text names (``ncclRemoteError: ...`` or the string)."""
    m = re.search(r"\b(nccl[A-Z]\w*?Error|ncclInvalidArgument|ncclInvalidUsage|ncclInProgress)\b", text)
    if m and m[1] in NCCL_RESULT_CODES:
        return m[1], NCCL_RESULT_CODES[m[1]]
    low = text.lower()
    for needle, name in NCCL_ERROR_STRINGS:
        if needle in low:
            return name, NCCL_RESULT_CODES[name]
    return None, None


def ranks_list(text: str) -> str:
    """``1, 3`` -> ``ranks 1, 3``; ``1`` -> ``rank 1``."""
    nums = re.findall(r"\d+", text)
    if len(nums) == 1:
        return f"rank {nums[0]}"
    return "ranks " + ", ".join(nums)


def duration_ms(text: str) -> int | None:
    """``0:30:00`` (timedelta str) or ``1 day, 0:00:00`` -> milliseconds."""
    m = re.search(r"(?:(\d+) days?, )?(\d+):(\d\d):(\d\d)(?:\.(\d+))?", text)
    if not m:
        return None
    days, h, mi, s = (int(m[1] or 0), int(m[2]), int(m[3]), int(m[4]))
    frac = int(((m[5] or "") + "000")[:3])
    return (((days * 24 + h) * 60 + mi) * 60 + s) * 1000 + frac
