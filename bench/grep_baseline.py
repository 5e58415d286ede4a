"""The baseline nccllens must beat: an engineer's ordered grep list.

The first pattern of the list (in list order) that matches any line of any file names the
category; nothing matching means "no failure". The list is what one would type from the taxonomy's
"typical evidence" column, most specific first; it knows nothing about ranks, time or causality.
"""

from __future__ import annotations

import re
from pathlib import Path

PATTERNS: list[tuple[str, str]] = [
    (r"NVRM: Xid|fallen off the bus|uncorrectable ECC|SXid", "gpu_hardware"),
    (r"Out of memory: Kill|oom-kill|oom_reaper|Killed process", "host_oom"),
    (r"CUDA out of memory|OutOfMemoryError|CUBLAS_STATUS_ALLOC_FAILED|Cuda failure 'out of memory'", "gpu_oom"),
    (r"illegal memory access|device-side assert|CUBLAS_STATUS_EXECUTION_FAILED|misaligned address", "cuda_error"),
    (r"shared memory segment|/dev/shm|Bus error|posix_fallocate", "shm_exhausted"),
    (r"IBV_WC_|NET/IB.*(?:error|Got completion)|ibv_\w+ failed|port error", "ib_fabric"),
    (r"No usable listening interface|no socket interface found|NCCL_SOCKET_IFNAME", "network_interface"),
    (r"is killed by signal|DataLoader worker .*exited unexpectedly", "dataloader_crash"),
    (r"Detected mismatch between collectives|Expected to have finished reduction", "rank_divergence"),
    (r"RendezvousTimeoutError|Timed out after \d+ seconds waiting for clients|rendezvous.*timed? ?out", "rendezvous_timeout"),
    (r"Connection refused|No route to host|Name or service not known|Address already in use", "network_unreachable"),
    (r"Connection reset by peer|Connection closed by peer|got 0 bytes|remote process exiting", "peer_exited"),
    (r"DUE TO TIME LIMIT|CANCELLED AT|SIGTERM|Signal 15", "job_killed"),
    (r"Signal 9|SIGKILL|exitcode\s*:\s*-9", "host_oom"),
    (r"Duplicate GPU detected|no kernel image is available|invalid device function", "config_mismatch"),
    (r"peer access is not supported|P2P", "p2p_topology"),
    (r"Watchdog caught collective operation timeout|ran for \d+ milliseconds before timing out", "collective_timeout"),
    (r"ncclInternalError|ncclInvalidUsage|unhandled system error|NCCL error|NCCL WARN", "nccl_internal"),
    (r"Traceback \(most recent call last\)|Error:", "application_error"),
]
COMPILED = [(re.compile(pattern), category) for pattern, category in PATTERNS]


def read_lines(root: Path) -> list[str]:
    lines: list[str] = []
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        data = path.read_bytes()
        if b"\0" in data[:4096]:
            continue
        lines.extend(data.decode("utf-8", "replace").splitlines())
    return lines


def grep_category(root: Path) -> str:
    lines = read_lines(root)
    for pattern, category in COMPILED:
        if any(pattern.search(line) for line in lines):
            return category
    return "none"
