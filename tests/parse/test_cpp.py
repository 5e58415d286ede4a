"""cpp family: ``terminate called after throwing an instance of 'X'`` + ``what():`` + backtrace -> one event.

Real blocks from shared/reference/samples/torch2.13_cpu_logs or the public issue cited next to them
(long frame lists shortened to their first frames; the lines kept are verbatim).
"""

from __future__ import annotations

import polars as pl
from hypothesis import given, settings
from hypothesis import strategies as st

from nccllens.parse import cpp
from nccllens.parse.base import FileContext, Line


def run(text: str) -> list[dict]:
    lines = [Line(file="x.log", line=i + 1, raw=s, message=s, row=i) for i, s in enumerate(text.split("\n"))]

    def following(line: Line, n: int) -> list[Line]:
        return lines[line.row + 1: line.row + 1 + n]

    keep = pl.Series([ln.message for ln in lines]).str.contains(cpp.PREFILTER).to_list()
    survivors = [ln for ln, k in zip(lines, keep, strict=True) if k]
    events = list(cpp.parse(survivors, FileContext(path="x.log", year=2026, _following=following)))
    assert all(e["kind"] == "cpp.terminate" and e["family"] == "cpp" for e in events)
    return events


# real: https://github.com/NVIDIA/Megatron-LM/issues/935
WATCHDOG_ABORT = "\n".join([
    "terminate called after throwing an instance of 'c10::DistBackendError'",
    "  what():  [PG 1 Rank 5] Process group watchdog thread terminated with exception: [Rank 5] Watchdog caught "
    "collective operation timeout: WorkNCCL(SeqNum=199, OpType=_REDUCE_SCATTER_BASE, NumelIn=7098994688, "
    "NumelOut=443687168, Timeout(ms)=600000) ran for 882737 milliseconds before timing out.",
    "Exception raised from checkTimeout at /opt/pytorch/pytorch/torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:567 "
    "(most recent call first):",
    "frame #0: c10::Error::Error(c10::SourceLocation, std::__cxx11::basic_string<char, std::char_traits<char>, "
    "std::allocator<char> >) + 0x99 (0x7fb2d6398969 in /usr/local/lib/python3.10/dist-packages/torch/lib/libc10.so)",
    "frame #1: c10d::ProcessGroupNCCL::WorkNCCL::checkTimeout(std::optional<std::chrono::duration<long, "
    "std::ratio<1l, 1000l> > >) + 0x1e1 (0x7fb2716a04e1 in /usr/local/lib/python3.10/dist-packages/torch/lib/"
    "libtorch_cuda.so)",
    "frame #2: c10d::ProcessGroupNCCL::watchdogHandler() + 0x222 (0x7fb2716a81a2 in /usr/local/lib/python3.10/"
    "dist-packages/torch/lib/libtorch_cuda.so)",
    "frame #3: c10d::ProcessGroupNCCL::ncclCommWatchdog() + 0x10f (0x7fb2716a9a0f in /usr/local/lib/python3.10/"
    "dist-packages/torch/lib/libtorch_cuda.so)",
    "",
    # synthetic: built from "Exception raised from " << function << " at " << file << ":" << line
    #   << " (most recent call first):" -- the second block torch ≥2.1 appends (pytorch_c10d.md §2.6)
    "Exception raised from ncclCommWatchdog at /opt/pytorch/pytorch/torch/csrc/distributed/c10d/"
    "ProcessGroupNCCL.cpp:1418 (most recent call first):",
    "frame #0: c10::Error::Error(c10::SourceLocation, std::__cxx11::basic_string<char, std::char_traits<char>, "
    "std::allocator<char> >) + 0x99 (0x7fb2d6398969 in /usr/local/lib/python3.10/dist-packages/torch/lib/libc10.so)",
    "",
    "[2024-07-25 06:36:18,293] torch.distributed.elastic.multiprocessing.api: [WARNING] Sending process 1 closing",
])


def test_watchdog_abort_is_one_event_with_typed_fields_and_frames():
    (e,) = run(WATCHDOG_ABORT)
    assert e["exc_type"] == "c10::DistBackendError" and e["level"] == "critical"
    assert e["message"].startswith("[PG 1 Rank 5] Process group watchdog thread terminated")
    assert (e["seq"], e["op"], e["timeout_ms"], e["elapsed_ms"], e["pg"]) == (
        199, "_REDUCE_SCATTER_BASE", 600000, 882737, "1")
    assert e.get("rank") is None  # PG 1 is a sub-group: [Rank 5] is not a global rank
    assert "checkTimeout (ProcessGroupNCCL.cpp:567)" in e["detail"]
    assert "ncclCommWatchdog (ProcessGroupNCCL.cpp:1418)" in e["detail"]
    assert "WorkNCCL::checkTimeout, ProcessGroupNCCL::watchdogHandler, ProcessGroupNCCL::ncclCommWatchdog" in e["detail"]
    assert "Error::Error" not in e["detail"]


def test_old_nccl_remote_error_what_spans_lines():
    text = "\n".join([  # real: https://github.com/tatsu-lab/stanford_alpaca/issues/207 (split at its line breaks)
        "terminate called after throwing an instance of 'std::runtime_error'",
        "  what():  NCCL error: remote process exited or there was a network error, NCCL version 2.14.3",
        "ncclRemoteError: A call failed possibly due to a network error or a remote process exiting prematurely.",
        "Last error:",
        "NET/IB : Got completion from peer 11.214.147.122<39138> with error 12, opcode 0, len 0, vendor err 129",
    ])
    (e,) = run(text)
    assert e["exc_type"] == "std::runtime_error"
    assert e["version"] == "nccl 2.14.3" and e["error_code"] == 6
    assert e["message"].endswith("vendor err 129") and "Last error:" in e["message"]


def test_gloo_enforce_size_mismatch_stops_at_next_record():
    text = "\n".join([  # gloo_size_mismatch_no_debug.log
        "terminate called after throwing an instance of 'gloo::EnforceNotMet'",
        "  what():  [enforce fail at /__w/pytorch/pytorch/third_party/gloo/gloo/transport/tcp/pair.cc:456] "
        "op.preamble.length <= op.nbytes. 32 vs 16. Received data size doesn't match expected size. Is there a "
        "distributed collective mismatch in your code?",
        "[rank1] caught builtins.RuntimeError: [/__w/pytorch/pytorch/third_party/gloo/gloo/transport/tcp/pair.cc:537] "
        "Read error [127.0.0.1]:41882: Connection reset by peer.",
    ])
    (e,) = run(text)
    assert e["exc_type"] == "gloo::EnforceNotMet"
    assert e["message"].endswith("Is there a distributed collective mismatch in your code?")
    assert e["detail"] == "received 32 vs 16 bytes"
    assert "[rank1]" not in e["message"]


def test_tcpstore_recv_block_function_names():
    # synthetic: built from "terminate called after throwing an instance of '" << type << "'" and
    #   "  what():  " << e.what(), with the DistNetworkError text and frames of tcpstore_server_died.log (2.13)
    text = "\n".join([
        "terminate called after throwing an instance of 'c10::DistNetworkError'",
        "  what():  Failed to recv, got 0 bytes. Connection was likely closed. Did the remote server shutdown or crash?",
        "Exception raised from recvBytes at /__w/pytorch/pytorch/torch/csrc/distributed/c10d/Utils.hpp:787 (most "
        "recent call first):",
        "frame #5: c10d::TCPStore::doWait(c10::ArrayRef<std::__cxx11::basic_string<char, std::char_traits<char>, "
        "std::allocator<char> > >, std::chrono::duration<long, std::ratio<1l, 1000l> >) + 0xc5 (0x7eff66d42d35 in "
        "/opt/venv/lib/python3.11/site-packages/torch/lib/libtorch_cpu.so)",
        "<omitting python frames>",
        "frame #20: __libc_start_main + 0x85 (0x7eff77245305 in /lib/x86_64-linux-gnu/libc.so.6)",
    ])
    (e,) = run(text)
    assert e["exc_type"] == "c10::DistNetworkError"
    assert e["detail"] == "raised from: recvBytes (Utils.hpp:787); frames: TCPStore::doWait"


def test_prefilter_ignores_frames_and_what_lines():
    lines = WATCHDOG_ABORT.split("\n")
    kept = pl.Series(lines).str.contains(cpp.PREFILTER).to_list()
    # the terminate line, and the watchdog's own "Exception raised from" heads (read alone when a paste
    # lost the terminate line); no frame and no what() line
    assert kept[0] and all(lines[i].lstrip().startswith("Exception raised from") for i in range(1, len(lines)) if kept[i])


def test_a_watchdog_block_inside_a_terminate_record_is_read_once():
    lines = [Line(file="x.log", line=i + 1, raw=s, message=s, row=i) for i, s in enumerate(WATCHDOG_ABORT.split("\n"))]
    kept = [ln for ln in lines if pl.Series([ln.message]).str.contains(cpp.PREFILTER)[0]]
    ctx = FileContext(path="x.log", _following=lambda ln, n: lines[ln.row + 1: ln.row + 1 + n])
    assert [e["kind"] for e in cpp.parse(kept, ctx)] == ["cpp.terminate"]


def test_the_watchdogs_stack_alone_is_a_failure_raised_by_the_watchdog():
    # https://github.com/jpata/particleflow/issues/390 (fixtures/public/particleflow_rank0_only_end_of_epoch_predictions_watchdog):
    # the paste starts after the watchdog's log line and its terminate line
    text = ["Exception raised from ncclCommWatchdog at ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1521 "
            "(most recent call first):",
            "frame #0: c10::Error::Error(c10::SourceLocation, std::string) + 0x96 (0x1554e8b12f86 in "
            "/mnt/home/ewulff/miniforge3/envs/mlpf/lib/python3.11/site-packages/torch/lib/libc10.so)"]
    lines = [Line(file="x.log", line=i + 1, raw=s, message=s, row=i) for i, s in enumerate(text)]
    ctx = FileContext(path="x.log", _following=lambda ln, n: lines[ln.row + 1: ln.row + 1 + n])
    (e,) = cpp.parse(lines[:1], ctx)
    assert (e["kind"], e["level"], e["key"]) == ("cpp.raised", "error", "ncclCommWatchdog")


@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(st.text(max_size=120), st.sampled_from(WATCHDOG_ABORT.split("\n"))), max_size=12))
def test_parse_never_raises(texts):
    texts = ["terminate called after throwing an instance of '"] + texts
    lines = [Line(file="x.log", line=i + 1, raw=s, message=s, row=i) for i, s in enumerate(texts)]
    ctx = FileContext(path="x.log", _following=lambda ln, n: lines[ln.row + 1: ln.row + 1 + n])
    for e in cpp.parse(lines, ctx):
        assert e["kind"].startswith("cpp.")
