"""torch family: TORCH_DISTRIBUTED_DEBUG=DETAIL fingerprints, monitoredBarrier, DDP reducer errors;
PREFILTER selectivity and robustness. Real lines from shared/reference/samples/torch2.13_cpu_logs.
"""

from __future__ import annotations

import polars as pl
from hypothesis import given, settings
from hypothesis import strategies as st

from nccllens.parse import torch
from nccllens.parse.base import FileContext, Line

_TENSOR_OPTS = ("TensorOptions(dtype=float (default), device=cpu, layout=Strided (default), requires_grad=false "
                "(default), pinned_memory=false (default), memory_format=(nullopt))")


def _fp(seq: int, op: str, shape: int) -> str:
    return (f"CollectiveFingerPrint(SequenceNumber={seq}, OpType={op}, TensorShape=[{shape}], TensorDtypes=Float, "
            f"TensorDeviceTypes={_TENSOR_OPTS})")


# detail_fingerprint_optype_mismatch.log, rank 0's line (reassembled from its parts, verbatim)
OPTYPE = ("[rank0] caught builtins.RuntimeError: Detected mismatch between collectives on ranks. Rank 0 is running "
          f"collective: {_fp(1, 'ALLREDUCE', 16)}, but Rank 1 is running collective: {_fp(1, 'BROADCAST', 16)}."
          "Collectives differ in the following aspects: \t  Op type: ALLREDUCEvs BROADCAST")
# detail_fingerprint_shape_mismatch.log: two ranks' prints on one physical line
SHAPE = ("[rank1] caught builtins.RuntimeError: Detected mismatch between collectives on ranks. Rank 1 is running "
         f"collective: {_fp(1, 'ALLREDUCE', 32)}, but Rank 0 is running collective: {_fp(1, 'ALLREDUCE', 16)}."
         "Collectives differ in the following aspects: \t  Tensor Tensor shapes: 32vs 16"
         "[rank0] caught builtins.RuntimeError: Detected mismatch between collectives on ranks. Rank 0 is running "
         f"collective: {_fp(1, 'ALLREDUCE', 16)}, but Rank 1 is running collective: {_fp(1, 'ALLREDUCE', 32)}."
         "Collectives differ in the following aspects: \t  Tensor Tensor shapes: 16vs 32")


def run(text: str) -> list[dict]:
    lines = [Line(file="x.log", line=i + 1, raw=s, message=s, row=i) for i, s in enumerate(text.split("\n"))]

    def following(line: Line, n: int) -> list[Line]:
        return lines[line.row + 1: line.row + 1 + n]

    keep = pl.Series([ln.message for ln in lines]).str.contains(torch.PREFILTER).to_list()
    survivors = [ln for ln, k in zip(lines, keep, strict=True) if k]
    events = list(torch.parse(survivors, FileContext(path="x.log", year=2026, _following=following)))
    assert all(e["kind"].startswith("torch.") for e in events)
    return events


def own(text: str) -> list[dict]:
    """The fingerprint events of the printing ranks (not the peer fingerprints their lines name)."""
    return [e for e in run(text) if e["kind"] != "torch.fingerprint_peer"]


def test_fingerprint_op_type_mismatch():
    (e,) = own(OPTYPE)
    assert e["kind"] == "torch.fingerprint_mismatch"
    assert (e["seq"], e["op"], e["rank"], e["peer"]) == (1, "ALLREDUCE", 0, "rank 1")
    assert e["detail"] == "Op type: ALLREDUCE vs BROADCAST"


def test_the_other_ranks_fingerprint_a_mismatch_names_is_that_ranks():
    (peer,) = [e for e in run(OPTYPE) if e["kind"] == "torch.fingerprint_peer"]
    assert (peer["rank"], peer["seq"], peer["op"], peer["peer"], peer["level"]) == (1, 1, "BROADCAST", "rank 0", "debug")


def test_fingerprint_two_prints_on_one_line_give_two_events():
    a, b = own(SHAPE)
    assert (a["rank"], a["peer"], a["detail"]) == (1, "rank 0", "Tensor shapes: 32 vs 16")
    assert (b["rank"], b["peer"], b["detail"]) == (0, "rank 1", "Tensor shapes: 16 vs 32")
    assert "[rank0]" not in a["message"]


def test_fingerprint_old_format_without_sequence_number():
    # synthetic: built from "Detected mismatch between collectives on ranks. Rank " << rank << " is running
    #   inconsistent collective: " << fingerprint, torch 1.10-1.13 (ProcessGroupWrapper, no SequenceNumber)
    (e,) = run("RuntimeError: Detected mismatch between collectives on ranks. Rank 2 is running inconsistent "
               "collective: CollectiveFingerPrint(OpType=ALLGATHER, TensorShape=[8], TensorDtypes=Float, "
               "TensorDeviceTypes=cuda)")
    assert (e["op"], e["rank"], e.get("seq"), e.get("peer")) == ("ALLGATHER", 2, None, None)


def test_monitored_barrier_names_failing_ranks():
    text = "\n".join([  # detail_monitored_barrier_tee3.log, after the pipeline stripped [default0]:[rank0]:
        "[E1122 02:47:18.374266894 ProcessGroupGloo.cpp:2901] [Rank 0]: Rank 1 failed to pass monitoredBarrier in "
        "10000 ms",
        "[E1122 02:47:18.374325661 ProcessGroupGloo.cpp:67] [Rank 0]: Ranks 1 failed to pass monitoredBarrier in "
        "10000 ms",
        # synthetic: built from "[Rank " << rank << "]: Ranks " << joined_list << " failed to pass monitoredBarrier in "
        #   << ms << " ms", torch 2.13 (list form)
        "RuntimeError: [Rank 0]: Ranks 1, 3 failed to pass monitoredBarrier in 10000 ms",
    ])
    a, b, c = run(text)
    assert a["kind"] == b["kind"] == "torch.monitored_barrier"
    assert (a["peer"], a["timeout_ms"], a["rank"]) == ("rank 1", 10000, 0)
    assert c["peer"] == "ranks 1, 3"


def test_ddp_reducer_error_folds_parameter_lines():
    text = "\n".join([  # ddp_unused_params_debug_info.log
        "iter 1: RuntimeError: Expected to have finished reduction in the prior iteration before starting a new one. "
        "This error indicates that your module has parameters that were not used in producing loss.",
        "making sure all `forward` function outputs participate in calculating loss. ",
        "If you already have done the above, then the distributed data parallel module wasn't able to locate the "
        "output tensors in the return value of your module's `forward` function.",
        "Parameters which did not receive grad for rank 0: b.bias, b.weight",
        "Parameter indices which did not receive grad for rank 0: 2 3",
    ])
    events = run(text)
    assert [e["kind"] for e in events] == ["torch.ddp_error", "torch.ddp_error"]
    main, indices = events
    assert (main["rank"], main["detail"], main["exc_type"]) == (0, "b.bias, b.weight", "RuntimeError")
    assert (indices["rank"], indices["detail"]) == (0, "2 3")


# --- PREFILTER ----------------------------------------------------------------------------------

# real healthy lines: https://github.com/NVIDIA/nccl/issues/1664, https://github.com/pytorch/pytorch/issues/105287,
# https://github.com/NVIDIA/nccl-tests/issues/252, samples/torch2.13_cpu_logs (launcher banner, C++ frames)
HEALTHY = [
    "worker-node1:2304:2340 [5] NCCL INFO threadThresholds 8/8/64 | 128/8/64 | 512 | 512",
    "worker-node1:2304:2340 [5] NCCL INFO 16 coll channels, 16 nvlcls channels, 16 p2p channels, 2 p2p channels per peer",
    "iv-ycjau2qiy0f80nh6awou:180457:182538 [0] NCCL INFO Channel 00/16 :    0   1",
    "iv-ycjau2qiy0f80nh6awou:180457:182538 [0] NCCL INFO Using network IBext",
    "iv-ycjau2qiy0f80nh6awou:180458:182539 [1] NCCL INFO P2P Chunksize set to 524288",
    "kolyoz2:25146:25852 [0] NCCL INFO [Service thread] Connection closed by localRank 0",
    "W1122 02:47:39.296000 21400 torch/distributed/run.py:874] *****************************************",
    "frame #3: c10d::ProcessGroupNCCL::ncclCommWatchdog() + 0x10f (0x7fb2716a9a0f in /usr/local/lib/python3.10/"
    "dist-packages/torch/lib/libtorch_cuda.so)",
    "frame #2: c10::DistNetworkError::DistNetworkError(c10::SourceLocation, std::__cxx11::basic_string<char, "
    "std::char_traits<char>, std::allocator<char> >) + 0x72 (0x7eff7517b022 in /opt/venv/lib/libc10.so)",
]


def test_prefilter_compiles_in_rust_and_is_selective():
    lines = [HEALTHY[i % len(HEALTHY)] for i in range(2000)]
    kept = pl.Series(lines).str.contains(torch.PREFILTER).sum()
    assert kept / len(lines) < 0.01
    assert kept == 0


def test_prefilter_keeps_every_parsed_line():
    for text in (OPTYPE, SHAPE):
        assert pl.Series([text]).str.contains(torch.PREFILTER).all()


_FRAGMENTS = st.sampled_from([
    "[Rank 1] ", "[PG ID 0 PG GUID 0(default_pg) Rank 0] ", "Watchdog caught collective operation timeout: ",
    "WorkNCCL(SeqNum=", "99999999999999999999999", ", OpType=ALLREDUCE", ", Timeout(ms)=", ") ran for ",
    " milliseconds before timing out.", "last enqueued NCCL work: ", ", last completed NCCL work: -1",
    "wait timeout after 5ms, keys: ", "//cpu//0/", "is setting up NCCL communicator and retrieving ncclUniqueId from [",
    "Detected mismatch between collectives on ranks. Rank ", "CollectiveFingerPrint(", "Ranks ", " failed to pass "
    "monitoredBarrier in ", "NCCL error in: ", ", NCCL version ", "Connection closed by peer [", "]:", "[E1122 ",
    "Parameters which did not receive grad for rank ", "Timed out after ", " seconds waiting for clients. ", "1/2",
    "Exception raised from ", "frame #0: ", "(", ")", "\t", " ", "0", "[rank3]",
])


@settings(max_examples=300, deadline=None)
@given(st.one_of(st.text(max_size=300), st.lists(_FRAGMENTS, max_size=25).map("".join)), st.text(max_size=80))
def test_parse_never_raises_on_arbitrary_text(first, second):
    lines = [Line(file="x.log", line=1, raw=first, message=first, row=0),
             Line(file="x.log", line=2, raw=second, message=second, row=1)]
    ctx = FileContext(path="x.log", year=2026, _following=lambda ln, n: lines[ln.row + 1: ln.row + 1 + n])
    for event in torch.parse(lines, ctx):
        assert event["kind"].startswith("torch.")


# https://github.com/AdvancedPhotonSource/pty-chi/pull/47: DETAIL at INFO level, each rank's fingerprint as it starts
RUNNING = ("[rank2]:[I1017 19:34:58.923985894 ProcessGroupWrapper.cpp:587] [Rank 2] Running collective: "
           "CollectiveFingerPrint(SequenceNumber=38, OpType=ALLREDUCE, TensorShape=[77, 1], TensorDtypes=Float, "
           "TensorDeviceTypes=TensorOptions(dtype=float (default), device=cuda, layout=Strided (default), "
           "requires_grad=false (default), pinned_memory=false (default), memory_format=(nullopt)))")


def test_running_fingerprint_is_an_event_with_op_shape_and_dtype():
    from nccllens.extract import events_from_text

    rows = events_from_text(RUNNING + "\n").filter(pl.col("kind") == "torch.fingerprint_running").to_dicts()
    assert [(r["rank"], r["seq"], r["op"], r["value"]) for r in rows] == [(2, 38, "ALLREDUCE", "ALLREDUCE [77, 1] Float")]


def test_the_rank_whose_running_fingerprint_differs_is_the_culprit():
    from pathlib import Path

    import nccllens

    # the same thread's lines of ranks 1, 2 and 3 at SequenceNumber 38: rank 2 alone has shape [77, 1]
    case = Path(__file__).resolve().parents[2] / "fixtures/public/ptychi_allreduce_uneven_buffer_rank2_shape77_vs_100"
    report = nccllens.analyze(str(case))
    assert report.verdict.category == "rank_divergence"
    top = next(f for f in report.findings if f.id == report.verdict.finding)
    assert list(top.ranks) == [2] and "ALLREDUCE [77, 1] Float" in top.title
