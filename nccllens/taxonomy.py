"""The root-cause categories every finding carries (shared/taxonomy.md): names never change meaning."""

from __future__ import annotations

CATEGORIES: tuple[str, ...] = (
    "gpu_hardware",
    "gpu_oom",
    "host_oom",
    "shm_exhausted",
    "network_unreachable",
    "peer_exited",
    "ib_fabric",
    "ib_fallback",
    "network_interface",
    "collective_timeout",
    "rank_divergence",
    "straggler",
    "config_mismatch",
    "cuda_error",
    "p2p_topology",
    "job_killed",
    "rendezvous_timeout",
    "dataloader_crash",
    "application_error",
    "nccl_internal",
)

# Verdict-only values: a run with no cause ("none") or whose cause the logs do not show ("unknown").
# A rule or a finding never carries them.
RESERVED_VERDICTS: tuple[str, ...] = ("none", "unknown")

SEVERITIES: tuple[str, ...] = ("critical", "error", "warning", "info")
ROLES: tuple[str, ...] = ("cause", "symptom", "context")


def is_category(name: str) -> bool:
    return name in CATEGORIES
