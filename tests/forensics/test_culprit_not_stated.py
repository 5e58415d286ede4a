"""Where the culprit is when the lines do not say it: a finding without a host in logs of one host or none, and the
main process that other ranks wait for."""

from __future__ import annotations

from pathlib import Path

import pytest

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


@pytest.mark.parametrize("case", [
    # https://github.com/shibing624/MedicalGPT/issues/425: ranks 1 and 3 time out in the barrier of
    # main_process_first while rank 0 tokenises the dataset
    "medicalgpt_rank0_tokenizing_29min_ranks1_3_main_process_first_barrier_timeout",
    # https://github.com/hiyouga/LlamaFactory/issues/360 (the paste stops two frames into the wait, entering
    # main_process_first): rank 0 was still tokenising (88% after 29:55) when the waiting rank's barrier failed
    "llamafactory_rank0_tokenize_30min_main_process_first_barrier_timeout",
])
def test_a_traceback_that_stops_in_main_process_first_blames_the_main_process(case, tmp_path):
    (tmp_path / "train.log").write_bytes((PUBLIC / case / "train.log").read_bytes())
    report = nccllens.analyze(str(tmp_path))
    top = report.findings[0]
    assert (report.verdict.category, top.rule, top.ranks) == ("straggler", "AN-MAIN-FIRST-WAIT", [0])
    assert "main_process_first" in top.summary


def test_the_node_named_past_the_300th_character_of_an_error_record_is_the_culprit(tmp_path):
    # https://github.com/vllm-project/vllm/issues/15102: vLLM's logger prints Ray's OOM record; the node's IP is
    # early in the line, the usage and threshold the rule reads come after character 300
    case = PUBLIC / "vllm_v1_ray_tp16_h20_channel_timeout_worker_2tb_host_oom"
    for f in case.glob("*.log"):
        (tmp_path / f.name).write_bytes(f.read_bytes())
    report = nccllens.analyze(str(tmp_path))
    top = report.findings[0]
    assert (report.verdict.category, top.rule, top.hosts) == ("host_oom", "NL-JOB-040", ["29.45.33.204"])
