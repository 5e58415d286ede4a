"""``TORCH_DISTRIBUTED_DEBUG`` output and DDP reducer errors -> ``torch.fingerprint_mismatch``,
``torch.monitored_barrier``, ``torch.ddp_error``. Formats: shared/reference/pytorch_c10d.md §5, §6.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from nccllens import lazy_regex
from nccllens.parse.torch_patterns import ranks_list

_FP_START = "Detected mismatch between collectives on ranks"
_FINGERPRINT = lazy_regex.compile(
    r"Detected mismatch between collectives on ranks\. Rank (?P<me>\d+) is running (?:inconsistent )?collective: "
    r"CollectiveFingerPrint\((?:SequenceNumber=(?P<seq>\d+),? ?)?OpType=(?P<op>\w+)"
)
_FP_OTHER = lazy_regex.compile(r", but Rank (?P<other>\d+) is running collective: CollectiveFingerPrint\("
                               r"(?:SequenceNumber=(?P<seq>\d+),? ?)?(?:OpType=(?P<op>\w+))?")
# DETAIL with TORCH_CPP_LOG_LEVEL=INFO: each rank's fingerprint of every collective it starts
_RUNNING = lazy_regex.compile(
    r"(?:\[Rank (?P<me>\d+)\] )?Running collective: CollectiveFingerPrint\((?:SequenceNumber=(?P<seq>\d+),? ?)?"
    r"OpType=(?P<op>\w+)(?:, TensorShape=\[(?P<shape>[^\]]*)\])?(?:, TensorDtypes=(?P<dtype>\w+))?")
_FP_DIFFER = lazy_regex.compile(r"Collectives differ in the following aspects:\s*(?P<what>.*)$")
_CUT_AT_NEXT_RECORD = lazy_regex.compile(r"\[rank\d+\]|\[default\d+\]:|" + _FP_START)

_BARRIER_FAILED = lazy_regex.compile(r"(?:Rank|Ranks) (?P<ranks>\d+(?:, \d+)*) failed to pass monitoredBarrier in (?P<ms>\d+) ms")
_BARRIER_ERRORS = lazy_regex.compile(r"Rank (?P<me>\d+) successfully reached monitoredBarrier, but received errors while waiting "
                             r"for send/recv from rank (?P<peer>\d+)")
_BARRIER_OTHER = lazy_regex.compile(r"timed out in monitoredBarrier after|No ranks successfully processed in monitoredBarrier")

_DDP_PARAMS = lazy_regex.compile(r"Parameter(?P<idx> indices)?s? which did not receive grad for rank (?P<rank>\d+): (?P<names>.*)$")
_DDP_ERRORS = (
    ("Expected to have finished reduction in the prior iteration", "unfinished reduction (unused parameters)"),
    ("Expected to mark a variable ready only once", "parameter marked ready twice"),
    ("DDP expects same model across all ranks", "model differs across ranks"),
    ("appears not to match sizes of the same param in process 0", "parameter sizes differ across ranks"),
    ("appears not to match strides of the same param in process 0", "parameter strides differ across ranks"),
)
_DDP_MODEL = lazy_regex.compile(r"DDP expects same model across all ranks, but Rank (?P<r>\d+) has (?P<n>\d+) params, "
                        r"while rank 0 has inconsistent (?P<m>\d+) params")


def _aspects(text: str) -> str:
    """``Op type: ALLREDUCEvs BROADCAST`` (sic) -> ``Op type: ALLREDUCE vs BROADCAST``."""
    text = _CUT_AT_NEXT_RECORD.split(text, maxsplit=1)[0]
    text = re.sub(r"(\S)vs ", r"\1 vs ", text)
    text = text.replace("Tensor Tensor ", "Tensor ")
    return re.sub(r"\s+", " ", text).strip()


def fingerprints(body: str) -> Iterator[dict]:
    """One event per ``Detected mismatch`` occurrence (two ranks' prints can share a physical line)."""
    starts = [m.start() for m in re.finditer(_FP_START, body)]
    for n, start in enumerate(starts):
        part = body[start: starts[n + 1] if n + 1 < len(starts) else len(body)]
        m = _FINGERPRINT.search(part)
        if not m:
            continue
        out = {"kind": "torch.fingerprint_mismatch", "op": m["op"], "_self_rank": int(m["me"])}
        if m["seq"]:
            out["seq"] = int(m["seq"])
        other = _FP_OTHER.search(part, m.end())
        peer = None
        if other:
            out["peer"] = f"rank {other['other']}"
            if other["op"]:  # what the reporting rank was told the other runs: that rank's fingerprint
                peer = {"kind": "torch.fingerprint_peer", "level": "debug", "op": other["op"],
                        "_missing_rank": int(other["other"]), "peer": f"rank {m['me']}"}  # the rank it is about
                if other["seq"]:
                    peer["seq"] = int(other["seq"])
        differ = _FP_DIFFER.search(part)
        if differ:
            out["detail"] = _aspects(differ["what"])
        out["_message"] = (_FP_START + _CUT_AT_NEXT_RECORD.split(part[len(_FP_START):], maxsplit=1)[0]).strip()
        yield out
        if peer is not None:  # worded apart, so that the rules about the mismatch line see it once
            seq = f" at SequenceNumber {peer['seq']}" if "seq" in peer else ""
            peer["_message"] = f"rank {other['other']} runs {peer['op']}{seq} (as rank {m['me']} was told)"
            yield peer


def running_fingerprint(body: str) -> dict | None:
    """``[Rank 2] Running collective: CollectiveFingerPrint(SequenceNumber=38, OpType=ALLREDUCE, TensorShape=[77, 1],
    TensorDtypes=Float, …)`` → ``torch.fingerprint_running`` (``value``: op, shape and dtype as one key)."""
    m = _RUNNING.search(body)
    if not m:
        return None
    shape = f"[{m['shape']}]" if m["shape"] is not None else ""
    out = {"kind": "torch.fingerprint_running", "level": "debug", "op": m["op"],
           "value": " ".join(p for p in (m["op"], shape, m["dtype"] or "") if p)}
    if m["seq"]:
        out["seq"] = int(m["seq"])
    if m["me"]:
        out["_self_rank"] = int(m["me"])
    return out


def classify_barrier(body: str) -> dict | None:
    m = _BARRIER_FAILED.search(body)
    if m:
        return {"kind": "torch.monitored_barrier", "peer": ranks_list(m["ranks"]), "timeout_ms": int(m["ms"])}
    m = _BARRIER_ERRORS.search(body)
    if m:
        return {"kind": "torch.monitored_barrier", "peer": f"rank {m['peer']}", "_self_rank": int(m["me"])}
    if _BARRIER_OTHER.search(body):
        return {"kind": "torch.monitored_barrier"}
    return None


def classify_ddp(body: str) -> dict | None:
    m = _DDP_PARAMS.search(body)
    if m:
        what = "parameter indices without grad" if m["idx"] else "parameters without grad"
        return {"kind": "torch.ddp_error", "_self_rank": int(m["rank"]), "detail": m["names"].strip(), "value": what}
    for needle, what in _DDP_ERRORS:
        if needle in body:
            out = {"kind": "torch.ddp_error", "value": what}
            mm = _DDP_MODEL.search(body)
            if mm:
                out["peer"] = f"rank {mm['r']}"
                out["detail"] = f"rank {mm['r']} has {mm['n']} params, rank 0 has {mm['m']}"
            return out
    return None


def ddp_params_line(text: str) -> re.Match | None:
    return _DDP_PARAMS.search(text)
