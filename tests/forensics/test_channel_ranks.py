"""A process's own NCCL transport lines name its rank: ``Channel 00 : 0[1020] -> 2[1040]`` is written by rank 0.
NCCL INFO/WARN prefixes carry the CUDA device (``[0]``), not the rank, so without Init lines these are what
tie a WARN to its rank."""

from __future__ import annotations

import nccllens

# source: https://github.com/PKU-YuanGroup/Open-Sora-Plan/issues/386 (NCCL 2.18/2.19, 4 GPUs, one node)
OPEN_SORA = """\
ins-7df6eojsifuykig9:3018453:3024011 [2] NCCL INFO Channel 01 : 2[1040] -> 0[1020] via SHM/direct/direct
ins-7df6eojsifuykig9:3018451:3024010 [0] NCCL INFO Channel 00 : 0[1020] -> 2[1040] via SHM/direct/direct
ins-7df6eojsifuykig9:3018451:3024010 [0] NCCL INFO Channel 01 : 0[1020] -> 3[1050] via SHM/direct/direct
ins-7df6eojsifuykig9:3018452:3024012 [1] NCCL INFO Channel 00 : 1[1030] -> 0[1020] via SHM/direct/direct

ins-7df6eojsifuykig9:3018451:3018451 [0] enqueue.cc:1085 NCCL WARN Cuda failure 'out of memory'
"""

# source: https://github.com/ray-project/ray_lightning/issues/24 (NCCL 2.7.8 under Ray, ``(pid=N)`` prefix)
RAY = """\
(pid=909608) z-pc:909608:910337 [0] NCCL INFO Channel 00 : 0[2d000] -> 1[2e000] via P2P/IPC
(pid=909608) z-pc:909608:910337 [0] transport/p2p.cc:238 NCCL WARN failed to open CUDA IPC handle : 217 peer access is not supported between these two devices
"""


def test_warn_takes_the_rank_of_its_process_channel_lines(tmp_path):
    (tmp_path / "train.log").write_text(OPEN_SORA)
    top = nccllens.analyze(str(tmp_path)).findings[0]
    assert top.category == "gpu_oom"
    assert top.ranks == [0] and top.hosts == ["ins-7df6eojsifuykig9"]


def test_ray_prefixed_process_maps_to_its_channel_rank(tmp_path):
    (tmp_path / "tune.log").write_text(RAY)
    top = nccllens.analyze(str(tmp_path)).findings[0]
    assert top.category == "p2p_topology" and top.ranks == [0]


def test_a_process_in_two_communicators_gets_no_rank_from_channels(tmp_path):
    # synthetic edit of the lines above: the same process writing channel lines as rank 0 and as rank 1 (two
    # communicators): ambiguous
    (tmp_path / "train.log").write_text(
        OPEN_SORA.replace("0[1020] -> 3[1050]", "1[1020] -> 3[1050]"))
    top = nccllens.analyze(str(tmp_path)).findings[0]
    assert top.category == "gpu_oom" and top.ranks == []


# source: https://github.com/NVIDIA/nccl/issues/380 (NCCL 2.7.8, XGBoost on Spark, two nodes over RoCE): the
# ``[receive]`` line is printed by the receiving rank, the ``[send]`` line by the sender
SPARK = """\
spark01:2683:2826 [0] NCCL INFO Channel 00 : 1[3000] -> 0[3000] [receive] via NET/IB/0
spark01:2683:2826 [0] NCCL INFO Channel 00 : 0[3000] -> 1[3000] [send] via NET/IB/0

spark01:2683:2826 [0] misc/ibvwrap.cc:268 NCCL WARN Call to ibv_create_cq failed
"""


def test_receive_lines_name_the_receiver(tmp_path):
    (tmp_path / "node1.log").write_text(SPARK)
    top = nccllens.analyze(str(tmp_path)).findings[0]
    assert top.category == "ib_fabric"
    assert top.ranks == [0] and top.hosts == ["spark01"]


def test_warn_takes_the_rank_its_process_states_when_its_communicator_is_torn_down():
    # https://github.com/modelscope/ms-swift/issues/2776 (Docker, 3 ranks): the shm WARN comes from pid 21611, whose
    # "comm … rank 2 nranks 3 … Abort COMPLETE" line says which rank it was
    from pathlib import Path
    case = Path(__file__).resolve().parents[2] / "fixtures" / "public" / "swift_docker_shm_nccl_segment"
    top = nccllens.analyze(str(case)).findings[0]
    assert top.category == "shm_exhausted"
    assert top.ranks == [2] and top.hosts == ["2edaa9ce4458"]


def test_a_host_level_cause_names_no_ranks_while_a_rank_of_the_world_is_unplaced():
    # https://github.com/huggingface/accelerate/issues/1993: 3 ranks on one VM; the WARN's process never says its rank
    # and rank 1 is placed nowhere, so the host's known ranks (0, 2) are not the culprit list
    from pathlib import Path
    case = (Path(__file__).resolve().parents[2] / "fixtures" / "public"
            / "accelerate_azure_a100_3of4_gpus_nccl_graph_file_dev3_not_found")
    top = nccllens.analyze(str(case)).findings[0]
    assert top.rule == "NL-NCCL-021" and top.category == "config_mismatch"
    assert top.ranks == [] and top.hosts == ["a100-4x-machines-23fsd-2-dev"]
