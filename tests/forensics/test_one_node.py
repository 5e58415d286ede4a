"""No RDMA on one node is harmless: NCCL's network transport carries only inter-node traffic."""

from __future__ import annotations

from pathlib import Path

import nccllens

PUBLIC = Path(__file__).resolve().parents[2] / "fixtures" / "public"


def _fallback(case: str) -> list[tuple[str, str, str]]:
    report = nccllens.analyze(str(PUBLIC / case))
    return [(f.rule, f.severity, f.role) for f in report.findings if f.category == "ib_fallback"]


def test_ib_disabled_on_a_one_node_job_whose_connections_are_all_intra_node_is_context():
    # https://github.com/Lightning-AI/pytorch-lightning/issues/4420: 2 GPUs, NCCL_IB_DISABLE=1, P2P between them
    found = _fallback("healthy_lightning_2xv100_ib_disabled_socket_p2p")
    assert found and all(sev == "info" and role == "context" for _, sev, role in found)


def test_a_job_whose_connections_cross_nodes_keeps_its_socket_fallback():
    # a DeepSpeed job in Docker without the IB devices: inter-node channels over sockets
    assert ("NL-IB-008", "warning", "cause") in _fallback("deepspeed_docker_ibv_open_device_failed_socket")
