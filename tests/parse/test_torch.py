"""torch family: c10d watchdog, PG status, teardown, dump/heartbeat, NCCL errors wrapped by PyTorch.

Lines are real (shared/reference/pytorch_c10d.md, shared/reference/samples, or the public issue cited
next to them) unless marked ``# synthetic``.
"""

from __future__ import annotations

import re
from datetime import datetime

import polars as pl

from nccllens.parse import torch
from nccllens.parse.base import FileContext, Line

_OUTER = re.compile(r"^(?:\(\w+ pid=\d+(?:, ip=[\d.]+)?\) )?(?:\[default\d+\]:)?(?:\[rank(?P<rank>\d+)\]:)?")


def run(text: str) -> list[dict]:
    """Parse ``text`` as one file: strip the launcher prefixes the pipeline strips, keep PREFILTER survivors."""
    lines = []
    for i, raw in enumerate(text.split("\n")):
        m = _OUTER.match(raw)
        rank = int(m["rank"]) if m["rank"] else None
        lines.append(Line(file="x.log", line=i + 1, raw=raw, message=raw[m.end():], rank=rank, row=i))

    def following(line: Line, n: int) -> list[Line]:
        return lines[line.row + 1: line.row + 1 + n]

    keep = pl.Series([ln.message for ln in lines]).str.contains(torch.PREFILTER).to_list()
    survivors = [ln for ln, k in zip(lines, keep, strict=True) if k]
    events = list(torch.parse(survivors, FileContext(path="x.log", year=2026, _following=following)))
    for e in events:
        # NCCL's "Last error:" payload under a torch wrapper is an NCCL event of its own
        assert (e["kind"], e["family"]) == ("nccl.last_error", "nccl") or (
            e["kind"].startswith("torch.") and e["family"] == "torch"), e
    return events


def one(text: str) -> dict:
    events = run(text)
    assert len(events) == 1, events
    return events[0]


# --- watchdog timeout, every WorkNCCL generation -------------------------------------------------

def test_watchdog_timeout_2_4_numel_fields_and_header_time():
    # real 2.4-era line (pytorch_c10d.md §2.2)
    e = one("[rank1]:[E1003 18:37:01.832146912 ProcessGroupNCCL.cpp:607] [Rank 1] Watchdog caught collective "
            "operation timeout: WorkNCCL(SeqNum=6463, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=1800000) "
            "ran for 1800017 milliseconds before timing out.")
    assert e["kind"] == "torch.watchdog_timeout"
    assert (e["seq"], e["op"], e["timeout_ms"], e["elapsed_ms"]) == (6463, "ALLREDUCE", 1800000, 1800017)
    assert e["level"] == "error"
    assert e["ts"] == datetime(2026, 10, 3, 18, 37, 1, 832146) and e["ts_kind"] == "no_year"
    assert e["message"].startswith("[Rank 1] Watchdog caught")
    assert "rank" not in e  # the [rank1]: prefix already gave the global rank


def test_watchdog_group_rank_differs_from_process_rank():
    # https://github.com/NVIDIA/nccl/issues/1610 : process rank13 prints group rank [Rank 1]
    e = one("[rank13]:[E218 04:54:22.864467604 ProcessGroupNCCL.cpp:616] [Rank 1] Watchdog caught collective "
            "operation timeout: WorkNCCL(SeqNum=216, OpType=ALLTOALL_BASE, NumelIn=1379328, NumelOut=1572864, "
            "Timeout(ms)=600000) ran for 600045 milliseconds before timing out.")
    assert e.get("rank") is None  # keep the line's global rank 13, never the group rank 1
    assert e["op"] == "ALLTOALL_BASE" and e["seq"] == 216


def test_watchdog_rank_from_bare_rank_prefix_when_line_has_none():
    # ≤2.3 without the [rankN]: prefix: https://github.com/meta-llama/llama-cookbook/issues/567 style
    # synthetic: built from "[Rank " << rank << "] Watchdog caught collective operation timeout: " << work
    #   << " ran for " << ms << " milliseconds before timing out.", torch 2.0 (WorkNCCL without Numel*)
    e = one("[E ProcessGroupNCCL.cpp:828] [Rank 3] Watchdog caught collective operation timeout: "
            "WorkNCCL(SeqNum=469508, OpType=ALLREDUCE, Timeout(ms)=1800000) ran for 1800355 milliseconds before "
            "timing out.")
    assert e["rank"] == 3 and e["seq"] == 469508 and e["elapsed_ms"] == 1800355
    assert e.get("ts") is None


def test_watchdog_caught_blocking_and_tensorshape_and_vendor_variants():
    text = "\n".join([
        # synthetic: built from "[Rank " << rank_ << "] Caught collective operation timeout: " << (*this)
        #   << " ran for " << ms << " milliseconds before timing out.", torch 1.10 (TensorShape= field)
        "[Rank 0] Caught collective operation timeout: WorkNCCL(SeqNum=12, OpType=BROADCAST, TensorShape=[1024], "
        "Timeout(ms)=10000) ran for 10012 milliseconds before timing out.",
        # real: https://github.com/huggingface/diffusers/issues/12422
        "[rank1]:[E1002 18:16:40.662691402 ProcessGroupNCCL.cpp:756] [Rank 1] Work WorkNCCL(SeqNum=2521, "
        "OpType=ALLREDUCE, NumelIn=160672064, NumelOut=160672064, Timeout(ms)=600000) timed out in blocking wait.",
        # synthetic: built from "[PG GUID " << pg_uid << " Rank " << rank << "] Watchdog caught collective
        #   operation timeout: " << WorkXCCL(...), torch 2.14 prefix (PR #191440) on a vendor backend
        "[PG GUID 3 Rank 6] Watchdog caught collective operation timeout: WorkXCCL(SeqNum=7, OpType=COALESCED, "
        "NumelIn=0, NumelOut=0, Timeout(ms)=600000) ran for 600100 milliseconds before timing out.",
    ])
    a, b, c = run(text)
    assert (a["seq"], a["op"], a["timeout_ms"], a["elapsed_ms"], a["rank"]) == (12, "BROADCAST", 10000, 10012, 0)
    assert b["kind"] == "torch.watchdog_timeout" and b["seq"] == 2521 and b.get("elapsed_ms") is None
    assert (c["pg"], c["op"], c["seq"]) == ("3", "COALESCED", 7)
    assert c.get("rank") is None  # PG 3 is not the default PG: its rank is a group rank


# --- PG status lines, all eras -------------------------------------------------------------------

def test_pg_status_all_eras_and_pg_prefix_shapes():
    text = "\n".join([  # real lines, pytorch_c10d.md §2.4
        "[rank1]:[E1003 18:37:01.833575187 ProcessGroupNCCL.cpp:1664] [PG 0 (default_pg) Rank 1] Exception (either "
        "an error or timeout) detected by watchdog at work: 6463, last enqueued NCCL work: 6463, last completed NCCL "
        "work: 6462.",
        "[rank1]:[E1003 18:37:01.833621509 ProcessGroupNCCL.cpp:1709] [PG 0 (default_pg) Rank 1] Timeout at NCCL "
        "work: 6463, last enqueued NCCL work: 6463, last completed NCCL work: 6462.",
        "[rank0]:[E709 17:05:38.162814866 ProcessGroupNCCL.cpp:2271] [PG ID 0 PG GUID 0(default_pg) Rank 0]  failure "
        "detected by watchdog at work sequence id: 20585 PG status: last enqueued work: 20589, last completed work: "
        "20584",
        "[rank1]:[E1218 20:27:21.484903450 ProcessGroupNCCL.cpp:2168] [PG ID 1 PG GUID 1 Rank 1]  failure detected "
        "by watchdog at work sequence id: 1 PG status: last enqueued work: 547, last completed work: -1",
    ])
    events = run(text)
    assert [e["kind"] for e in events] == ["torch.pg_status"] * 4
    assert [(e["seq"], e["last_enqueued"], e["last_completed"]) for e in events] == [
        (6463, 6463, 6462), (6463, 6463, 6462), (20585, 20589, 20584), (1, 547, -1)]
    assert [e["pg"] for e in events] == ["0", "0", "0", "1"]


def test_pg_status_garbage_last_completed_is_null_and_exception_hit():
    text = "\n".join([
        # synthetic: built from logPrefix() << "Timeout at NCCL work: " << seq << ", last enqueued NCCL work: "
        #   << enq << ", last completed NCCL work: " << comp << ".", torch 2.3 (garbage counter seen in 2.3 logs)
        "[E ProcessGroupNCCL.cpp:1316] [PG 0 Rank 2] Timeout at NCCL work: 512, last enqueued NCCL work: 512, "
        "last completed NCCL work: 76280750235782912.",
        # synthetic: built from logPrefix() << "Exception hit in NCCL work: " << seq, torch 2.4-dev (PR #123023)
        "[E ProcessGroupNCCL.cpp:1501] [PG 0 Rank 2] Exception hit in NCCL work: 512",
    ])
    a, b = run(text)
    assert a["last_enqueued"] == 512 and a["last_completed"] is None and a["rank"] == 2
    assert b["kind"] == "torch.pg_status" and b["seq"] == 512 and b.get("last_enqueued") is None


# --- teardown, watchdog death, dump, heartbeat ----------------------------------------------------

def test_taking_down_both_wordings():
    text = "\n".join([
        # real: https://github.com/tatsu-lab/stanford_alpaca/issues/207 (one line per log record)
        "[E ProcessGroupNCCL.cpp:455] Some NCCL operations have failed or timed out. Due to the asynchronous nature "
        "of CUDA kernels, subsequent GPU operations might run on corrupted/incomplete data.",
        "[E ProcessGroupNCCL.cpp:460] To avoid data inconsistency, we are taking the entire process down.",
        # real: https://github.com/modelscope/DiffSynth-Studio/issues/458
        "[rank4]:[E318 07:39:53.792795153 ProcessGroupNCCL.cpp:636] [Rank 4] To avoid data inconsistency, we are "
        "taking the entire process down.",
    ])
    events = run(text)
    assert [e["kind"] for e in events] == ["torch.taking_down"] * 3
    assert events[2]["ts"] == datetime(2026, 3, 18, 7, 39, 53, 792795)


def test_watchdog_thread_terminated_folds_backtrace():
    # real: https://github.com/meta-llama/llama-cookbook/issues/567 (frames shortened to the first four)
    text = "\n".join([
        "[rank1]:[E ProcessGroupNCCL.cpp:1414] [PG 0 Rank 1] Process group watchdog thread terminated with exception: "
        "[Rank 1] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1474236, OpType=_ALLGATHER_BASE, "
        "NumelIn=262675456, NumelOut=1050701824, Timeout(ms)=600000) ran for 600096 milliseconds before timing out.",
        "[rank1]:Exception raised from checkTimeout at ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:565 (most "
        "recent call first):",
        "[rank1]:frame #0: c10::Error::Error(c10::SourceLocation, std::string) + 0x57 (0x7fbacdf3c897 in "
        "/home/ec2-user/anaconda3/envs/pytorch_p310/lib/python3.10/site-packages/torch/lib/libc10.so)",
        "[rank1]:frame #1: c10d::ProcessGroupNCCL::WorkNCCL::checkTimeout(std::optional<std::chrono::duration<long, "
        "std::ratio<1l, 1000l> > >) + 0x1d2 (0x7fbacf215c62 in /home/ec2-user/anaconda3/envs/pytorch_p310/lib/"
        "python3.10/site-packages/torch/lib/libtorch_cuda.so)",
        "[rank1]:frame #2: c10d::ProcessGroupNCCL::watchdogHandler() + 0x1a0 (0x7fbacf21aa80 in /home/ec2-user/"
        "anaconda3/envs/pytorch_p310/lib/python3.10/site-packages/torch/lib/libtorch_cuda.so)",
    ])
    e = one(text)
    assert e["kind"] == "torch.watchdog_exception"
    assert (e["seq"], e["op"], e["timeout_ms"], e["pg"]) == (1474236, "_ALLGATHER_BASE", 600000, "0")
    assert "checkTimeout (ProcessGroupNCCL.cpp:565)" in e["detail"]
    assert "WorkNCCL::checkTimeout" in e["detail"] and "ProcessGroupNCCL::watchdogHandler" in e["detail"]


# real 2.4-era line (pytorch_c10d.md, ArcticTraining#219); the tests below pair it with the backtrace
# lines of the llama-cookbook issue above or with itself: those pairings are synthetic
WATCHDOG_TIMEOUT = ("[rank1]:[E1003 18:37:01.832146912 ProcessGroupNCCL.cpp:607] [Rank 1] Watchdog caught collective "
                    "operation timeout: WorkNCCL(SeqNum=6463, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, "
                    "Timeout(ms)=1800000) ran for 1800017 milliseconds before timing out.")


def test_a_record_that_takes_only_a_backtrace_still_folds_one_right_after_it():
    # records that look no further than the next line (one line is read first) keep their backtrace
    text = "\n".join([
        WATCHDOG_TIMEOUT,
        "[rank1]:Exception raised from checkTimeout at ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:565 (most "
        "recent call first):",
        "[rank1]:frame #0: c10::Error::Error(c10::SourceLocation, std::string) + 0x57 (0x7fbacdf3c897 in "
        "/home/ec2-user/anaconda3/envs/pytorch_p310/lib/python3.10/site-packages/torch/lib/libc10.so)",
    ])
    e = one(text)
    assert e["kind"] == "torch.watchdog_timeout"
    assert "checkTimeout (ProcessGroupNCCL.cpp:565)" in e["detail"]


def test_a_record_without_continuation_leaves_the_next_line_alone():
    events = run(WATCHDOG_TIMEOUT + "\n" + WATCHDOG_TIMEOUT.replace("SeqNum=6463", "SeqNum=6464"))
    assert [e["kind"] for e in events] == ["torch.watchdog_timeout"] * 2
    assert not events[0].get("detail")


def test_nccl_watchdog_terminated_with_nccl_error_and_last_error():
    text = "\n".join([  # real, pytorch_c10d.md §2.9 (≤2.2 wording)
        "[E ProcessGroupNCCL.cpp:852] [Rank 16] NCCL watchdog thread terminated with exception: NCCL error: remote "
        "process exited or there was a network error, NCCL version 2.19.3",
        "ncclRemoteError: A call failed possibly due to a network error or a remote process exiting prematurely.",
        "Last error:",
        "NET/IB : Got completion from peer 10.42.0.2<47534> with error 5, opcode 48, len 32764, vendor err 244",
    ])
    e, payload = run(text)
    assert e["kind"] == "torch.watchdog_exception"
    assert e["version"] == "nccl 2.19.3" and e["error_code"] == 6 and e["value"] == "ncclRemoteError"
    # the payload is an event of its own, on its own line, with the wrapper's rank: rules see the IB error
    assert payload["kind"] == "nccl.last_error" and payload["line"] == 4 and payload["rank"] == 16
    assert payload["message"].startswith("NET/IB : Got completion from peer 10.42.0.2<47534> with error 5")
    assert e["detail"].startswith("NET/IB : Got completion from peer 10.42.0.2<47534>")
    assert e["rank"] == 16


def test_dump_signal_names_the_first_rank_and_glog_header():
    text = "\n".join([
        # real: https://github.com/vllm-project/vllm-omni/issues/2928
        "[rank0]:[E418 01:32:50.907342463 ProcessGroupNCCL.cpp:1890] [PG ID 0 PG GUID 0(default_pg) Rank 0] Received "
        "a dump signal due to a collective timeout from  rank 1 and we will try our best to dump the debug info. Last "
        "enqueued NCCL work: 233659, last completed NCCL work: 233659.This is most likely caused by incorrect usages "
        "of collectives, e.g., wrong sizes used across ranks, the order of collectives is not same for all ranks or "
        "the scheduled collective, for some reason, didn't run. Additionally, this can be caused by GIL deadlock or "
        "other reasons such as network errors or bugs in the communications library (e.g. NCCL), etc.",
        # real glog build, pytorch_c10d.md §1
        "E0927 12:07:22.643702 1012209 ProcessGroupNCCL.cpp:1356] [PG ID 0 PG GUID 0(default_pg) Rank 0] "
        "ProcessGroupNCCL preparing to dump debug info.",
    ])
    a, b = run(text)
    assert a["kind"] == "torch.dump" and a["peer"] == "rank 1"
    assert (a["last_enqueued"], a["last_completed"]) == (233659, 233659)
    assert b["kind"] == "torch.dump" and b["ts"] == datetime(2026, 9, 27, 12, 7, 22, 643702) and b["rank"] == 0


def test_heartbeat_watchdog_stuck_and_fatal_terminate():
    text = "\n".join([
        # real: https://github.com/hiyouga/LlamaFactory/issues/8549
        "[rank2]:[E704 13:48:58.260494728 ProcessGroupNCCL.cpp:1746] [PG ID 0 PG GUID 0(default_pg) Rank 2] "
        "ProcessGroupNCCL's watchdog got stuck for 480 seconds without making progress in monitoring enqueued "
        "collectives. This typically indicates a NCCL/CUDA API (e.g., CudaEventDestroy) hang blocking the watchdog.",
        # real: https://github.com/om-ai-lab/VLM-R1/issues/257 (re-joined where the issue wrapped it)
        "[rank6]:[F429 14:03:49.385461578 ProcessGroupNCCL.cpp:1554] [PG ID 0 PG GUID 0(default_pg) Rank 6] [PG ID 0 "
        "PG GUID 0(default_pg) Rank 6] Terminating the process after attempting to dump debug info, due to "
        "ProcessGroupNCCL watchdog hang.",
    ])
    a, b = run(text)
    assert a["kind"] == "torch.heartbeat" and a["elapsed_ms"] == 480_000
    assert b["kind"] == "torch.heartbeat" and b["level"] == "critical"


def test_failed_collective_stack_is_folded():
    text = "\n".join([  # real, pytorch_c10d.md §2.5
        "Stack trace of the failed collective: ",
        "#0 all_reduce from /usr/local/lib/python3.12/dist-packages/torch/distributed/distributed_c10d.py:3174",
        "#1 wrapper from /usr/local/lib/python3.12/dist-packages/torch/distributed/c10d_logger.py:83",
    ])
    e = one(text)
    assert e["key"] == "failed_collective_stack" and e["detail"].startswith("#0 all_reduce from")
    assert e["detail"].count("\n") == 1


# --- NCCL errors wrapped by PyTorch ---------------------------------------------------------------

def test_nccl_error_in_with_detail_and_last_error():
    text = "\n".join([  # real, pytorch_c10d.md §2.9
        "torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1251, "
        "internal error - please report this issue to the NCCL developers, NCCL version 2.18.6",
        "ncclInternalError: Internal check failed.",
        "Last error:",
        "Bootstrap : no socket interface found",
    ])
    e, payload = run(text)
    assert (payload["kind"], payload["message"]) == ("nccl.last_error", "Bootstrap : no socket interface found")
    assert e["kind"] == "torch.nccl_error"
    assert (e["version"], e["error_code"], e["key"]) == ("nccl 2.18.6", 3, "ProcessGroupNCCL.cpp:1251")
    assert e["detail"] == "Bootstrap : no socket interface found"
    assert e["exc_type"] == "torch.distributed.DistBackendError"


def test_nccl_error_remote_from_public_issue():
    text = "\n".join([  # real: https://github.com/NVIDIA/nccl/issues/2076
        "torch.distributed.DistBackendError: NCCL error in: /pytorch/torch/csrc/distributed/c10d/NCCLUtils.hpp:268, "
        "remote process exited or there was a network error, NCCL version 2.21.5",
        "ncclRemoteError: A call failed possibly due to a network error or a remote process exiting prematurely.",
        "Last error:",
        "socketProgressOpt: Call to recv from 172....<33759> failed : Connection reset by peer",
    ])
    e, payload = run(text)
    assert e["error_code"] == 6 and e["version"] == "nccl 2.21.5"
    assert e["detail"].startswith("socketProgressOpt: Call to recv")
    assert payload["kind"] == "nccl.last_error" and payload["error_code"] == 6 and payload["line"] == 4


def test_the_failed_collective_s_stack_is_part_of_the_timeout_report_not_an_error():
    # real, torch 2.11 on an H200 (fixtures/public/gpu_h200_lightning_ddp_kernel_outlasts_pg_timeout): glog level E
    text = "\n".join([
        "[rank0]:[E1126 19:47:41.480233388 ProcessGroupNCCL.cpp:733] Stack trace of the failed collective: ",
        "#0 barrier from /opt/torch/.venv/lib/python3.12/site-packages/torch/distributed/distributed_c10d.py:5030",
        "#1 wrapper from /opt/torch/.venv/lib/python3.12/site-packages/torch/distributed/c10d_logger.py:83",
    ])
    e = one(text)
    assert e["key"] == "failed_collective_stack" and e["level"] == "info"
    assert e["detail"].startswith("#0 barrier from")
