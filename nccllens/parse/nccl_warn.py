"""Typed fields of NCCL WARN bodies (shared/reference/nccl_logs.md §3, the WARN catalogue).

Every WARN becomes ``nccl.warn``; this module adds what the body states: the ``peer`` a socket or
IB message names, the ``iface`` (network interface or IB ``dev:port`` / HCA), an ``error_code``
(errno or NCCL result the body prints), a short ``value`` naming the failure class, and the level
(``error`` for failures, ``warning`` for the rest).
"""

from __future__ import annotations

import re

from nccllens import lazy_regex

_ADDR = r"(?P<peer>[^\s<>,]+<\d+>|\[[^\]]+\]:\d+|[^\s<>,]+)"

# (class, level, pattern searched in the body). First match wins.
_CLASSES: list[tuple[str, str, re.Pattern]] = [
    ("ib_completion", "error", lazy_regex.compile(
        r"NET/IB\w*(?:/GIN)? ?: Got completion from peer " + _ADDR + r" with "
        r"(?:error (?P<status>\d+)|status=(?:IBV_WC_\w+\()?(?P<status2>\d+))"
        r"(?:.*? hca (?P<hca>\S+))?")),
    ("ib_async_event", "error", lazy_regex.compile(
        r"NET/IB\w* ?: (?:(?P<iface>[\w.\-]+:\d+) )?(?:Got (?:non-fatal )?async (?:error )?event|async fatal event"
        r"|GID table changed)")),
    ("connection_closed", "error", lazy_regex.compile(r"Connection closed by remote peer " + _ADDR)),
    ("connect_failed", "error", lazy_regex.compile(
        r"[Cc]onnect to " + _ADDR + r" (?:failed|returned)")),
    ("connect_failed", "error", lazy_regex.compile(r"(?:connect returned .*exceeded|exceeded (?:retries|timeouts))")),
    ("socket_io", "error", lazy_regex.compile(r"Call to (?:recv from|send to) " + _ADDR + r" failed")),
    ("socket_io", "error", lazy_regex.compile(r"NET/Socket ?: peer " + _ADDR + r" message truncated")),
    ("no_interface", "error", lazy_regex.compile(
        r"(?:no socket interface found|No usable listening interface found|no interface found"
        r"|No interface found in the same subnet as remote address " + _ADDR +
        r"|no device found matching (?P<iface>\S+?)(?:,|\s))")),
    ("bootstrap_root", "error", lazy_regex.compile(
        r"Bootstrap Root : (?:rank (?P<rank>\d+) of \d+ ranks has already checked in|mismatch)")),
    ("proxy", "error", lazy_regex.compile(
        r"(?:Proxy Call to rank (?P<rank>\d+) failed|Failed to execute operation \w+ from rank (?P<rank2>\d+)"
        r"|\[Service thread\]|ncclProxyCallBlockingUDS call to tpRank (?P<rank3>\d+)|Comm \S+ is in abort state)")),
    ("shm", "error", lazy_regex.compile(
        r"(?:shared memory|/dev/shm|failed to extend|Call to posix_fallocate failed|Could not map)")),
    ("cuda", "error", lazy_regex.compile(r"(?:Cuda failure|CUDA error|Failed to find CUDA|Failed to load CUDA|cuInit)")),
    ("verbs", "error", lazy_regex.compile(r"Call to ibv_\w+ failed|NET/IB ?: Unable to (?:open|query)")),
    ("ras", "error", lazy_regex.compile(r"RAS .*?(?:peer (?P<peer>\S+)|with (?P<peer2>\S+))")),
    ("usage", "error", lazy_regex.compile(
        r"(?:Duplicate GPU detected(?: : rank (?P<dup1>\d+) and rank (?P<dup2>\d+))?|Multiple Ranks are using the same GPU|Mismatched NCCL version|NCCL library is too old"
        r"|not backwards compatible|Trying to send to self|mismatchs with NCCL device)")),
    ("nvlink", "error", lazy_regex.compile(r"(?:P2P is disabled between NVLINK|NVLink SHARP|NVLS)")),
    ("syscall", "error", lazy_regex.compile(r"Call to \w+ failed ?: ")),
]

_ERRNO = lazy_regex.compile(r"(?:returned (?P<ret2>\d+)\(|error:? [^()]*\((?P<errno>\d+)\)\s*$|errno (?P<errno2>\d+)|retcode (?P<ret>-?\d+)"
                    r"|res=(?P<res>-?\d+))")


# "[Proxy Service %d] ..." prints the rank of the process whose proxy thread warns (comm->rank, tpRank)
_PROXY_OWN = lazy_regex.compile(r"\[Proxy Service (?P<own>\d{1,6})\]")


def warn_fields(body: str) -> dict:
    """Typed fields for one WARN body (``own_rank``: the writer's rank where the body states it); never raises."""
    out: dict = {"level": "warning"}
    own = _PROXY_OWN.search(body)
    if own:
        out["own_rank"] = int(own["own"])
    for name, level, rx in _CLASSES:
        m = rx.search(body)
        if m is None:
            continue
        groups = m.groupdict()
        out["level"] = level
        out["value"] = name
        peer = groups.get("peer") or groups.get("peer2")
        rank = groups.get("rank") or groups.get("rank2") or groups.get("rank3")
        if peer:
            out["peer"] = peer
        elif groups.get("dup1"):  # both ranks on one GPU
            out["peer"] = f"ranks {groups['dup1']}, {groups['dup2']}"
        elif rank:
            out["peer"] = f"rank {rank}"
        iface = groups.get("iface") or groups.get("hca")
        if iface:
            out["iface"] = iface
        status = groups.get("status") or groups.get("status2")
        if status:
            out["detail"] = f"status {status}"
        break
    e = _ERRNO.search(body)
    if e:
        code = e["ret2"] or e["errno"] or e["errno2"] or e["ret"] or e["res"]
        try:
            out["error_code"] = int(code)
        except (TypeError, ValueError):
            pass
    return out
