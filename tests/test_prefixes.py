"""Launcher prefixes, stacked as real logs stack them, and what they say about rank and host."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from nccllens.ingest.layout import hints_for
from nccllens.parse.prefixes import split_glued, strip

CASES = [
    # real: shared/reference/samples/torch2.13_cpu_logs/detail_monitored_barrier_tee3.log (torchrun --tee 3)
    ("[default0]:[rank0]:[E1122 02:47:18.374266894 ProcessGroupGloo.cpp:2901] [Rank 0]: Rank 1 failed to pass "
     "monitoredBarrier in 10000 ms", "[E1122 02:47:18.374266894 ProcessGroupGloo.cpp:2901]", None, 0, 0),
    # real: shared/reference/pytorch_c10d.md §1 (Ray actor prefix, NVIDIA-NeMo/RL logs)
    ("(MegatronPolicyWorker[rank=31] pid=3264030, ip=10.1.101.236) [rank31]:[E323 05:14:22.517801495 "
     "ProcessGroupNCCL.cpp:1858] [PG ID 0 PG GUID 0(default_pg) Rank 31] Received a dump signal",
     "[E323 05:14:22.517801495", "10.1.101.236", 31, None),
    # real: shared/reference/samples/torch2.13_cpu_logs/torchrun_worker_exception_with_record.log
    ("[rank1]: KeyError: 'missing_batch_key'", "KeyError:", None, 1, None),
    # synthetic: Open MPI --tag-output format "[jobid,rank]<stream>:" around a real NCCL INFO line
    ("[1,3]<stderr>:gpu-node-07:2211:2211 [0] NCCL INFO Bootstrap : Using eth0:10.0.0.7<0>",
     "gpu-node-07:2211:2211 [0] NCCL INFO", None, 3, None),
    # synthetic: srun --label pads the task id: "%*d: "
    ("  3: Traceback (most recent call last):", "Traceback (most recent call last):", None, 3, None),
    # synthetic: kubectl logs --prefix --timestamps ("<RFC3339Nano> " then "[pod/<name>/<container>] ")
    ("2026-11-22T03:12:05.123456789Z [pod/train-worker-1/pytorch] [rank5]: RuntimeError: boom",
     "RuntimeError: boom", "train-worker-1", 5, None),
    # synthetic: pdsh "host: " prefix
    ("gpu-node-03: [rank2]: Traceback (most recent call last):", "Traceback", "gpu-node-03", 2, None),
    # real: https://github.com/ArjunaCluster/ArjunaUsers/issues/52 (a conda env, blanks before the prompt's "$")
    ("(abnn) mingzeya@c002:~/CGCNN_project/AbNN_benchmark/hform/case1    $ ", "", "c002", None, None),
    # real: https://github.com/aws/aws-k8s-tester/pull/474 (a paste indented as a whole: a code block in a list)
    ("        [1,10]<stderr>:libfabric:22:1725400706::efa:domain:efa_domain_hmem_info_init_cuda():169<warn> Failed to "
     "register CUDA buffer with the EFA device", "libfabric:22:", None, 10, None),
    # real: fixtures/public/slurm_srun_background_step_cancelled_on_ssh_logout/auth.log (a journal: "host ident[pid]: ")
    ("Feb 15 01:52:09 eureka sshd[3478847]: pam_unix(sshd:session): session closed for user qiqig",
     "pam_unix(sshd:session)", "eureka", None, None),
]


@pytest.mark.parametrize(("raw", "starts", "host", "rank", "local_rank"), CASES)
def test_prefixes_are_stripped_and_attributed(raw, starts, host, rank, local_rank):
    p = strip(raw)
    assert p.message.startswith(starts)
    assert (p.host, p.rank, p.local_rank) == (host, rank, local_rank)


@pytest.mark.parametrize("raw", [
    "node1:123:456 [0] NCCL INFO Using network Socket",  # NCCL's own prefix is the NCCL parser's
    "time      : 2026-11-22_02:46:57",  # failure-table field, not a host
    "Error: something",
    "iter 1: RuntimeError: Expected to have finished reduction",
    # real: shared/reference/dmesg_xid.md §2.3 (kernel device names are not pdsh host prefixes)
    "nvidia-nvswitch0: SXid (PCI:0000:00:00.0): 20034, Fatal, Link 30 LTSSM Fault Up",
    "ib0: Lost carrier",
    # real: https://github.com/aws/aws-k8s-tester/pull/474 (indented, but no prefix after the indent: kept whole)
    "    mpi_test.go:137: GPU Direct RDMA is not utilized for inter-node communication in NCCL tests on instances "
    "that support GDRDMA: p5.48xlarge",
    # real: https://github.com/ZwwWayne/K-Net/issues/30 (the slurm family reads slurmstepd's own host)
    "slurmstepd-gpu20-15: error: *** STEP 9411285.0 ON gpu20-15 CANCELLED AT 2022-05-17T17:58:10 ***",
])
def test_message_text_is_not_mistaken_for_a_prefix(raw):
    assert strip(raw).message == raw


def test_a_tagged_line_glued_after_a_bar_is_split():
    # real: https://github.com/deepspeedai/DeepSpeed/issues/294 (mpirun --tag-output; tqdm redraws without a newline)
    raw = "Iteration:  31%|███▏      | 491/1559 [04:35<07:28,  2.38it/s][1,290]<stderr>:!!!! kernel execution error."
    assert split_glued(raw) == ["Iteration:  31%|███▏      | 491/1559 [04:35<07:28,  2.38it/s]",
                                "[1,290]<stderr>:!!!! kernel execution error."]


def test_two_ranks_glued_on_one_line_are_split():
    # real: shared/reference/samples/torch2.13_cpu_logs/detail_fingerprint_shape_mismatch.log
    raw = "Collectives differ in the following aspects:   Tensor Tensor shapes: 32vs 16[rank0] caught builtins.Run"
    assert split_glued(raw) == ["Collectives differ in the following aspects:   Tensor Tensor shapes: 32vs 16",
                                "[rank0] caught builtins.Run"]


@pytest.mark.parametrize(("path", "host", "rank", "local_rank", "attempt"), [
    ("logs/node-a/console.log", "node-a", None, None, None),
    ("run/none_r1xerfgw/attempt_2/3/stderr.log", None, None, 3, 2),
    ("node07/dmesg.txt", "node07", None, None, None),
    ("dmesg-gpu-node-07.txt", "gpu-node-07", None, None, None),
    ("rank12.log", None, 12, None, None),
    ("slurm-48213.out", None, None, None, None),
    ("bundle.tar.gz!gpu-node-02/kern.log", "gpu-node-02", None, None, None),
    ("nccl.gpu-node-05.31337.log", "gpu-node-05", None, None, None),
    ("worker_0/stderr.log", "worker_0", None, None, None),
    # a folder named for what happened (words joined by "_") names no machine, whatever word it starts with
    ("gpu_h200_accelerate_launch_cuda_oom/console.log", None, None, None, None),
])
def test_path_layouts_give_hints(path, host, rank, local_rank, attempt):
    h = hints_for(path)
    assert (h.host, h.rank, h.local_rank, h.attempt) == (host, rank, local_rank, attempt)


_PREFIXY = st.sampled_from(["2026-03-18T07:39:53.792795Z ", "[pod/train-0/main] ", "[1,3]<stdout>:", "(pid=7, ip=10.0.0.3) ",
                            "(RayTrainWorker pid=7) ", "[default0]:", "[rank3]: ", "  12: ", "node-a: ", "gpu-node-000:4:5 ",
                            "", " ", "x", "9", "[", "(", ":", "\t"])


@given(st.lists(_PREFIXY, max_size=4), st.text(max_size=30))
def test_the_quick_start_check_changes_nothing(parts, tail):
    # strip() leaves at once a line that no prefix can start; it must give what trying each prefix gives
    import re

    from nccllens.parse import prefixes

    raw = "".join(parts) + tail
    quick = prefixes.strip(raw)
    saved = prefixes._MAY_START
    prefixes._MAY_START = re.compile("")  # every line tried against every prefix
    try:
        assert prefixes.strip(raw) == quick
    finally:
        prefixes._MAY_START = saved


def _host_candidates_part_by_part(path: str) -> list[str]:
    """The path's host-like parts, judged one part at a time (the reference the folder cache must equal)."""
    import re

    from nccllens.ingest.layout import _hostlike

    parts = [p for p in re.split(r"[/!]", path) if p and p not in (".", "..")]
    out = []
    for i, part in enumerate(parts):
        pieces = [part]
        if i == len(parts) - 1:
            stem = re.sub(r"(?:\.(?:log|txt|out|err|gz|json))+$", "", part, flags=re.I)
            bare = re.sub(r"^(?:dmesg|kern|syslog|journal|console|nccl)[-_]|[-_](?:dmesg|kern|syslog|journal|console)$",
                          "", stem, flags=re.I)
            pieces = [bare, stem] + [p for p in re.split(r"[._]", stem) if p]
        out += [next(p for p in pieces if _hostlike(p))] if any(_hostlike(p) for p in pieces) else []
    return out


_PATH_PARTS = st.sampled_from(["logs", "gpu-node-07", "node07", "dmesg", "dmesg-node07.txt", "node07-console.log",
                               "nccl.gpu-node-05.31337.log", "rank3", "attempt_0", "job.tar.gz!node1", "x.zip!dn3",
                               "worker-2.log", "console.log", "ip-10-0-0-7", ".", "..", "trainer_1", "Stdout.LOG"])


@given(st.lists(_PATH_PARTS, min_size=1, max_size=6))
def test_host_candidates_equal_judging_each_part(parts):
    from nccllens.ingest.layout import _host_candidates

    path = "/".join(parts)
    if parts[-1] in (".", ".."):  # a folder, not a file: never a source's name
        return
    assert _host_candidates(path) == _host_candidates_part_by_part(path)


# --- the shape table (issue 16 §3.4): real lines from the dev corpus -------------------------------

TABLE_CASES = [
    # real: fixtures/public/efa_mpijob_security_group_ofi_error (Open MPI --tag-output, MPIJob)
    ("[1,13]<stdout>:nccl-tests-worker-1:35:89 [5] ofi_process_cq:1039 NCCL WARN NET/OFI Request 0x7fbb944701b8 "
     "completed with error.", "nccl-tests-worker-1:35:89", None, 13, None),
    # real: vLLM V1 multiproc executor (fixtures/public, "(VllmWorker rank=0 pid=...)" lines)
    ("(VllmWorker rank=0 pid=3781015) ERROR 08-16 11:45:16 [multiproc_executor.py:511] KeyError: 'x'",
     "ERROR 08-16", None, 0, None),
    # real: torchrun --tee under a CI timestamp (qwen_coder_finetune_oom_rank3_timestamped's collector stamp)
    ("2024-11-20 14:37:16 [rank3]: torch.OutOfMemoryError: CUDA out of memory.", "torch.OutOfMemoryError", None, 3,
     None),
    # real: srun --label before torch's rank prefix (fixtures/public/weathergen_timeout_seq52_batch)
    ("1: [rank1]:[E702 12:22:50.103110475 ProcessGroupNCCL.cpp:629] [Rank 1] Watchdog caught collective operation "
     "timeout", "[E702", None, 1, None),
    # synthetic shapes, as the tools print them: horovodrun (Gloo controller), SGLang scheduler, vLLM V1 TP
    # workers, a shell prompt, a DeepSpeed/pdsh host that is a container id
    ("[2]<stderr>:Traceback (most recent call last):", "Traceback", None, 2, None),
    ("[2025-03-14 10:20:31 TP3] Scheduler hit an exception: Traceback", "Scheduler hit", None, 3, None),
    ("[2025-03-14 10:20:31 PP1 TP0] Scheduler hit an exception", "Scheduler hit", None, None, None),
    ("(VllmWorker TP1 pid=2212) INFO 03-14 10:20:31 [gpu_worker.py:82] ready", "INFO 03-14", None, 1, None),
    ("(Worker_PP1_TP0 pid=2212) INFO ready", "INFO ready", None, None, None),
    ("(RayTrainWorker pid=123, ip=10.0.0.1) Traceback (most recent call last):", "Traceback", "10.0.0.1", None, None),
    ("root@8d6bf97c3bf4:/workspace# torchrun --nproc_per_node 8 train.py", "torchrun", "8d6bf97c3bf4", None, None),
    ("8d6bf97c3bf4: [rank5]: RuntimeError: boom", "RuntimeError", "8d6bf97c3bf4", 5, None),
    ("[rank=2] RuntimeError: boom", "RuntimeError", None, 2, None),
]


@pytest.mark.parametrize(("raw", "starts", "host", "rank", "local_rank"), TABLE_CASES)
def test_shape_table(raw, starts, host, rank, local_rank):
    p = strip(raw)
    assert p.message.startswith(starts)
    assert (p.host, p.rank, p.local_rank) == (host, rank, local_rank)


@pytest.mark.parametrize("raw", [
    # a timestamp alone is the record's own header: it stays
    "2024-11-20 14:37:16 DEBUG:filelock:Attempting to acquire lock 140341412642880",
    "2024-01-01 10:00:00,123 - INFO - step 3",
    "0x1f: bad value",
])
def test_lead_only_shapes_stay_without_a_prefix_after_them(raw):
    assert strip(raw).message == raw


def _fixture_lines(case: str, name: str) -> list[str]:
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / "fixtures" / "public" / case / name
    return path.read_text(encoding="utf-8").splitlines()


def test_rank_after_a_repeating_unknown_segment():
    # real: fixtures/public/milabench_lightning_dataloader_filenotfound (a harness report indents every
    # line of the failed rank's output with "        | ")
    from nccllens.parse.file_facts import file_facts

    raws = _fixture_lines("milabench_lightning_dataloader_filenotfound", "milabench_report_a.log")
    facts = file_facts(raws)
    line = next(r for r in raws if r.startswith("        | [rank0]: Traceback"))
    p = strip(line, facts.leads)
    assert (p.message, p.rank) == ("Traceback (most recent call last):", 0)
    # the summary line above it states the rank after a segment that is there once: not a prefix
    once = next(r for r in raws if "* 1 x [rank0]" in r)
    assert strip(once, facts.leads).rank is None


def test_numbered_lines_before_the_rank_prefix():
    # real: fixtures/public/pytorch_watchdog/torch2.4_pg_desc_prefix_numbered_lines.log ("[80746] [rank0]:...")
    from nccllens.parse.file_facts import file_facts

    raws = _fixture_lines("pytorch_watchdog", "torch2.4_pg_desc_prefix_numbered_lines.log")
    facts = file_facts(raws)
    p = strip(raws[1], facts.leads)
    assert p.rank == 4 and p.message.startswith("[E321 02:07:08.414640780 ProcessGroupNCCL.cpp:607]")


def test_a_segment_on_one_line_only_is_not_a_prefix():
    from nccllens.parse.file_facts import file_facts

    raws = ["Waiting for Rank 3: it has not joined", "other", "lines"]
    assert not file_facts(raws).leads


def test_nccl_records_run_together_are_split_and_keep_their_dev_only_prefix():
    # real: fixtures/public/llamafactory_multinode_rdma_off_socket/rank0.log (two NCCL records on one pasted
    # line, each with only its "[dev]" left of the prefix)
    from nccllens.parse.nccl_prefix import split_prefix

    raw = ("[0] NCCL INFO NCCL_IB_DISABLE set by environment to 0. [0] NCCL INFO NCCL_IB_HCA set to "
           "mlx5_0:1,mlx5_1:1")
    parts = split_glued(raw)
    assert len(parts) == 2
    pre = [split_prefix(p) for p in parts]
    assert [(p.kind, p.host, p.body[:12]) for p in pre] == [("INFO", None, "NCCL_IB_DISA"),
                                                            ("INFO", None, "NCCL_IB_HCA ")]



# --- the log beats the path (issue 16 §3.5) -------------------------------------------------------

@pytest.mark.parametrize(("path", "host", "rank"), [
    # a rank only from the file's name and its parent folder
    ("exp/rank3/logs/out.log", None, None),
    ("exp/rank3/out.log", None, 3),
    ("runs/rank_sweep_4/job/train.log", None, None),
    # temporary folders are not hosts; a container's short id is one
    ("/tmp/tmpab12cd34/train.log", None, None),
    ("pytest-of-ci/pytest-12/train.log", None, None),
    ("logs/8d6bf97c3bf4/train.log", "8d6bf97c3bf4", None),
    ("logs/20240101/train.log", None, None),
    # a role word with a stream's word after it names no host (fixtures/public/verl_8gpu_worker_fatal_none_dealloc_
    # actor_died: a Ray worker's stderr); with a name or number after it, it does
    ("verl/worker_stderr.log", None, None),
    ("logs/node_log.txt", None, None),
    ("logs/worker-0.log", "worker-0", None),
])
def test_path_hints_are_only_what_the_path_can_tell(path, host, rank):
    h = hints_for(path)
    assert (h.host, h.rank) == (host, rank)


def test_a_file_whose_lines_name_their_host_gets_no_second_host_from_its_name(tmp_path):
    # real: fixtures/public/sglang_pd_bootstrap_linklocal_169254/decode_node2.log: the file's name suggests
    # "node2", every NCCL line says hd03-gpu2-0031
    import shutil
    from pathlib import Path

    import nccllens

    src = Path(__file__).resolve().parents[1] / "fixtures/public/sglang_pd_bootstrap_linklocal_169254/decode_node2.log"
    shutil.copy(src, tmp_path / "decode_node2.log")
    events = nccllens.analyze(str(tmp_path)).events
    assert set(events["host"].drop_nulls().cast(str).unique()) == {"hd03-gpu2-0031"}


def test_a_hostname_line_names_the_file_host():
    from nccllens.parse.file_facts import file_facts

    # fixtures/public/returnn_4gpu_hang_gpu_device_handle_lost (RETURNN states its host at start-up)
    facts = file_facts(["RETURNN starting up, version 1.20231230.164342+git.f353135e, date/time 2024-01-01-12-01-50",
                        "Hostname: cn-251", "ep 272 train, step 176, ce 0.424"])
    assert facts.host == "cn-251"
    assert file_facts(["hostname: is not set, see the docs"]).host is None


def test_a_shell_prompt_names_the_file_host(tmp_path):
    # synthetic, in the shape a terminal paste has: the prompt names the container the job ran in
    import nccllens

    (tmp_path / "paste.txt").write_text(
        "root@8d6bf97c3bf4:/workspace# torchrun --nproc_per_node 2 train.py\n"
        "[rank1]: Traceback (most recent call last):\n"
        "[rank1]:   File \"train.py\", line 3, in <module>\n"
        "[rank1]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 1 has a total "
        "capacity of 79.10 GiB of which 98.00 MiB is free.\n", encoding="utf-8")
    events = nccllens.analyze(str(tmp_path)).events
    assert set(events["host"].drop_nulls().cast(str).unique()) == {"8d6bf97c3bf4"}


def test_a_prompt_whose_command_reads_a_pod_or_host_names_that_one():
    # https://github.com/thecloudgarage/eks-anywhere (fixtures/public/kubeflow_fsdp_llama2_2node_socket_no_net_plugin):
    # the lines under "kubectl logs fsdp-worker-0" were printed on the pod, not on the machine kubectl ran on
    from nccllens.parse.file_facts import file_facts

    case = Path(__file__).resolve().parents[1] / "fixtures/public/kubeflow_fsdp_llama2_2node_socket_no_net_plugin"
    facts = file_facts((case / "grep_epoch.log").read_text(encoding="utf-8").splitlines())
    assert [host for _, host in facts.host_marks] == ["fsdp-worker-0", "fsdp-worker-1"]
    # synthetic command lines (kubectl's and ssh's own option syntax) behind the prompt shape of the same paste
    for command, host in (("kubectl -n train logs --tail 100 -f pod/trainer-3", "trainer-3"),
                          ("kubectl exec -it worker-1 -c main -- nvidia-smi", "worker-1"),
                          ("ssh -p 2222 admin@gpu-07 dmesg -T", "gpu-07"),
                          ("kubectl get pods", "csctmp-r760-18"), ("grep epoch train.log", "csctmp-r760-18")):
        assert file_facts([f"[prd@csctmp-r760-18 fsdp-test]$ {command}", "Epoch 1: loss=0.7"]).host == host


def test_a_zsh_prompt_names_the_file_host():
    # https://github.com/rwth-i6/returnn/issues/1486: the reporter pasted his terminal with
    # zsh's default prompt "user@host dir %"
    from pathlib import Path

    from nccllens.parse.file_facts import file_facts

    case = Path(__file__).resolve().parents[1] / "fixtures" / "public" / "returnn_4x1080ti_cn234_hang_nvidia_smi_device_handle_pcie_aer"
    lines = [ln for f in sorted(case.glob("*.log")) for ln in f.read_text(encoding="utf-8").splitlines() if "@cn-234 " in ln]
    assert lines and file_facts(lines[:3]).host == "cn-234"
    assert file_facts(["a@b ~ 50% done"]).host is None


def test_the_rank_a_line_states_beats_the_path(tmp_path):
    # a file named for rank 0 that holds rank 1's prefixed output (a shared console saved under one name)
    import nccllens

    (tmp_path / "rank0.log").write_text(
        "[rank1]: Traceback (most recent call last):\n"
        "[rank1]:   File \"train.py\", line 3, in <module>\n"
        "[rank1]: RuntimeError: boom\n", encoding="utf-8")
    events = nccllens.analyze(str(tmp_path)).events
    tb = events.filter(events["kind"].cast(str).str.starts_with("python."))
    assert tb["rank"].to_list() and set(tb["rank"].to_list()) == {1}


def test_a_launcher_header_names_the_task_host_and_rank():
    # real: fixtures/public/submitit_preempted_sighup_requeue/job.log (submitit writes one log per task and
    # states the task's host and global rank at its top)
    from nccllens.parse.file_facts import file_facts

    facts = file_facts(_fixture_lines("submitit_preempted_sighup_requeue", "job.log"))
    assert (facts.host, facts.rank) == ("learnfair0293", 0)


# --- lines hard-wrapped by a terminal (issue 16 §3.4) ----------------------------------------------

def _watchdog_line() -> str:
    # real: fixtures/public/pytorch_watchdog/torch2.4_pg_desc_prefix_numbered_lines.log, line 1
    return _fixture_lines("pytorch_watchdog", "torch2.4_pg_desc_prefix_numbered_lines.log")[0]


@pytest.mark.parametrize("width", [120, 200])
def test_a_record_wrapped_by_a_terminal_is_rejoined(tmp_path, width):
    import polars as pl

    import nccllens

    line = _watchdog_line()
    pieces = [line[i:i + width] for i in range(0, len(line), width)]
    (tmp_path / "console.log").write_text("\n".join(pieces) + "\n", encoding="utf-8")
    events = nccllens.analyze(str(tmp_path)).events.filter(pl.col("kind") == "torch.watchdog_timeout")
    assert events.select("line", "rank", "seq", "op", "timeout_ms").rows() == [(1, 0, 1580, "ALLREDUCE", 600000)]


def test_each_file_of_a_job_is_unwrapped_on_its_own_lines(tmp_path):
    # real: fixtures/wrong_socket_ifname (a torchrun job made for this project, gloo on CPU), every line of both
    # nodes' consoles hard-wrapped at 100 columns: small files are read together, but whether a file was
    # wrapped, and at what width, is read off that file alone
    from pathlib import Path

    import nccllens

    case = Path(__file__).resolve().parents[1] / "fixtures" / "wrong_socket_ifname"
    for node in ("node-a", "node-b"):
        text = (case / node / "console.log").read_text(encoding="utf-8")
        wrapped = "\n".join("\n".join(line[i:i + 100] for i in range(0, max(len(line), 1), 100))
                            for line in text.split("\n"))
        (tmp_path / node).mkdir()
        (tmp_path / node / "console.log").write_text(wrapped, encoding="utf-8")
    top = nccllens.analyze(str(tmp_path)).findings[0]
    assert (top.category, top.ranks, list(top.hosts)) == ("network_interface", [2, 3], ["node-b"])


@pytest.mark.parametrize("stamp", ["2023-10-06T00:17:09.669794202Z stdout F ",  # containerd
                                   "2023-10-06T02:17:09.669794202+02:00 stderr F "])  # CRI-O (its offset taken off)
def test_a_container_runtime_log_file_prefix_is_read(stamp):
    # synthetic: the CRI log-file prefix (RFC 3339 time, stream, full-line tag, as /var/log/pods holds it) in
    # front of a real NCCL line (fixtures/public/nccl380_xgboost_spark_2node_a100_roce_ibv_create_cq)
    p = strip(stamp + "spark01:2683:2826 [0] misc/ibvwrap.cc:268 NCCL WARN Call to ibv_create_cq failed")
    assert p.message == "spark01:2683:2826 [0] misc/ibvwrap.cc:268 NCCL WARN Call to ibv_create_cq failed"
    assert p.ts is not None and (p.ts.hour, p.ts.minute) == (0, 17)


def test_a_row_padded_to_the_terminal_width_is_not_joined_to_the_next():
    # real: fixtures/public/easyr1_ray_memory_monitor_kill_checkpoint_save (https://github.com/hiyouga/EasyR1/issues/50):
    # a screen copy 242 columns wide whose lines that ended early were padded with blanks to the width
    import polars as pl

    import nccllens

    case = Path(__file__).resolve().parents[1] / "fixtures/public/easyr1_ray_memory_monitor_kill_checkpoint_save"
    kills = nccllens.analyze(str(case)).events.filter(pl.col("kind") == "ray.memory_kill")
    assert kills["line"].to_list()[:1] == [4]  # the raylet's line, not the padded line above it
    assert kills["message"][0].startswith("(raylet) [2025-03-01 16:18:15,116 E 2687 2687]")


def test_a_one_line_file_of_a_quoted_paste_is_read_unquoted(tmp_path):
    # real: fixtures/public/srun_label_streaming_index_rename_race, both files quoted as a reply quotes them ("> ");
    # the one-line file alone is too short to show three quote marks, and every line of it has one
    import nccllens

    case = Path(__file__).resolve().parents[1] / "fixtures/public/srun_label_streaming_index_rename_race"
    for name in ("error_line.log", "trace_head.log"):
        text = (case / name).read_text(encoding="utf-8")
        (tmp_path / name).write_text("".join("> " + line for line in text.splitlines(keepends=True)), encoding="utf-8")
    top = nccllens.analyze(str(tmp_path)).findings[0]
    assert (top.category, top.ranks) == ("application_error", [0])


def test_lines_of_one_width_that_each_begin_a_record_stay_apart():
    # real: fixtures/public/opensora_nccl_enqueue_cuda_oom/train.log: twelve NCCL lines of the same length
    import polars as pl

    from nccllens.parse.file_facts import file_facts
    from nccllens.parse.record_wraps import unwrap

    raws = _fixture_lines("opensora_nccl_enqueue_cuda_oom", "train.log")
    facts = file_facts(raws)
    assert facts.wrap is not None  # the longest lines share a length...
    frame = pl.DataFrame({"line": list(range(1, len(raws) + 1)), "raw": raws})
    for row, raw in enumerate(raws):  # ...but each next line begins a record: nothing is joined
        assert unwrap(raw, row, row + 1, frame, None, facts.wrap) == (raw, [])


def test_a_section_header_names_the_rank_of_the_lines_under_it(tmp_path):
    # real: fixtures/public/ray_train_v2_rank0_valueerror_message (https://github.com/ray-project/ray/pull/51199:
    # Ray Train v2 lists each failed worker as "[Rank 0]" followed by its traceback)
    import shutil
    from pathlib import Path

    import nccllens

    src = Path(__file__).resolve().parents[1] / "fixtures/public/ray_train_v2_rank0_valueerror_message/driver.log"
    shutil.copy(src, tmp_path / "driver.log")
    report = nccllens.analyze(str(tmp_path))
    assert report.findings[0].ranks == [0]


def test_pdsh_host_named_gpu():
    # real: fixtures/public/llamafactory_hostfile_store_reset_rank0/gpu003.log (DeepSpeed launcher over pdsh)
    p = strip("gpu003: Traceback (most recent call last):")
    assert (p.host, p.message) == ("gpu003", "Traceback (most recent call last):")


def test_each_prompt_names_the_host_of_the_lines_after_it():
    # a terminal paste that moved between machines (https://github.com/lyulyul/shine-cluster/issues/171):
    # sinfo on the login node, then nvidia-smi on the GPU node
    from pathlib import Path

    import nccllens

    case = Path(__file__).resolve().parents[1] / "fixtures" / "public" / "slurm_4gpu_ddp_allreduce_timeout_rank0_gpu_lost_hoth"
    report = nccllens.analyze(str(case))
    top = report.findings[0]
    assert (top.category, list(top.hosts)) == ("gpu_hardware", ["hoth"])


def test_host_marks_follow_the_prompts():
    from nccllens.parse.file_facts import file_facts, host_at

    lines = ["wangcui@aha:~$ sinfo", "normal    up   mix   5-00:00:00 gpu:8  gpu:8     hoth      18/46/0/64",
             "(htranstrack) wangcui@hoth:~/shared/STGTrack/H-TransTrack_test2$ nvidia-smi",
             "Unable to determine the device handle for GPU 0000:1C:00.0: Unknown Error"]
    facts = file_facts(lines)
    assert facts.host is None and facts.host_marks == ((1, "aha"), (3, "hoth"))
    assert [host_at(facts.host_marks, n) for n in (1, 2, 3, 4)] == ["aha", "aha", "hoth", "hoth"]
    assert file_facts(lines[2:]).host_marks == ()  # one host: the whole file's, as before
