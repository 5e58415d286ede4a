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


# source: https://github.com/horovod/horovod/issues/288 (NCCL 2.2.12, two hosts, Docker without MLNX_OFED)
OLD_NCCL_TWO_HOSTS = """\
C4140-V100-1:24:201 [0] misc/ibvwrap.cu:61 WARN Failed to open libibverbs.so[.1]
C4140-V100-1:24:201 [0] INFO Using internal Network Socket
C4140-V100-1:24:201 [0] INFO NET : Using interface ib0:192.168.11.1<0>
C4140-V100-2:24:229 [0] misc/ibvwrap.cu:61 WARN Failed to open libibverbs.so[.1]
C4140-V100-2:24:229 [0] INFO Using internal Network Socket
"""


def test_sockets_over_ipoib_between_two_hosts_are_the_fallback_cause(tmp_path):
    (tmp_path / "console.log").write_text(OLD_NCCL_TWO_HOSTS)
    report = nccllens.analyze(str(tmp_path))
    assert report.verdict.category == "ib_fallback"
    assert set(report.findings[0].hosts) == {"C4140-V100-1", "C4140-V100-2"}


def test_sockets_over_ipoib_on_one_host_stay_context():
    # https://github.com/microsoft/MeshTransformer/issues/38: one 8-GPU node, NET/Socket over ib0, libibverbs missing
    found = _fallback("healthy_meshtransformer_aml_mpi_libibverbs_warn")
    assert found and all(sev == "info" for _, sev, _ in found)


def test_sockets_over_ipoib_in_a_paste_without_host_names_are_the_fallback_cause():
    # https://github.com/sgl-project/sglang/pull/1427 (libibverbs added to the Docker image): the author pasted the
    # two NCCL lines with the prefix stripped and the address redacted; nothing shows the job was on one node
    report = nccllens.analyze(str(PUBLIC / "sglang_docker_no_libibverbs_socket_over_ib0"))
    assert report.verdict.category == "ib_fallback"
    assert report.findings[0].severity == "warning"


def test_a_device_nccl_could_not_open_is_the_fallback_not_an_unexplained_warn():
    # https://github.com/NVIDIA/nccl/issues/451: ibv_open_device fails inside Docker, then "No device found"
    report = nccllens.analyze(str(PUBLIC / "deepspeed_docker_ibv_open_device_failed_socket"))
    assert report.verdict.category == "ib_fallback"
    assert report.findings[0].rule == "NL-IB-015"


def test_a_host_local_interface_in_the_socket_list_is_idle_where_nccl_runs_over_infiniband():
    # https://github.com/NVIDIA/nccl-tests/issues/29: 4 nodes, NET/IB on mlx5; virbr0 is listed second by NET/Socket
    report = nccllens.analyze(str(PUBLIC / "healthy_nccltests_4node_32rank_ib_no_plugin_virbr0_perf_question"))
    assert report.verdict.category in ("none", "unknown") and report.verdict.finding is None  # no failure named
    assert all(f.severity == "info" for f in report.findings if f.rule == "NL-NET-007")


def test_a_host_local_interface_in_the_socket_list_counts_where_nccl_runs_over_sockets():
    # https://github.com/pytorch/pytorch/issues/68893: NCCL 2.7.8 on AWS over sockets, a veth listed beside ens5
    report = nccllens.analyze(str(PUBLIC / "aws_2node_ddp_nccl278_bootstrap_ens5_plus_veth_linklocal_unreachable"))
    assert report.verdict.category == "network_interface"


def test_a_net_plugin_loaded_on_one_host_and_missing_on_the_other_is_a_configuration_difference():
    # https://github.com/NVIDIA/nccl/issues/1634: NCCL 2.19+ prints "Plugin Path : .../libnccl-net.so" where the
    # HPC-X plugin loads and "Could not find: libnccl-net.so. Using internal network plugin." where it does not
    report = nccllens.analyze(str(PUBLIC / "nccltests_2node_h100_hang_hpcx_net_plugin_only_on_some_nodes"))
    assert report.verdict.category == "config_mismatch"
    assert "HGX-H100-11" in report.findings[0].hosts


def test_summarised_nccl_lines_count_as_a_second_host():
    # https://github.com/aws/aws-k8s-tester/pull/474: mpirun --tag-output from two pods; rank 10's libfabric
    # warning states no host, and the file's NCCL lines name two (worker-1 only in transport lines)
    import nccllens

    case = Path(__file__).resolve().parents[2] / "fixtures" / "public" / "k8s_mpijob_p5_bad_ami_efa_gdr_fail_nccl_socket_fallback"
    top = nccllens.analyze(str(case)).findings[0]
    assert (top.rule, top.category, top.ranks) == ("NL-IB-017", "ib_fallback", [10])
    assert "multi-node-nccl-test-worker-0" not in top.hosts


def test_inter_node_socket_channels_beside_an_ipoib_interface_are_an_ib_fallback():
    # https://github.com/NVIDIA/nccl/issues/952: a Docker run, bootstrap on ibp12s0 (IPoIB), no IB device in
    # the container, channels to the other node via NET/Socket, then a socket connect fails
    import nccllens

    case = Path(__file__).resolve().parents[2] / "fixtures" / "public" / "megatron_docker_no_ib_device_ibext_socket_connect_fail"
    report = nccllens.analyze(str(case))
    top = report.findings[0]
    assert (top.rule, top.category) == ("AN-SOCKETS-BESIDE-IPOIB", "ib_fallback")
    assert "ibp12s0" in top.title
    assert report.verdict.category == "ib_fallback"


def test_no_ib_device_is_no_fallback_where_no_node_shows_rdma():
    import nccllens

    public = Path(__file__).resolve().parents[2] / "fixtures" / "public"
    # https://github.com/NVIDIA/nccl/issues/398: two AWS instances without EFA, NCCL over sockets as expected
    report = nccllens.analyze(str(public / "healthy_aws_p3dn_2node_ofi_only_efa_warn_socket_bw_question"))
    assert [(f.severity, f.role) for f in report.findings if f.rule == "NL-IB-008"] == [("info", "context")]
    assert report.verdict.finding is None
    # https://github.com/pytorch/pytorch/issues/111424: NCCL_IB_DISABLE=0 set on an IB cluster whose container lacked /dev/infiniband
    report = nccllens.analyze(str(public / "torchrun_slurm_ib_not_mapped_in_container"))
    assert report.findings[0].rule == "NL-IB-008" and report.findings[0].role == "cause"


def test_a_cause_without_a_host_takes_the_one_host_the_logs_name():
    # https://github.com/ArjunaCluster/ArjunaUsers/issues/52: slurmstepd's oom-kill line names no host; the
    # interactive session's prompt (with blanks before its "$") names c002, the only host in the logs
    import nccllens

    case = Path(__file__).resolve().parents[2] / "fixtures" / "public" / "slurm_cgcnn_gpu_batch_cgroup_oom_kill_event_killed"
    top = nccllens.analyze(str(case)).findings[0]
    assert (top.category, top.hosts) == ("host_oom", ["c002"])


def test_folders_above_the_folder_given_name_no_host(tmp_path):
    # the same paste kept under a CI workspace whose folder looks like a machine's name (``ci19``): only the
    # folder given and what lies below it may name the host
    import shutil

    import nccllens

    case = Path(__file__).resolve().parents[2] / "fixtures" / "public" / "slurm_cgcnn_gpu_batch_cgroup_oom_kill_event_killed"
    kept = tmp_path / "ci19" / "main" / case.name
    shutil.copytree(case, kept)
    top = nccllens.analyze(str(kept)).findings[0]
    assert (top.category, top.hosts) == ("host_oom", ["c002"])


def _local_iface(case: str) -> list[tuple[str, str]]:
    report = nccllens.analyze(str(PUBLIC / case))
    return [(f.severity, f.role) for f in report.findings if f.rule == "NL-NET-007"]


def test_loopback_bootstrap_with_no_host_names_is_context_when_shared_memory_links_every_rank():
    # https://github.com/NVIDIA/nccl/issues/1190: two ranks, prefixes stripped, bootstrap on lo; rank 1 -> 0 via
    # direct shared memory links both ranks of "nranks 2": only ranks of one node can share memory
    found = _local_iface("nccl_2080ti_two_rank_shm_libibverbs_warn")
    assert found and all(sev == "info" and role == "context" for sev, role in found)
    assert nccllens.analyze(str(PUBLIC / "nccl_2080ti_two_rank_shm_libibverbs_warn")).verdict.finding is None


# synthetic: NCCL 2.7-era "Channel %02d : %d[%lx] -> %d[%lx] via %s" lines (format of NVIDIA/nccl#1190), prefix
# stripped, where a NET edge joins the two ranks: a multi-node job, whose loopback bootstrap stays a warning
TWO_NODES_NO_HOSTS = """\
NCCL INFO Bootstrap : Using lo:127.0.0.1<0>
NCCL INFO Channel 00 : 1[89000] -> 0[3d000] [send] via NET/Socket/0
NCCL INFO comm 0x7fac840181a0 rank 1 nranks 2 cudaDev 0 busId 89000 - Init COMPLETE
"""


def test_loopback_bootstrap_stays_a_warning_when_a_network_connection_joins_the_ranks(tmp_path):
    (tmp_path / "ranks.log").write_text(TWO_NODES_NO_HOSTS)
    report = nccllens.analyze(str(tmp_path))
    found = [(f.severity, f.role) for f in report.findings if f.rule == "NL-NET-007"]
    assert found == [("warning", "cause")]


# synthetic: the same NCCL 2.7-era lines, four ranks of which shared memory links only two: the other two may sit
# on another node, so nothing shows a one-node job
TWO_OF_FOUR_LINKED = """\
NCCL INFO Bootstrap : Using lo:127.0.0.1<0>
NCCL INFO Channel 00 : 1[89000] -> 0[3d000] via direct shared memory
NCCL INFO comm 0x7fac840181a0 rank 1 nranks 4 cudaDev 0 busId 89000 - Init COMPLETE
"""


def test_loopback_bootstrap_stays_a_warning_when_shared_memory_links_only_some_ranks(tmp_path):
    (tmp_path / "ranks.log").write_text(TWO_OF_FOUR_LINKED)
    report = nccllens.analyze(str(tmp_path))
    assert [(f.severity, f.role) for f in report.findings if f.rule == "NL-NET-007"] == [("warning", "cause")]


# composed (the scenario is synthetic): the prefix-stripped two-rank NCCL start-up of NVIDIA/nccl#1190 (rank 1 -> 0
# over shared memory, "nranks 2"), then both ranks' watchdog timeouts in collective 1: rank 1's line is real
# (https://github.com/huggingface/picotron_tutorial/issues/6, torch 2.x), rank 0's is built from the same format
FIRST_COLLECTIVE_NO_HOSTS = """\
NCCL INFO Bootstrap : Using lo:127.0.0.1<0>
NCCL INFO Channel 00 : 1[89000] -> 0[3d000] via direct shared memory
NCCL INFO Channel 01 : 1[89000] -> 0[3d000] via direct shared memory
NCCL INFO comm 0x7fac840181a0 rank 1 nranks 2 cudaDev 0 busId 89000 - Init COMPLETE
[E ProcessGroupNCCL.cpp:474] [Rank 1] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=120000) ran for 120621 milliseconds before timing out.
[E ProcessGroupNCCL.cpp:474] [Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=120000) ran for 120633 milliseconds before timing out.
"""


def test_every_rank_stuck_in_collective_1_of_a_job_its_links_show_on_one_node_is_a_p2p_suspect(tmp_path):
    (tmp_path / "console.log").write_text(FIRST_COLLECTIVE_NO_HOSTS)
    report = nccllens.analyze(str(tmp_path))
    assert report.findings[0].rule == "AN-FIRST-COLLECTIVE-HANG"
    assert report.findings[0].category == "p2p_topology" and report.findings[0].hosts == []


def test_without_hosts_or_links_collective_1_timeouts_make_no_p2p_suspect(tmp_path):
    (tmp_path / "console.log").write_text("\n".join(FIRST_COLLECTIVE_NO_HOSTS.splitlines()[4:]) + "\n")
    report = nccllens.analyze(str(tmp_path))
    assert not [f for f in report.findings if f.rule == "AN-FIRST-COLLECTIVE-HANG"]
