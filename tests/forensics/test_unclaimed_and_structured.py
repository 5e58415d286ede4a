"""Failures no rule lists by text still decide the verdict (issue 16 §3: 1, 2, 3, 7, 8, 9).

Every test copies real lines from a case of the dev corpus (fixtures/public/<case>/, whose SOURCE.md
cites the public thread) or from a real run made for this project, into a fresh file, and asserts what
a user reads first: the verdict's category, the top finding's culprit, that it is never "no failure".
"""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

import nccllens

PUBLIC = Path(__file__).resolve().parents[2] / "fixtures" / "public"


def analyze(tmp_path: Path, text: str, name: str = "job.log"):
    path = tmp_path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return nccllens.analyze(str(tmp_path))


def lines_of(case: str, name: str, first: int = 0, last: int | None = None) -> str:
    text = (PUBLIC / case / name).read_text(encoding="utf-8").splitlines()
    return "\n".join(text[first:last]) + "\n"


def test_an_nccl_return_code_chain_no_rule_claims_is_a_cause_from_its_result_code(tmp_path):
    # https://github.com/NVIDIA/nccl/issues/795 via fixtures/public/nccl_remote_rank_segfault_broken_pipe:
    # the chain without the WARN that started it (a paste cut above it)
    report = analyze(tmp_path, lines_of("nccl_remote_rank_segfault_broken_pipe", "node.log", 1, 6))
    assert report.verdict.category == "peer_exited"  # ncclRemoteError (6): a peer went away
    top = report.findings[0]
    assert top.rule == "AN-UNCLAIMED" and top.hosts == ["a100-st-p4d24xlarge-22"]
    assert "ncclRemoteError (6)" in top.title and "?" not in top.title


def test_a_return_code_chain_belongs_to_the_warn_it_follows(tmp_path):
    # the same paste whole: the chain unwinds the "Broken pipe" WARN, which a rule reads as a symptom (a peer
    # went away); the chain is no second, unclaimed cause, and the cause itself is not in the paste
    report = analyze(tmp_path, lines_of("nccl_remote_rank_segfault_broken_pipe", "node.log"))
    assert report.verdict.category == "unknown"
    assert report.findings[0].category == "peer_exited" and report.findings[0].hosts == ["a100-st-p4d24xlarge-22"]
    assert not [f for f in report.findings if f.rule == "AN-UNCLAIMED"]
    assert "only symptoms are visible" in report.verdict.summary


def test_a_native_crash_report_with_sigbus_is_shm_exhaustion_on_the_host_it_names(tmp_path):
    # https://github.com/msr-fiddle/pipedream/issues/76: UCX "Caught signal 7 (Bus error ...)" in a container
    report = analyze(tmp_path, lines_of("pipedream_docker_nccl_sigbus", "train.log"))
    assert report.verdict.category == "shm_exhausted"
    top = report.findings[0]
    assert top.rule == "NL-SYS-007" and top.hosts == ["8d6bf97c3bf4"]  # a container id starts with a digit
    signal = report.events.filter(report.events["kind"] == "cpp.signal")
    assert signal["signal"].to_list() == ["SIGBUS"] and "ncclGetUniqueId" in signal["detail"][0]


def test_a_traceback_cut_before_its_exception_rules_out_no_failure(tmp_path):
    # fixtures/public/llamafactory_hostfile_store_reset_rank0, its first 12 lines: the paste ends inside the
    # traceback, before the frame that says where the rank was waiting
    report = analyze(tmp_path, lines_of("llamafactory_hostfile_store_reset_rank0", "gpu003.log", 0, 12))
    assert report.verdict.category == "unknown"
    assert "cut before its exception" in report.verdict.summary


def test_the_last_error_payload_is_an_event_and_its_rule_wins(tmp_path):
    # https://github.com/sgl-project/sglang/issues/1116: "Failed to CUDA calloc" under "unhandled cuda error"
    report = analyze(tmp_path, lines_of("sglang_70b_tp4_a100_40g_nccl_calloc", "launch_server.log"))
    payload = report.events.filter(report.events["kind"] == "nccl.last_error")
    assert payload["message"].to_list() == ["Failed to CUDA calloc 67108864 bytes"]
    assert report.verdict.category == "gpu_oom"
    assert report.findings[0].rule == "NL-NCCL-002"
    wrapper = next(f for f in report.findings if f.rule == "NL-TORCH-012")
    assert wrapper.explained_by == report.findings[0].id


def test_sigkill_without_an_oom_line_is_suspected_host_oom(tmp_path):
    # https://github.com/deepseek-ai/DeepSeek-Coder/issues/55 (DeepSpeed launcher)
    line = (" [2023-11-28 10:00:34,590] [ERROR] [launch.py:321:sigkill_handler] ['/home/.python_libs/conda_env/"
            "deepseek/bin/python', '-u', 'finetune_deepseekcoder.py', '--local_rank=0'] exits with return code = -9\n")
    report = analyze(tmp_path, line)
    assert report.verdict.category == "host_oom"
    assert "suspected" in report.findings[0].title and report.findings[0].confidence < 0.8


def test_a_dataloader_worker_sigkilled_is_suspected_host_oom_and_one_sigtermed_a_dataloader_crash(tmp_path):
    # https://github.com/NVIDIA/Megatron-LM/issues/1657 and https://github.com/pytorch/pytorch/issues/4507 (title)
    killed = analyze(tmp_path / "killed", "[rank0]: RuntimeError: DataLoader worker (pid 2637) is killed by signal: Killed. \n")
    assert killed.verdict.category == "host_oom" and killed.findings[0].rule == "NL-DL-002"
    assert "suspected" in killed.findings[0].title and killed.findings[0].confidence < 0.8
    termed = analyze(tmp_path / "termed", "RuntimeError: DataLoader worker (pid 23616) is killed by signal: Terminated.\n")
    assert termed.verdict.category == "dataloader_crash" and termed.findings[0].rule == "NL-DL-007"


def test_an_exception_explains_the_exit_code_1_it_caused(tmp_path):
    # fixtures/public/dodnet_apex_ddp_shape_mismatch_rank1 (torch.distributed.launch, torch 1.13)
    text = (PUBLIC / "dodnet_apex_ddp_shape_mismatch_rank1").glob("*.log")
    report = analyze(tmp_path, next(text).read_text(encoding="utf-8"))
    top = report.findings[0]
    assert top.category == "application_error" and "The size of tensor a (96)" in top.title
    exit_report = next(f for f in report.findings if f.rule == "NL-APP-016")
    assert exit_report.explained_by == top.id


def test_a_watchdog_timeout_on_the_same_rank_says_what_its_exit_code_1_was(tmp_path):
    # fixtures/public/diffir_basicsr_2x4090_val_on_rank0_rank1_reduce_timeout (torch 1.x, torchrun): the watchdog
    # aborted the communicator, the pending reduce raised "NCCL communicator was aborted", the worker exited 1
    text = (PUBLIC / "diffir_basicsr_2x4090_val_on_rank0_rank1_reduce_timeout" / "rank1_console.log").read_text(encoding="utf-8")
    report = analyze(tmp_path, text)
    top = report.findings[0]
    assert (top.rule, top.category, top.ranks) == ("NL-TORCH-001", "collective_timeout", [1])
    assert not any(f.rule == "AN-UNCLAIMED" for f in report.findings)  # the abort is the timeout's consequence
    exit_report = next(f for f in report.findings if f.rule == "NL-APP-016")
    assert exit_report.role == "symptom"


def test_a_dataloader_worker_error_is_judged_by_its_original_traceback(tmp_path):
    # a torchrun run made for this project: /dev/shm of node-b remounted as a 1 MB tmpfs
    case = PUBLIC / "shm_tiny_dataloader_node_b"
    for path in case.rglob("*"):
        if path.is_file() and path.name not in ("expected.toml", "SOURCE.md"):
            target = tmp_path / path.relative_to(case)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(path.read_bytes())
    report = nccllens.analyze(str(tmp_path))
    assert report.verdict.category == "shm_exhausted"
    assert report.findings[0].hosts == ["node-b"] and report.findings[0].ranks == [2, 3]


def test_more_processes_than_the_world_size_is_a_launch_mismatch(tmp_path):
    # fixtures/public/streampetr_store_barrier_worker_count_16_of_8
    report = analyze(tmp_path, "".join(p.read_text(encoding="utf-8")
                                       for p in (PUBLIC / "streampetr_store_barrier_worker_count_16_of_8").glob("*.log")))
    assert report.verdict.category == "config_mismatch"
    assert "16 processes joined" in report.findings[0].title


def test_submitit_time_limit_names_the_node(tmp_path):
    # https://github.com/facebookincubator/submitit/issues/1656
    report = analyze(tmp_path, lines_of("submitit_short_job_timeout_sigusr1", "job.log"))
    assert report.verdict.category == "job_killed"
    assert report.findings[0].hosts == ["rmc-gpu05"]


def test_an_unknown_xid_escalates_when_the_job_hung(tmp_path):
    # Xid 109 from https://github.com/leptonai/gpud/pull/46; the watchdog line from pytorch/pytorch#118369
    xid = ("[Fri Aug 30 11:43:14 2024] NVRM: Xid (PCI:0000:cb:00): 109, pid=1797828, name=pt_main_thread, "
           "Ch 00000008, errorString CTX SWITCH TIMEOUT, Info 0x58005\n")
    alone = analyze(tmp_path / "a", xid, "node1/dmesg.txt")
    assert alone.findings[0].rule == "NL-GPU-020" and alone.findings[0].severity == "warning"
    hung = analyze(tmp_path / "b", xid + "[E ProcessGroupNCCL.cpp:458] [Rank 0] Watchdog caught collective "
                   "operation timeout: WorkNCCL(SeqNum=96120, OpType=ALLREDUCE, Timeout(ms)=1800000) ran for "
                   "25624887 milliseconds before timing out.\n", "node1/dmesg.txt")
    assert hung.verdict.category == "gpu_hardware" and hung.findings[0].rule == "NL-GPU-021"


RETRY = ("[W socket.cpp:663] [c10d] The client socket has failed to connect to [::ffff:255.255.0.0]:29500 "
         "(errno: 110 - Connection timed out).\n")  # https://github.com/hiyouga/LlamaFactory/issues/3715


def test_a_log_that_ends_in_connection_retries_never_connected(tmp_path):
    report = analyze(tmp_path, RETRY)
    assert report.verdict.category == "network_unreachable"
    assert report.findings[0].rule == "AN-ENDS-CONNECTING" and "255.255.0.0" in report.findings[0].title


def test_retries_followed_by_training_are_not_a_failure(tmp_path):
    healthy = (PUBLIC.parent / "healthy_clean" / "node-a" / "console.log").read_text(encoding="utf-8")
    report = analyze(tmp_path, RETRY + healthy)
    assert all(f.rule != "AN-ENDS-CONNECTING" for f in report.findings)


def test_a_traceback_glued_after_a_progress_bar_is_read(tmp_path):
    # https://github.com/NVIDIA/nccl/issues/865 (fixtures/public/chatmednorm_tokenizer_rank0_barrier_store_timeout)
    report = analyze(tmp_path, lines_of("chatmednorm_tokenizer_rank0_barrier_store_timeout", "train.log"))
    tracebacks = report.events.filter(report.events["kind"] == "python.traceback")
    assert tracebacks.height == 1
    assert report.verdict.category != "none"  # a traceback, even one cut short, is a failure


def test_nccl_names_the_rank_of_a_mismatched_collective(tmp_path):
    # https://github.com/NVIDIA/nccl/issues/296
    report = analyze(tmp_path, lines_of("nccl248_mismatched_collective_rank39", "train.log"))
    assert report.verdict.category == "rank_divergence" and report.findings[0].rule == "NL-NCCL-015"


def test_an_error_line_an_info_rule_calls_noise_is_no_sign_of_failure(tmp_path):
    # https://github.com/NVIDIA/nccl/issues/851: training ends, then the proxy thread reads closed connections
    report = nccllens.analyze(str(PUBLIC / "healthy_ddp_azure_epoch5_end_service_thread_unknown_command"))
    assert report.verdict.category in ("none", "unknown") and report.verdict.finding is None  # no failure named
    assert [f.rule for f in report.findings] == ["NL-NCCL-016"]


def test_a_rank_whose_own_timeout_is_an_earlier_collective_never_reached_the_others_one(tmp_path):
    # https://github.com/FlagOpen/FlagEmbedding/issues/764: ranks 0 and 2 time out in ALLGATHER 6207, rank 1 in
    # 6206; rank 0's ALLREDUCE 6029 has another timeout, so it is another process group
    case = PUBLIC / "flagembedding_allgather_rank1_seq6206_vs_6207_size_mismatch"
    report = analyze(tmp_path, (case / "console.log").read_text(encoding="utf-8"), name="console.log")
    top = report.findings[0]
    assert (report.verdict.category, top.rule, top.ranks) == ("rank_divergence", "AN-COLLECTIVE-ABSENT", [1])


def test_an_unfamiliar_nccl_warn_that_no_failure_follows_is_a_symptom_not_the_verdict():
    # https://github.com/google/nccl-fastsocket/issues/4: a 2-node job that ran while the fastsocket plugin warned
    from pathlib import Path

    import nccllens

    case = Path(__file__).resolve().parents[2] / "fixtures" / "public" / "healthy_gcp_fastsocket_plugin_cannot_get_incoming_cpu_retry_warns"
    report = nccllens.analyze(str(case))
    warned = [f for f in report.findings if f.rule == "AN-UNCLAIMED"]
    assert warned and all((f.severity, f.role) == ("warning", "symptom") for f in warned)
    assert report.verdict.category in ("none", "unknown") and report.verdict.finding is None


def test_an_unknown_xid_next_to_a_known_one_still_counts():
    # https://github.com/NVIDIA/open-gpu-kernel-modules/issues/942: Xid 62 (no specific rule) before Xid 45 (NL-GPU-013)
    from pathlib import Path

    import nccllens

    case = Path(__file__).resolve().parents[2] / "fixtures" / "public" / "vllm_8xa100_nvswitch_sxid24007_xid62_then_xid45_worker"
    top = nccllens.analyze(str(case)).findings[0]
    assert (top.rule, top.category, top.hosts) == ("NL-GPU-020", "gpu_hardware", ["192.168.11.119"])
    assert "62" in top.evidence[0].text


def test_an_unread_warn_of_nccls_rdma_transport_is_a_transport_that_did_not_start(tmp_path):
    # https://github.com/aws/aws-ofi-nccl/issues/889 via fixtures/public/sagemaker_p4d_efa_provider_empty_ofi_init_failed_socket:
    # the OFI plugin's own failure, a line no rule reads: its category comes from the transport that failed
    text = "\n".join(line for line in lines_of("sagemaker_p4d_efa_provider_empty_ofi_init_failed_socket",
                                               "cloudwatch.log").splitlines() if "Creating new endpoint" in line)
    report = analyze(tmp_path, text + "\n")
    top = report.findings[0]
    assert top.rule == "AN-UNCLAIMED" and top.category == "ib_fallback"
    assert top.hosts == ["ip-10-36-29-253"]


def test_of_two_unread_failures_in_one_log_the_earlier_leads(tmp_path):
    # https://github.com/NVIDIA/nccl/issues/276 via fixtures/public/dataparallel_reduce_invalid_root: NCCL rejects the
    # Reduce (argcheck WARN, "-> 4" chain) and the process then aborts with "NCCL Error 4: invalid argument"
    report = analyze(tmp_path, lines_of("dataparallel_reduce_invalid_root", "train.log"))
    assert report.verdict.category == "nccl_internal"
    assert "invalid root" in report.findings[0].title


def test_an_nccl_warn_the_first_failure_points_at_is_still_a_cause(tmp_path):
    # https://github.com/NVIDIA/DCGM/issues/304 via fixtures/public/nvls_bind_fail_nvlink_state: one WARN, the whole log
    report = analyze(tmp_path, lines_of("nvls_bind_fail_nvlink_state", "nccl.log"))
    assert report.verdict.category not in ("none", "unknown")
    assert report.findings[0].role == "cause" and report.findings[0].hosts == ["gpu-stress-dgc86-xfpt6"]


def test_an_unread_error_takes_its_familys_meaning_not_nccls():
    from nccllens.analyses.unclaimed_categories import category_of

    def row(family, message):
        return {"kind": f"{family}.step_error", "family": family, "message": message}

    assert category_of(row("slurm", "*** STEP 5.0 STEPD TERMINATED DUE TO JOB NOT ENDING WITH SIGNALS ***")) == "job_killed"
    assert category_of(row("kernel", "NVRM: GPU at PCI:0000:3b:00: GPU has an unusual state")) == "gpu_hardware"
    assert category_of(row("nccl", "some WARN nobody reads")) == "nccl_internal"
    assert category_of({"kind": "python.exception", "family": "python", "exc_type": "KeyboardInterrupt"}) == "job_killed"
    tf_oom = "tensorflow.python.framework.errors_impl.ResourceExhaustedError"
    assert category_of({"kind": "python.exception", "family": "python", "exc_type": tf_oom}) == "gpu_oom"


def test_a_native_crash_inside_the_communication_stack_is_the_librarys_not_the_applications():
    # https://github.com/NVIDIA/nccl-tests/issues/218 (fixtures/public/nccl_tests_4containers_ucc_allgather_segfault_
    # ucx_tls): UCX's handler prints its backtrace without library names ("1 0x... ucp_request_cancel()  /build/...")
    from nccllens.analyses.unclaimed_categories import category_of
    from nccllens.extract import events_from_text

    text = (PUBLIC / "nccl_tests_4containers_ucc_allgather_segfault_ucx_tls" / "comment5_crash.log").read_text(encoding="utf-8")
    crash = events_from_text(text).filter(pl.col("kind") == "cpp.signal").row(0, named=True)
    assert crash["signal"] == "SIGSEGV" and category_of(crash) == "nccl_internal"
    # the same fault in the training process's own code stays the application's
    assert category_of({**crash, "detail": "frames: __sigaction, my_kernel_launch"}) == "application_error"


def test_the_watchdogs_own_stack_is_a_symptom_and_the_rank_it_waited_for_is_named(tmp_path):
    # https://github.com/stanford-futuredata/ColBERT/issues/318 via fixtures/public/colbert_rank0_faiss_kmeans_rank1_allreduce_seq5_timeout: rank 1's watchdog timeout and the
    # C++ stack it printed ("Exception raised from checkTimeout"); rank 0, busy elsewhere, printed no timeout
    report = analyze(tmp_path, lines_of("colbert_rank0_faiss_kmeans_rank1_allreduce_seq5_timeout", "indexing.log"))
    unread = [f for f in report.findings if f.rule == "AN-UNCLAIMED"]
    assert all(f.role == "symptom" for f in unread)
    assert report.findings[0].ranks == [0] and report.verdict.category == "collective_timeout"


# https://github.com/NVIDIA/nccl/issues/615: a WARN of NCCL's IB transport while it moved data, no rule reads it
IB_MISMATCH = ("train-run-env3-list2-parallel-0:15483:15645 [0] transport/net_ib.cc:665 NCCL WARN NET/IB : collective "
               "mismatch error local size 546816 remote 524288 addr 7ff7d1530000 rkey 2553d seq 14/1c\n")


def test_an_unread_rdma_error_of_a_transport_nccl_chose_is_the_fabrics(tmp_path):
    # the same host's NCCL chose IB (the line of https://github.com/dstackai/dstack/issues/2712, host renamed to
    # the WARN's): an error of that transport is a fabric error, not a fallback to sockets
    chose = lines_of("healthy_dstack_ib_after_libibverbs_install", "workers.log", 0, 1).replace(
        "computeinstance-e00vcar76672ttnkq6:697:739", "train-run-env3-list2-parallel-0:15483:15645")
    report = analyze(tmp_path, chose + IB_MISMATCH)
    unread = [f for f in report.findings if f.rule == "AN-UNCLAIMED"]
    assert unread and unread[0].category == "ib_fabric"
    assert unread[0].hosts == ["train-run-env3-list2-parallel-0"]


def test_an_unread_rdma_error_before_sockets_is_still_the_fallback(tmp_path):
    # the same WARN where NCCL then used sockets (fixtures/public/healthy_aws_p3dn_2node_ofi_only_efa_warn_socket_bw_question's
    # NET/Socket line): the RDMA transport did not carry the job
    sockets = "".join(line + "\n" for line in lines_of(
        "healthy_aws_p3dn_2node_ofi_only_efa_warn_socket_bw_question", "run_16gpu.log").splitlines()
        if "NET/Socket : Using" in line)
    report = analyze(tmp_path, IB_MISMATCH + sockets)
    unread = [f for f in report.findings if f.rule == "AN-UNCLAIMED"]
    assert unread and unread[0].category == "ib_fallback"


def test_exceptions_python_ignored_and_cuda_calls_at_exit_are_not_failures(tmp_path):
    # https://github.com/pytorch/pytorch/issues/95724 (a finaliser's FileNotFoundError, ignored) and
    # https://github.com/apache/mxnet/issues/1401 (a CUDA call once the driver was shutting down): runs that finished
    report = analyze(tmp_path, "Exception ignored in: <Finalize object, dead>\n"
                               "FileNotFoundError: [Errno 2] No such file or directory\n"
                               "terminate called after throwing an instance of 'dmlc::Error'\n"
                               "  what():  driver shutting down\n")
    assert report.verdict.category in ("none", "unknown") and report.verdict.finding is None
    assert not [f for f in report.findings if f.severity in ("error", "critical")]
    assert [f.rule for f in report.findings] == ["NL-APP-021"]


# One paste's lines from a public thread each, and what a user must read first: (thread, text, category, rule,
# culprit ranks or hosts where the lines name them)
READINGS = [
    pytest.param(  # PaddlePaddle's launcher still polling the other node's endpoints (never started) when the log ends
        "https://github.com/PaddlePaddle/PaddleOCR/issues/6455",
        "server not ready, wait 3 sec to retry...\nnot ready endpoints:['10.36.10.40:6070', '10.36.10.40:6071', "
        "'10.36.10.40:6072', '110.36.10.40:6073', '10.36.10.40:6072', '10.36.10.41:6073']\n"
        "server not ready, wait 3 sec to retry...\n", "network_unreachable", "AN-ENDS-CONNECTING",
        {"hosts": ["10.36.10.40"]}, id="paddle-launcher-ends-waiting-for-endpoints"),
    pytest.param(  # Paddle's TCP store client retrying a master address the host resolved wrongly
        "https://github.com/PaddlePaddle/PaddleSeg/issues/2766",
        "I1127 19:16:12.605310 3907468 tcp_utils.cc:181] The server starts to listen on IP_ANY:51920\n"
        "I1127 19:18:22.167176 3907468 tcp_utils.cc:107] Retry to connect to 0.1.68.146:51920 while the server is not "
        "yet listening.\n", "network_unreachable", "AN-ENDS-CONNECTING", {"hosts": ["0.1.68.146"]},
        id="paddle-store-client-ends-retrying"),
    pytest.param(  # NCCL 2.12-2.18's retry line (no address named)
        "https://github.com/hiyouga/LlamaFactory/issues/8045",
        "zgiot:1183664:1184669 [0] NCCL INFO socketPollConnect: connect returned No route to host, retrying (34/34) "
        "after sleep for 3400 msec\n", "network_unreachable", "AN-ENDS-CONNECTING", {"hosts": ["zgiot"]},
        id="last-nccl-connect-retry"),
    pytest.param(  # torchrun on RTX 4090s: a NotImplementedError raised by Accelerate, not a code bug
        "https://github.com/OpenBMB/MiniCPM-V/issues/325",
        "[rank1]:     raise NotImplementedError(\n[rank1]: NotImplementedError: Using RTX 4000 series doesn't support "
        "faster communication broadband via P2P or IB. Please set `NCCL_P2P_DISABLE=\"1\"` and `NCCL_IB_DISABLE=\"1\" "
        "or use `accelerate launch` which will do this automatically.\n", "p2p_topology", "NL-SYS-012", {"ranks": [1]},
        id="accelerate-refuses-gpus-without-p2p"),
    pytest.param(  # DDP children started from Hydra's run folder
        "https://github.com/Lightning-AI/pytorch-lightning/issues/2086",
        "python: can't open file '/home/joe/summarization/models/bart/outputs/2020-06-05/11-57-25/finetune.py': "
        "[Errno 2] No such file or directory\n", "application_error", "NL-APP-011", {}, id="script-python-cannot-open"),
    pytest.param(  # one rank resolved to IPv4, the other to IPv6
        "https://github.com/pytorch/pytorch/issues/135355",
        "[rank0]: RuntimeError: [enforce fail at ../third_party/gloo/gloo/transport/tcp/device.cc:276] "
        "ss1.ss_family == ss2.ss_family. 2 vs 10\n[rank1]: RuntimeError: [enforce fail at "
        "../third_party/gloo/gloo/transport/tcp/device.cc:276] ss1.ss_family == ss2.ss_family. 10 vs 2\n",
        "network_interface", "NL-NET-017", {"ranks": [0, 1]}, id="gloo-device-set-up"),
    pytest.param(  # the watchdog thread ended on a CUDA fault, not a timeout
        "https://github.com/verl-project/verl/issues/3579",
        "(WorkerDict pid=2862157) [rank3]:[E923 11:14:11.615370309 ProcessGroupNCCL.cpp:1895] [PG ID 0 PG GUID "
        "0(default_pg) Rank 3] Process group watchdog thread terminated with exception: CUDA error: misaligned "
        "address\n", "cuda_error", "NL-APP-003", {"ranks": [3]}, id="kernel-fault-the-watchdog-reports"),
    pytest.param(  # Moab/Torque
        "https://github.com/CoBrALab/MAGeTbrain/issues/20",
        "MOAB_INFO:  job exceeded wallclock limit\n", "job_killed", "AN-WALLCLOCK-KILL", {}, id="moab-wallclock-kill"),
    pytest.param(  # the driver's GSP steps, without the generic line
        "https://github.com/NVIDIA/open-gpu-kernel-modules/issues/1058",
        "[   81.967331] NVRM: GPU0 _kgspBootGspRm: unexpected WPR2 already up, cannot proceed with booting GSP\n"
        "[   81.967373] NVRM: GPU0 RmInitAdapter: Cannot initialize GSP firmware RM\n", "gpu_hardware", "NL-GPU-017",
        {}, id="gsp-firmware-would-not-boot"),
    pytest.param(  # quoted in the report's own sentence
        "https://github.com/charent/ChatLM-mini-Chinese/issues/36",
        "在本地用train.py pretrain 的时候出现 Accelerate.utils.operations.DistributedOperationException: Cannot apply "
        "desired operation due to shape mismatches. All Shapes across devices myst be valid. Input shapes: -Process 0:[16,174] -Process1:[16,167]\n",
        "rank_divergence", "NL-TORCH-034", {}, id="accelerate-shape-check"),
]


@pytest.mark.parametrize(("thread", "text", "category", "rule", "culprit"), READINGS)
def test_a_threads_lines_are_read_as_their_cause(tmp_path, thread, text, category, rule, culprit):
    report = analyze(tmp_path, text)
    assert report.verdict.category == category and report.findings[0].rule == rule, thread
    for field, expected in culprit.items():
        assert getattr(report.findings[0], field) == expected, thread


@pytest.mark.parametrize("text", [
    # https://github.com/NVIDIA/nccl/issues/291: Open MPI's crash handler, the first frame past the C runtime
    "[tb2b03210:78142] Signal: Segmentation fault (11)\n"
    "[tb2b03210:78142] [ 1] /usr/local/cuda-10.0/targets/x86_64-linux/lib/libnccl.so.2(+0x3533c)[0x7f8eab35933c]\n",
    # https://github.com/NVIDIA/nccl/issues/2380: the same handler behind a harness's timestamp, a host with a dash
    "2026-08-31 12:27:50 [k8s-slave03:00956] Signal: Segmentation fault (11)\n"
    "2026-08-31 12:27:50 [k8s-slave03:00956] [ 4] /usr/local/nccl/lib/libnccl.so.2(+0xbd72c)[0x7d1d0c8f372c]\n",
])
def test_a_crash_whose_backtrace_lies_in_libnccl_is_an_nccl_fault(tmp_path, text):
    report = analyze(tmp_path, text)
    signal = report.events.filter(report.events["kind"] == "cpp.signal")
    assert signal["detail"].to_list() == ["in libnccl.so.2"]
    assert report.verdict.category == "nccl_internal"
    assert report.findings[0].rule == "NL-NCCL-019" and "inside NCCL (SIGSEGV)" in report.findings[0].title


def test_a_crash_report_without_its_backtrace_stays_the_process_own_error(tmp_path):
    # https://github.com/NVIDIA/nccl/issues/291, the signal line alone: nothing says where the process crashed
    report = analyze(tmp_path, "[tb2b03210:78142] Signal: Segmentation fault (11)\n")
    assert report.findings[0].category == "application_error"
    assert not [f for f in report.findings if f.rule == "NL-NCCL-019"]


def test_a_cuda_error_thrown_as_a_cpp_type_is_a_cuda_error(tmp_path):
    # https://github.com/bigscience-workshop/bigscience/blob/e726b15982fa088fb6d9a4c869c19c3d4dbc84a7/train/tr11-176B-ml/chronicles.md:
    # the exception type is c10's C++ name ("c10::CUDAError"), read by its last scope like a Python dotted name
    report = analyze(tmp_path, lines_of("bloom176b_gpu_crash_cuda_unknown_error_watchdog", "train.log", 0, 2))
    assert report.verdict.category == "cuda_error"
    assert report.findings[0].rule == "AN-UNCLAIMED" and report.findings[0].ranks == [3]


def test_the_proxy_service_thread_losing_its_sockets_is_a_symptom_not_a_cause(tmp_path):
    # https://github.com/elideng-sg/hypercomputer-internode-deepdive/blob/c6d0769edc3665fe80ddf8bd2d73acdbc4f66c3d/assets/lab-13/survivor_set_rerun_16gpu.txt:
    # the WARNs NCCL's proxy service thread prints when peers or the process itself close their connections
    report = analyze(tmp_path, lines_of("survivor_rerun_16gpu_done_then_proxy_close_warns", "rank0.log"))
    assert report.verdict.category == "unknown" and report.verdict.finding is None
    assert [f.rule for f in report.findings] == ["NL-NCCL-008"] and report.findings[0].role == "symptom"


def test_workers_torchrun_killed_itself_are_no_oom_and_the_first_failure_leads(tmp_path):
    # fixtures/public/ddp_4gpu_rank1_cuda_unspecified_launch_failure_peers_sigkilled (a log committed to a public
    # repository, cited in its SOURCE.md): rank 1 fails with a CUDA driver error; torchrun sends SIGTERM to the
    # other three and, when they do not exit, "Unable to shutdown process N via 15, forcefully exiting via 9":
    # their -9 in the failure table is torchrun's own SIGKILL
    text = (PUBLIC / "ddp_4gpu_rank1_cuda_unspecified_launch_failure_peers_sigkilled" / "stderr.err").read_text()
    report = analyze(tmp_path, text, "stderr.err")
    assert report.verdict.category == "cuda_error"
    assert report.findings[0].ranks == [1] and report.findings[0].hosts == ["wqd10nah08g5"]
    oom = next(f for f in report.findings if f.rule == "NL-JOB-001")
    assert oom.ranks == [0, 2, 3] and oom.role == "symptom" and oom.severity == "warning"


def test_a_traceback_a_logger_printed_line_by_line_is_no_cause_of_its_own(tmp_path):
    # fixtures/public/vllm_tp4_a100_hbm_dbe_gpu2_sample_tokens_rpc_timeout: the middle of vLLM's engine-core
    # traceback, every line behind its logger's header; no exception line is in the paste
    report = analyze(tmp_path, lines_of("vllm_tp4_a100_hbm_dbe_gpu2_sample_tokens_rpc_timeout", "vllm_serve.log"))
    assert set(report.events.filter(report.events["family"] == "log")["kind"].to_list()) == {"log.fragment"}
    assert report.verdict.category == "unknown" and "none says enough to classify" in report.verdict.summary
    assert not report.findings


def test_a_cpp_check_against_cudasuccess_is_a_cuda_error(tmp_path):
    # fixtures/public/caffe_2x980ti_p2psync_unspecified_launch_failure_psu (a glog fatal line of Caffe)
    report = analyze(tmp_path, lines_of("caffe_2x980ti_p2psync_unspecified_launch_failure_psu", "train.log"))
    assert report.findings[0].rule == "AN-UNCLAIMED" and report.findings[0].category == "cuda_error"


def test_an_error_that_says_versions_do_not_match_is_a_configuration_mismatch(tmp_path):
    # fixtures/public/ray_cloudpickle_version_differs_on_joining_node_workers_dead: Ray's own version check on a
    # node that joined with other package versions
    report = analyze(tmp_path, lines_of("ray_cloudpickle_version_differs_on_joining_node_workers_dead",
                                        "machine2_local_scheduler.log"))
    assert report.verdict.category == "config_mismatch" and report.findings[0].rule == "AN-UNCLAIMED"


def test_a_cancelled_task_is_no_failure_of_its_own(tmp_path):
    # fixtures/public/nvtabular_horovod_uneven_batches_rank1_cuda_invalid_config: asyncio reports the gathered
    # futures cancelled after another task failed
    report = analyze(tmp_path, lines_of("nvtabular_horovod_uneven_batches_rank1_cuda_invalid_config", "horovodrun.log",
                                        4, 6))
    assert not [f for f in report.findings if f.rule == "AN-UNCLAIMED"]


def test_an_exception_unpickling_what_an_object_collective_received_is_the_collective_failing(tmp_path):
    # fixtures/public/rccl_8gpu_broadcast_object_zeros_unpickling_error_shm (an RCCL run's log published in a public
    # repository, cited in its SOURCE.md): broadcast_object_list delivered zeros to rank 2, whose unpickling failed
    # inside torch.distributed's _tensor_to_object. The exception says the collective failed, not the program
    text = lines_of("rccl_8gpu_broadcast_object_zeros_unpickling_error_shm", "test_nccl.log", 128, 146)
    report = analyze(tmp_path, text)
    unread = [f for f in report.findings if f.rule == "AN-UNCLAIMED"]
    assert unread and unread[0].category == "collective_timeout" and unread[0].role == "symptom"
    assert not [f for f in report.findings if f.category == "application_error" and f.role == "cause"]
    assert "UnpicklingError" in unread[0].evidence[0].text or "UnpicklingError" in unread[0].title


# synthetic: built from the x86 kernel's "traps: %s[%d] general protection fault ip:%lx sp:%lx error:%lx" and its
# " in %s[%lx+%lx]" object suffix (arch/x86/kernel/traps.c, Linux 5.x/6.x), under dmesg -T time
GP_FAULT_IN = "[Mon Mar  4 10:12:01 2024] traps: python[1234] general protection fault ip:7f1234567890 sp:7ffd12345678 error:0 in {obj}[7f1234500000+195000]\n"


@pytest.mark.parametrize(("obj", "category"), [("libc.so.6", "application_error"),
                                               ("libnccl.so.2", "nccl_internal"),
                                               ("libcuda.so.1", "cuda_error")])
def test_the_kernels_report_of_a_process_fault_is_that_process_crash_not_the_gpu(tmp_path, obj, category):
    report = analyze(tmp_path, GP_FAULT_IN.format(obj=obj))
    assert report.verdict.category == category
    assert all(f.category != "gpu_hardware" for f in report.findings)
