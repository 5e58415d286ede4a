"""p2ptest family: the CUDA sample p2pBandwidthLatencyTest's latency matrix, on real output."""

from __future__ import annotations

from pathlib import Path

from nccllens.extract import events_from_text

PUBLIC = Path(__file__).resolve().parents[2] / "fixtures" / "public"


def _kinds(text: str) -> list[tuple]:
    events = events_from_text(text)
    return events.filter(events["kind"].cast(str) == "p2ptest.slow_p2p").select("value", "nranks").rows()


def test_peer_writes_a_hundred_times_slower_than_local_ones_are_broken_p2p():
    # https://github.com/huggingface/transformers/issues/20438: 49,206 us between GPUs, 2-5 us on one GPU
    text = (PUBLIC / "hf_deepspeed_hang_p2p_write_latency_49ms_broken_p2p" / "p2pBandwidthLatencyTest.log").read_text()
    assert _kinds(text) == [("49207", 8)]


def test_a_header_cut_before_its_rows_or_a_bandwidth_matrix_says_nothing():
    # https://github.com/NVIDIA/nccl/issues/257: connectivity and a P2P=Disabled bandwidth matrix only
    text = (PUBLIC / "nccl248_1080ti_allreduce_hang_iommu" / "p2pBandwidthLatencyTest.log").read_text()
    assert _kinds(text) == []
    text = (PUBLIC / "hf_deepspeed_hang_p2p_write_latency_49ms_broken_p2p" / "p2pBandwidthLatencyTest.log").read_text()
    assert _kinds(text.splitlines()[0] + "\n") == []


def _stopped(text: str) -> list[str]:
    events = events_from_text(text)
    return events.filter(events["kind"].cast(str) == "p2ptest.stopped")["detail"].to_list()


def test_output_that_ends_inside_a_matrix_is_a_test_that_stopped():
    # https://github.com/pytorch/pytorch/issues/1637: the last line is a bandwidth matrix's title
    text = (PUBLIC / "pytorch_4x1080ti_threadripper_p2pbandwidth_test_hang_iommu" / "p2pBandwidthLatencyTest.log").read_text()
    assert _stopped(text) == ["Unidirectional P2P=Disabled Bandwidth Matrix (GB/s): no row, then the output ends"]
    # https://github.com/NVIDIA/nccl/issues/257: two rows of four, then nothing
    text = (PUBLIC / "nccl248_1080ti_allreduce_hang_iommu" / "p2pBandwidthLatencyTest.log").read_text()
    assert _stopped(text) == ["Unidirectional P2P=Disabled Bandwidth Matrix (GB/s): 2 of 4 rows, then the output ends"]


def test_blank_lines_at_the_end_of_a_paste_end_nothing():
    # the same paste as quoted, wrapped or saved with CRLF leaves a blank last line behind: still nothing after it
    text = (PUBLIC / "nccl248_1080ti_allreduce_hang_iommu" / "p2pBandwidthLatencyTest.log").read_text()
    want = ["Unidirectional P2P=Disabled Bandwidth Matrix (GB/s): 2 of 4 rows, then the output ends"]
    assert _stopped(text.rstrip("\n") + "\n\n\n") == want
    assert _stopped(text.rstrip("\n") + "\n\nDone\n") == []  # a line after the blank one: the test went on


def test_a_whole_matrix_did_not_stop():
    # https://github.com/huggingface/transformers/issues/20438: eight rows for eight GPUs end the paste
    text = (PUBLIC / "hf_deepspeed_hang_p2p_write_latency_49ms_broken_p2p" / "p2pBandwidthLatencyTest.log").read_text()
    assert _stopped(text) == []
