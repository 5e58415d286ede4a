"""The ranks an NCCL message names are the culprits (issue 16 §3.6), also where no parser filled ``peer``."""

from __future__ import annotations

import nccllens
from nccllens.engine.peers import named_in_message


def test_named_in_message():
    assert named_in_message("Duplicate GPU detected : rank 0 and rank 1 both on CUDA device 2000") == "ranks 0, 1"
    assert named_in_message("Mismatched collective detected, please check your collective calls at and around "
                            "rank 39. You can use NCCL_DEBUG=INFO") == "rank 39"
    assert named_in_message("[Rank 3] Watchdog caught collective operation timeout") is None


def test_duplicate_gpu_payload_names_both_ranks(tmp_path):
    # source: https://github.com/Peterande/D-FINE/issues/289 (the Last error: payload of a PyTorch exception,
    # NCCL 2.19.3)
    (tmp_path / "train.log").write_text(
        "torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1691, "
        "invalid usage (run with NCCL_DEBUG=WARN for details), NCCL version 2.19.3\n"
        "ncclInvalidUsage: This usually reflects invalid usage of NCCL library.\n"
        "Last error:\n"
        "Duplicate GPU detected : rank 0 and rank 1 both on CUDA device 2000\n")
    top = nccllens.analyze(str(tmp_path)).findings[0]
    assert top.category == "config_mismatch" and top.ranks == [0, 1]


def test_duplicate_gpu_keeps_the_reporters_host(tmp_path):
    # source: https://github.com/horovod/horovod/issues/3929 (Open MPI --tag-output prefix): the two ranks share a
    # GPU, so they are on the host that printed it
    (tmp_path / "train.log").write_text(
        "[1,2]<stdout>:smc-gpu-03:29880:30398 [0] init.cc:497 NCCL WARN Duplicate GPU detected : rank 2 and rank 0 "
        "both on CUDA device 1000\n")
    top = nccllens.analyze(str(tmp_path)).findings[0]
    assert top.ranks == [0, 2] and top.hosts == ["smc-gpu-03"]


def test_mismatched_collective_blames_the_rank_it_names(tmp_path):
    # source: https://github.com/NVIDIA/nccl/issues/296 (NCCL 2.4.8)
    (tmp_path / "train.log").write_text(
        "init.cc:1247 NCCL WARN Mismatched collective detected, please check your collective calls at and around "
        "rank 39. You can use NCCL_DEBUG=INFO and NCCL_DEBUG_SUBSYS=COLL to see the collective logs\n")
    top = nccllens.analyze(str(tmp_path)).findings[0]
    assert top.category == "rank_divergence" and top.ranks == [39]


def test_named_in_message_reads_the_node_ray_names_by_address():
    # source: https://github.com/vllm-project/vllm/issues/1160 (the raylet's report) and
    # https://github.com/verl-project/verl/issues/2950 (the OutOfMemoryError's text)
    assert named_in_message("1 Workers (tasks / actors) killed due to memory pressure (OOM), 0 Workers crashed due to "
                            "other reasons at node (ID: 4fe2, IP: 10.0.167.26) over the last time period.") == "10.0.167.26"
    assert named_in_message("Memory on the node (IP: 10.20.49.141, ID: 4748aa6d) where the task (actor ID: 9e43, "
                            "name=WorkerDict.__init__, pid=4100606, memory used=56.57GB) was running") == "10.20.49.141"
    # source: https://github.com/NovaSky-AI/SkyRL/pull/1688 (Ray's autoscaler names the instance)
    assert named_in_message("(autoscaler +44m27s) Instance k-1a5e56fa0001 (node IP: 10.1.140.199) will be terminated "
                            "soon (reason: kubernetes-pod-termination).") == "k-1a5e56fa0001"


def test_ray_memory_monitor_kill_names_the_node_it_killed_on():
    # the driver that printed the OutOfMemoryError is not the node that ran out of memory: the message names it
    from pathlib import Path

    case = Path(__file__).resolve().parents[2] / "fixtures" / "public" / "verl_dapo_ray_memory_monitor_kills_rollout_worker_246of251gb"
    report = nccllens.analyze(str(case))
    top = report.findings[0]
    assert top.category == "host_oom" and top.hosts == ["10.20.49.141"]
    assert "10.20.49.141" in top.title and "?" not in top.title
