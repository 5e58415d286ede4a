"""A failure said by a logger no family knows, or by the shell that ran the process, is never 'no failure'."""

from __future__ import annotations

import pytest

import nccllens


@pytest.mark.parametrize(("line", "category"), [
    # bash's report of a child killed by a signal (strsignal wording; synthetic: built from bash 5's job
    # report format "%s: line %d: %5d %s  %s")
    ("Segmentation fault (core dumped)", "application_error"),
    ("./run.sh: line 12:  4242 Killed                  python train.py", "host_oom"),
    ("Bus error (core dumped)", "shm_exhausted"),
    # job control's report of a background job (synthetic: bash's "[%d]%c  %-*s  %s" with strsignal's words)
    ("[1]+  Killed                  nohup python train.py > train.log 2>&1", "host_oom"),
    ("[2]-  Terminated              python train.py", "job_killed"),
    ("[1]+  Hangup                  python train.py", "job_killed"),
    ("Terminated", "job_killed"),
])
def test_the_shell_reporting_a_fatal_signal_is_a_crash_with_that_signal(tmp_path, line, category):
    (tmp_path / "job.log").write_text(line + "\n")
    report = nccllens.analyze(str(tmp_path))
    assert report.verdict.category == category


# https://github.com/zai-org/ChatGLM-6B/issues/191: the shell's word right after a progress bar that never ended
# its line, while the checkpoint was loaded into host memory
CHATGLM_KILLED = ("Loading checkpoint shards:  50%|███████████████████████████████████████████████████████████████████▌"
                  "                                                                   | 4/8 [02:10<02:22, 35.73s/it]Killed")


def test_the_shells_killed_after_an_unended_progress_bar_is_a_suspected_oom_kill(tmp_path):
    (tmp_path / "job.log").write_text(CHATGLM_KILLED + "\n")
    report = nccllens.analyze(str(tmp_path))
    top = report.findings[0]
    assert (report.verdict.category, top.rule) == ("host_oom", "NL-JOB-050")
    assert "dmesg" in top.remediation


@pytest.mark.parametrize("line", ["[1]+  Done                    python train.py", "Terminated successfully",
                                  "The process was Terminated by the user"])
def test_words_of_a_finished_job_or_prose_are_no_signal(tmp_path, line):
    (tmp_path / "job.log").write_text(line + "\n")
    assert not [e for e in nccllens.analyze(str(tmp_path)).events["kind"].to_list() if e == "cpp.signal"]


@pytest.mark.parametrize("line", [
    # source: https://github.com/uzh-rpg/RVT/issues/18 (Hydra's logging format; level changed to ERROR:
    # synthetic, built from that format "[%(asctime)s][%(name)s][%(levelname)s] - %(message)s")
    "[2023-07-14 18:21:31,182][__main__][ERROR] - Training failed at step 120",
    # Python logging's default format "%(levelname)s:%(name)s:%(message)s" (synthetic)
    "ERROR:root:the data pipeline stopped",
    # glog's "E" line of a C++ component (synthetic: built from glog's "%c%02d%02d %02d:%02d:%02d.%06d %5d %s:%d] ")
    "E1125 02:50:00.000000  4242 some/file.cc:12] Check failed: x == y",
    # source: https://github.com/PrimeIntellect-ai/verifiers/issues/208 (vLLM's logger)
    "ERROR 08-14 12:08:39 [core.py:654] Invocation of collective_rpc method failed",
])
def test_an_error_line_of_any_logger_rules_out_no_failure(tmp_path, line):
    (tmp_path / "job.log").write_text(line + "\n")
    report = nccllens.analyze(str(tmp_path))
    assert report.verdict.category not in ("none",)
    assert report.findings and report.findings[0].rule == "AN-UNCLAIMED"


def test_a_traceback_line_a_logger_printed_alone_is_a_failure_sign_without_a_cause(tmp_path):
    # source: https://github.com/vllm-project/vllm/issues/13121 (vLLM before 0.8: the source without its bracket):
    # one code line of a traceback the logger printed line by line; its exception is not in the paste
    line = "(RayWorkerWrapper pid=1061) ERROR 02-12 02:14:01 worker_base.py:574]     backend_class = ProcessGroupGloo("
    (tmp_path / "job.log").write_text(line + "\n")
    report = nccllens.analyze(str(tmp_path))
    assert report.verdict.category == "unknown" and "none says enough to classify" in report.verdict.summary
    assert report.events.filter(report.events["family"] == "log")["kind"].to_list() == ["log.fragment"]


def test_info_lines_of_the_same_loggers_are_not_failures(tmp_path):
    (tmp_path / "job.log").write_text(
        "[2023-07-14 18:21:31,182][__main__][INFO] - Training step 120\nINFO:root:epoch 3 done\n")
    verdict = nccllens.analyze(str(tmp_path)).verdict
    assert verdict.category in ("none", "unknown") and verdict.finding is None  # no failure named


def test_the_first_of_several_unclaimed_failures_leads(tmp_path):
    # source: https://github.com/horovod/horovod/issues/1350 (mpirun --tag-output): TensorFlow's C++ log says the
    # GPU ran out of memory; mpirun reports the abort that followed. The earlier, time-stamped line is the cause.
    (tmp_path / "mpirun.log").write_text(
        "[1,1]<stderr>:2019-08-26 18:41:15.943905: E tensorflow/stream_executor/cuda/cuda_driver.cc:828] failed to "
        "allocate 2.96G (3173555200 bytes) from device: CUDA_ERROR_OUT_OF_MEMORY: out of memory\n"
        "mpirun noticed that process rank 1 with PID 0 on node aaron-argo-1 exited on signal 6 (Aborted).\n")
    report = nccllens.analyze(str(tmp_path))
    assert report.verdict.category == "gpu_oom" and report.findings[0].ranks == [1]


def test_an_nccl_warn_no_rule_knows_is_a_failure(tmp_path):
    # source: https://github.com/NVIDIA/nccl/issues/653 (fixtures/public/megatron_srun_label_nccl_algo_collnet_no_algorithm_available,
    # srun --label, the host blanked out by the reporter)
    (tmp_path / "job.log").write_text("201: :41367:41367 [1] enqueue.cc:422 NCCL WARN Error : no algorithm/protocol available\n")
    report = nccllens.analyze(str(tmp_path))
    assert report.verdict.category == "nccl_internal" and report.findings[0].rule == "AN-UNCLAIMED"
    assert report.findings[0].ranks == [201]


HELPER_TRACEBACKS = {
    # source: https://github.com/MLOPTPSU/FedTorch/issues/4 (the maintainer: it does not affect the result)
    "queue feeder": ("Traceback (most recent call last):\n"
                     '  File "/usr/lib/python3.8/multiprocessing/queues.py", line 245, in _feed\n'
                     "    send_bytes(obj)\n"
                     '  File "/usr/lib/python3.8/multiprocessing/connection.py", line 200, in send_bytes\n'
                     "    self._send_bytes(m[offset:offset + size])\n"
                     "BrokenPipeError: [Errno 32] Broken pipe\n", "BrokenPipeError"),
    # https://github.com/vllm-project/vllm/issues/5468 (the run went on; the tracker is a helper process of its own)
    "resource tracker": ("Traceback (most recent call last):\n"
                         '  File "/usr/lib/python3.10/multiprocessing/resource_tracker.py", line 209, in main\n'
                         "    cache[rtype].remove(name)\n"
                         "KeyError: '/psm_10b3d52e'\n", "KeyError"),
}


@pytest.mark.parametrize("helper", sorted(HELPER_TRACEBACKS))
def test_a_standard_library_helpers_own_traceback_is_no_failure_of_the_program(tmp_path, helper):
    text, exc_type = HELPER_TRACEBACKS[helper]
    (tmp_path / "job.log").write_text(text)
    report = nccllens.analyze(str(tmp_path))
    assert report.verdict.finding is None
    assert not [f for f in report.findings if f.severity in ("critical", "error")]
    events = report.events.filter(report.events["kind"].cast(str) == "python.ignored_exception")
    assert events["level"].cast(str).to_list() == ["info"] and events["exc_type"].to_list() == [exc_type]


def test_the_interpreters_own_fatal_error_is_a_crash_it_aborts_on(tmp_path):
    # real: fixtures/public/verl_8gpu_worker_fatal_none_dealloc_actor_died/worker_stderr.log (a Ray worker's
    # stderr: CPython's fatal error, then faulthandler's dump of the threads)
    (tmp_path / "worker.log").write_text(
        "Fatal Python error: none_dealloc: deallocating None: bug likely caused by a refcount error in a C extension\n"
        "Python runtime state: initialized\n"
        "\n"
        "Current thread 0x00007fa6cdc14c40 (most recent call first):\n"
        '  File "/usr/local/lib/python3.11/site-packages/torch/utils/_contextlib.py", line 124 in decorate_context\n'
        '  File "/workspace/hintladder/verl/workers/fsdp_workers.py", line 681 in generate_sequences\n')
    report = nccllens.analyze(str(tmp_path))
    crash = report.events.filter(report.events["kind"] == "cpp.signal")
    assert crash["signal"].to_list() == ["SIGABRT"]
    assert report.verdict.category == "application_error"
    assert "none_dealloc" in report.verdict.summary


def test_a_trainers_finished_banner_is_evidence_the_job_finished(tmp_path):
    # real: fixtures/public/nemo_lightning_32gpu_nsys_file_exists_after_finished_training (NeMo's banner behind
    # srun --label's task id)
    (tmp_path / "train.out").write_text(
        " 0: [NeMo I 2024-03-01 07:12:25 pretrain:41] ************** Finished Training ***********\n")
    report = nccllens.analyze(str(tmp_path))
    assert "progress.finished" in report.events["kind"].to_list()
    assert report.verdict.category == "none"


def test_the_interpreter_failing_while_it_shuts_down_is_no_crash_of_the_run(tmp_path):
    # real: https://github.com/goodfire-ai/spd/pull/548 (a run that worked; the lines its exit printed)
    (tmp_path / "worker.log").write_text(
        "Fatal Python error: PyGILState_Release: thread state ... must be current when releasing\n"
        "Python runtime state: finalizing\n")
    report = nccllens.analyze(str(tmp_path))
    assert "cpp.signal" not in report.events["kind"].to_list()
    assert report.verdict.category == "unknown" and not report.findings  # no crash named; no finish shown either


def test_a_line_a_parser_reads_is_not_also_an_unclaimed_line(tmp_path):
    # real (https://github.com/InternLM/xtuner/issues/792): ProcessGroupNCCL's watchdog status line, which the torch
    # family reads; the claim it makes holds for the line even though its event names no line of its own
    line = ("[rank1]:[E626 11:57:18.469226529 ProcessGroupNCCL.cpp:1587] [PG 0 (default_pg) Rank 1] Exception (either an "
            "error or timeout) detected by watchdog at work: 1, last enqueued NCCL work: 1, last completed NCCL work: -1.")
    (tmp_path / "job.log").write_text(line + "\n")
    kinds = nccllens.analyze(str(tmp_path)).events["kind"].cast(str).to_list()
    assert "torch.pg_status" in kinds and "other.text" not in kinds


@pytest.mark.parametrize("line", [
    # real: https://github.com/Bihan/dstack-configs/blob/136d6ade6f904d3096ed5b393128e8c25b2b39b2/verl_demo.log
    # (Ray's job CLI after a 2-node verl run)
    "Job 'raysubmit_T3JpUGHRiC9U18UE' succeeded",
    # synthetic: LSF's job report for a job that exited 0
    "Successfully completed.",
])
def test_a_job_systems_success_line_is_evidence_the_job_finished(tmp_path, line):
    (tmp_path / "job.out").write_text(f"{line}\n")
    report = nccllens.analyze(str(tmp_path))
    assert "progress.finished" in report.events["kind"].to_list()
    assert report.verdict.category == "none"


@pytest.mark.parametrize("line", [
    "Job 'raysubmit_T3JpUGHRiC9U18UE' failed",  # Ray's job CLI for a failed job
    "Exited with exit code 1.",  # LSF's job report for a failed job
    "Successfully completed. Now saving",  # not the report's line on its own
    # synthetic: Megatron-LM's print_datetime('after training is done'), '[' + string + '] datetime: {} ': the
    # training loop ended, but the final checkpoint save and evaluation come after it and can still fail
    "[after training is done] datetime: 2024-04-09 19:15:44 ",
])
def test_a_failed_jobs_report_is_no_evidence_it_finished(tmp_path, line):
    (tmp_path / "job.out").write_text(f"{line}\n")
    report = nccllens.analyze(str(tmp_path))
    assert "progress.finished" not in report.events["kind"].to_list()


def analyze_line(tmp_path, line: str, name: str = "job.log"):
    """The report on a log that holds ``line`` alone."""
    (tmp_path / name).write_text(line + "\n")
    return nccllens.analyze(str(tmp_path))


# https://github.com/NVIDIA/nccl-tests/issues/180 (fixtures/public/nccl_tests_ucx_docker0_bridge_connect_refused): Open
# MPI's UCX transport could not reach a peer at Docker's bridge address, and the job aborted before NCCL ran
UCX_REFUSED = ("[1700554343.440877] [10-192-80-132:7356 :0]            sock.c:323  UCX  ERROR   "
               "connect(fd=48, dest_addr=172.17.0.1:42887) failed: Connection refused")


def test_a_ucx_error_line_is_a_failure_read_by_its_words(tmp_path):
    report = analyze_line(tmp_path, UCX_REFUSED, "mpirun.log")
    assert report.verdict.category == "network_unreachable"
    assert "172.17.0.1" in report.findings[0].evidence[0].text


# glibc's allocator finding the heap corrupted aborts the process: a crash, read as one whatever else the log says.
# The first line is real (https://github.com/NVIDIA/nccl/issues/1043, the title's error, fixtures/lines); the others are
# synthetic: glibc's malloc_printerr texts as malloc.c prints them, and the pre-2.26 "*** Error in" wrapper of them
@pytest.mark.parametrize("line", [
    "free(): invalid next size (fast)",
    "double free or corruption (!prev)",
    "malloc(): corrupted top size",
    "munmap_chunk(): invalid pointer",
    "*** Error in `python': double free or corruption (out): 0x00007f2c1c000b20 ***",
])
def test_glibc_finding_the_heap_corrupted_is_a_crash(tmp_path, line):
    report = analyze_line(tmp_path, line)
    top = report.findings[0]
    assert (top.rule, top.severity, top.role) == ("AN-UNCLAIMED", "error", "cause")
    assert "its signal SIGABRT" in top.summary and report.verdict.category == "application_error"


def test_prose_that_names_an_allocator_function_is_no_crash(tmp_path):
    # synthetic near miss: the same words in a sentence, not glibc's message
    assert not analyze_line(tmp_path, "free(): invalid pointer value in the allocator docs").findings
