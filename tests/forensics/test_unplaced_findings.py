"""A finding that cannot say where ranks as high as the logs allow: in logs that name one host or none,
no host is no sign that it is vague."""

from __future__ import annotations

from pathlib import Path

import nccllens

PUBLIC = Path(__file__).resolve().parents[2] / "fixtures" / "public"


def test_a_lost_gpu_without_a_host_explains_the_silent_rank_of_a_one_node_job(tmp_path):
    # https://github.com/lyulyul/shine-cluster/issues/171: ranks 1-3 time out while rank 0
    # is silent; nvidia-smi on the node cannot get a handle for one GPU
    case = PUBLIC / "slurm_4gpu_ddp_allreduce_timeout_rank0_gpu_lost_hoth"
    for f in case.glob("*.*"):
        if f.suffix in (".log", ".out"):
            (tmp_path / f.name).write_bytes(f.read_bytes())
    report = nccllens.analyze(str(tmp_path))
    assert report.verdict.category == "gpu_hardware"
    top = report.findings[0]
    assert top.rule == "NL-GPU-019"
    assert any(f.rule == "AN-COLLECTIVE-ABSENT" and f.explained_by == top.id for f in report.findings)


def test_a_finding_that_names_its_host_still_comes_before_one_that_does_not():
    # https://github.com/awslabs/ai-on-eks/issues/240: the unresolvable rendezvous host is named
    report = nccllens.analyze(str(PUBLIC / "slinky_slurm_eks_rdzv_hostname_slinky0_unresolvable"))
    assert report.findings[0].rule == "NL-NET-008" and report.findings[0].hosts == ["slinky-0"]
