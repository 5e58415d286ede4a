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
