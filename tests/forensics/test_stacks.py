"""Stacks taken while a job hangs (py-spy, gdb, faulthandler) say where each process waits: the process
that is not in the collective the others wait in is where the hang starts."""

from __future__ import annotations

from pathlib import Path

import polars as pl

import nccllens
from nccllens.extract import events_from_text
from nccllens.parse.stacks import wait_kind

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"

# source: https://github.com/pytorch/pytorch/issues/87995 (py-spy dump of rank 0 of a 32-rank fairseq job)
PY_SPY = """\
Thread 0x7FA6E7C01740 (idle): "MainThread"
    wait (threading.py:302)
    get (queue.py:170)
    __next__ (fairseq/data/iterators.py:648)
    __iter__ (fairseq/data/iterators.py:59)
    _chunk_iterator (fairseq/data/iterators.py:528)
    train (fairseq_cli/train.py:274)
    main (fairseq_cli/train.py:165)
"""

# source: https://github.com/NVIDIA/nccl/issues/585 (gdb of a survivor after a peer was killed, NCCL 2.7.6)
GDB = """\
#0  0x00007ffd5c5f8b39 in clock_gettime ()
#1  0x00007faad0d86976 in __GI___clock_gettime (clock_id=4, tp=0x7ffd5c4e7e90) at ../sysdeps/unix/clock_gettime.c:115
#2  0x00007faaad40e76e in ?? () from /usr/lib/x86_64-linux-gnu/libcuda.so.1
#7  0x00007faaad48fe39 in cuStreamSynchronize () from /usr/lib/x86_64-linux-gnu/libcuda.so.1
#8  0x00007faacce4e060 in ?? () from /usr/local/cuda/lib64/libcudart.so.10.1
#9  0x00007faacce8f8ed in cudaStreamSynchronize () from /usr/local/cuda/lib64/libcudart.so.10.1
"""

# source: a torchrun run made for this project (torch 2.13.0+cpu, gloo; faulthandler.dump_traceback_later),
# fixtures/dataloader_hang_stacks: rank 0 waits in all_reduce
FAULTHANDLER_COLLECTIVE = """\
Timeout (0:00:08)!
Thread 0x00007f9d8aefe6c0 (most recent call first):
  File "/root/.pyenv/versions/3.11.7/lib/python3.11/threading.py", line 327 in wait
  File "/root/.pyenv/versions/3.11.7/lib/python3.11/multiprocessing/queues.py", line 231 in _feed
  File "/root/.pyenv/versions/3.11.7/lib/python3.11/threading.py", line 982 in run
  File "/root/.pyenv/versions/3.11.7/lib/python3.11/threading.py", line 1045 in _bootstrap_inner
  File "/root/.pyenv/versions/3.11.7/lib/python3.11/threading.py", line 1002 in _bootstrap

Thread 0x00007f9db363db80 (most recent call first):
  File "/work/torchvenv/lib/python3.11/site-packages/torch/distributed/distributed_c10d.py", line 3252 in all_reduce
  File "/work/torchvenv/lib/python3.11/site-packages/torch/distributed/c10d_logger.py", line 83 in wrapper
  File "/work/main/fixtures/generate/jobs/train.py", line 91 in average_gradients
  File "/work/main/fixtures/generate/jobs/train.py", line 134 in main
  File "/work/torchvenv/lib/python3.11/site-packages/torch/distributed/elastic/multiprocessing/errors/__init__.py", line 367 in wrapper
  File "/work/main/fixtures/generate/jobs/train.py", line 151 in <module>
"""


def _threads(text: str) -> pl.DataFrame:
    events = events_from_text(text)
    return events.filter(pl.col("kind") == "stack.thread")


def test_py_spy_gdb_and_faulthandler_threads_are_read_with_what_they_wait_on():
    spy = _threads(PY_SPY).row(0, named=True)
    assert (spy["value"], spy["key"]) == ("MainThread", "data")
    gdb = _threads(GDB).row(0, named=True)
    assert gdb["key"] == "gpu_sync" and "cuStreamSynchronize" in gdb["detail"] and "??" not in gdb["detail"]
    threads = _threads(FAULTHANDLER_COLLECTIVE)
    assert threads.height == 2
    main = threads.filter(pl.col("value") == "MainThread").row(0, named=True)
    assert main["key"] == "collective" and main["detail"].startswith("frames: all_reduce")


def test_generic_names_need_their_file_to_mean_a_wait():
    assert wait_kind([("get", "queue.py"), ("train", "train.py")]) == "data"
    assert wait_kind([("get", "config.py"), ("train", "train.py")]) == "other"
    assert wait_kind([("wait", "threading.py"), ("barrier", "torch/distributed/distributed_c10d.py")]) == "collective"


def test_a_lone_stack_waiting_for_data_names_its_rank(tmp_path):
    (tmp_path / "rank0_pyspy.log").write_text(PY_SPY)
    report = nccllens.analyze(str(tmp_path))
    top = report.findings[0]
    assert report.verdict.category == "straggler"
    assert top.rule == "AN-STACK-DATA-WAIT" and top.ranks == [0]


def test_stacks_that_all_wait_on_the_gpu_are_a_hang_not_no_failure(tmp_path):
    (tmp_path / "survivor_stack.log").write_text(GDB)
    report = nccllens.analyze(str(tmp_path))
    assert report.verdict.category == "collective_timeout"
    assert report.findings[0].rule == "AN-STACK-HANG"
    assert "cuStreamSynchronize" in report.findings[0].summary


def test_the_rank_elsewhere_is_named_in_a_real_gloo_hang():
    report = nccllens.analyze(str(FIXTURES / "dataloader_hang_stacks"))
    stack = next(f for f in report.findings if f.rule == "AN-STACK-ELSEWHERE")
    assert stack.ranks == [3] and stack.hosts == ["node-b"]
    assert report.findings[0].ranks == [3]


def test_a_faulthandler_timeout_header_is_not_a_harness_kill(tmp_path):
    (tmp_path / "rank0.log").write_text(FAULTHANDLER_COLLECTIVE)
    report = nccllens.analyze(str(tmp_path))
    assert all(f.category != "job_killed" for f in report.findings)


def test_stacks_printed_by_a_crash_are_the_crash_not_a_hang(tmp_path):
    # source: CPython faulthandler's fatal-signal output shape, ``Fatal Python error: Segmentation fault`` then
    # the current thread (synthetic: built from faulthandler's format strings, CPython 3.11)
    (tmp_path / "rank0.log").write_text(
        "Fatal Python error: Segmentation fault\n\n"
        "Current thread 0x00007f9db363db80 (most recent call first):\n"
        '  File "/opt/venv/lib/python3.11/site-packages/torch/distributed/distributed_c10d.py", line 3252 in all_reduce\n'
        '  File "/work/train.py", line 151 in <module>\n')
    report = nccllens.analyze(str(tmp_path))
    assert not any(f.rule.startswith("AN-STACK") for f in report.findings)


def test_a_process_stuck_inside_nccl_teardown_is_nccl_s_own_problem(tmp_path):
    # source: https://github.com/NVIDIA/nccl/issues/992 (fixtures/public/ncclcommabort_stuck_commfree_pyspy_
    # multithread_abort_fixed_2_19): py-spy --native of a thread stuck in ncclCommAbort -> commFree
    import shutil

    case = Path(__file__).resolve().parents[2] / "fixtures/public/ncclcommabort_stuck_commfree_pyspy_multithread_abort_fixed_2_19"
    shutil.copy(case / "stack.txt", tmp_path / "stack.txt")
    top = nccllens.analyze(str(tmp_path)).findings[0]
    assert (top.rule, top.category) == ("AN-STACK-TEARDOWN", "nccl_internal")
    assert "commFree" in top.summary


# source: https://github.com/sgl-project/sglang/issues/22607 (py-spy frames of TP0 and of TP1-3 during a TP=4 hang,
# pasted without their thread lines; fixtures/public/sglang_hicache_tp0_extra_allreduce_prefetch_divergence)
HEADLESS_ALL_REDUCE = """\
all_reduce (torch/distributed/distributed_c10d.py:3075)
  _all_reduce_attn_groups (hiradix_cache.py:196)
  can_terminate_prefetch (hiradix_cache.py:1350)
"""
HEADLESS_BROADCAST = """\
broadcast (torch/distributed/distributed_c10d.py:2974)
  broadcast_pyobj (utils/common.py:1437)
  _broadcast_reqs_across_ranks (scheduler_components/request_receiver.py:187)
"""


def test_a_py_spy_block_without_its_thread_line_is_a_stack_and_names_its_collective():
    threads = _threads(HEADLESS_ALL_REDUCE)
    assert threads.height == 1
    row = threads.row(0, named=True)
    assert (row["key"], row["op"]) == ("collective", "all_reduce")
    assert _threads("main (train.py:12)\n").height == 0  # one frame-shaped line is no stack


def test_ranks_waiting_in_different_collectives_diverged_and_the_minority_is_named(tmp_path):
    (tmp_path / "rank0.log").write_text(HEADLESS_ALL_REDUCE)
    for rank in (1, 2, 3):
        (tmp_path / f"rank{rank}.log").write_text(HEADLESS_BROADCAST)
    report = nccllens.analyze(str(tmp_path))
    top = report.findings[0]
    assert report.verdict.category == "rank_divergence"
    assert (top.rule, top.ranks) == ("AN-STACK-DIVERGED", [0])
    assert "all_reduce: rank 0; broadcast: ranks 1-3" in top.title


def test_two_stacks_in_different_collectives_diverged_without_a_culprit(tmp_path):
    (tmp_path / "tp0.log").write_text(HEADLESS_ALL_REDUCE)
    (tmp_path / "tp1.log").write_text(HEADLESS_BROADCAST)
    report = nccllens.analyze(str(tmp_path))
    top = report.findings[0]
    assert (top.rule, top.category, top.ranks) == ("AN-STACK-DIVERGED", "rank_divergence", [])
    assert "do not say which side" in top.summary


def test_stacks_in_the_same_collective_are_a_hang_not_divergence(tmp_path):
    for rank in (0, 1):
        (tmp_path / f"rank{rank}.log").write_text(HEADLESS_BROADCAST)
    assert nccllens.analyze(str(tmp_path)).findings[0].rule == "AN-STACK-HANG"
