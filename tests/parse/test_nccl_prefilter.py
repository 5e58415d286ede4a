"""nccl family: PREFILTER selectivity on a healthy log, and parse robustness (hypothesis).

Real lines carry their source; ``# synthetic`` marks lines built from a format string.
"""

from __future__ import annotations

import polars as pl
from hypothesis import given, settings
from hypothesis import strategies as st

from nccllens.parse import nccl
from nccllens.parse.base import FileContext, Line

_NET_SEND = ("ip-172-31-12-129:1759:1773 [0] NCCL INFO Channel 00 : 4[1b0] -> 2[1d0] [send] via "
             "NET/Socket/0")  # horovod/horovod#3658 (its Open MPI prefix removed, as the pipeline does)

# One healthy communicator init, as ranks print it (real lines; sources per line).
INIT_BLOCK = [
    "kolyoz1:27255:27255 [0] NCCL INFO Bootstrap : Using ib0:10.0.35.1<0>",  # nccl-tests#252
    "kolyoz1:27255:27255 [0] NCCL INFO cudaDriverVersion 12060",  # nccl-tests#252
    "NCCL version 2.21.5+cuda12.4",  # nccl-tests#252
    "gcn6:1080060:1080060 [0] NCCL INFO NET/Plugin : No plugin found (libnccl-net.so), using internal implementation",
    "gcn6:1080060:1080060 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/IB [2]mlx5_2:1/RoCE [RO]; "
    "OOB eno1np0:172.18.62.6<0>",  # NVIDIA/nccl#1066
    "gcn6:1080060:1080060 [0] NCCL INFO Using network IB",  # NVIDIA/nccl#1066
    "hostname-test:984:984 [4] NCCL INFO NCCL_SOCKET_IFNAME set by environment to bond0",  # NVIDIA/nccl#1814
    "kolyoz2:25146:25827 [0] NCCL INFO ncclCommInitRank comm 0x559d5aa8ca00 rank 4 nranks 8 cudaDev 0 nvmlDev 0 "
    "busId 42000 commId 0x996ee6f117cb8e1e - Init START",  # nccl-tests#252
    "<cluster_name>:923:1147 [4] NCCL INFO Setting affinity for GPU 4 to ffff0000,00000000,00000000,00000000,"
    "ffff0000,00000000,00000000,00000000",  # NVIDIA/nccl#952
    "<cluster_name>:923:1147 [4] NCCL INFO NVLS multicast support is not available on dev 4",  # NVIDIA/nccl#952
    "hostname-test:980:1265 [0] NCCL INFO comm 0x55986b8b8560 rank 32 nRanks 64 nNodes 8 localRanks 8 localRank 0 "
    "MNNVL 0",  # NVIDIA/nccl#1814
    "myhost:2261199:2261301 [0] NCCL INFO Channel 00/04 :    0   1",  # NVIDIA/nccl#1605
    "myhost:2261199:2261301 [0] NCCL INFO Channel 01/04 :    0   1",
    "myhost:2261199:2261301 [0] NCCL INFO Channel 02/04 :    0   1",
    "myhost:2261199:2261301 [0] NCCL INFO Channel 03/04 :    0   1",
    "myhost:2261199:2261301 [0] NCCL INFO Trees [0] 1/-1/-1->0->-1 [1] 1/-1/-1->0->-1 [2] -1/-1/-1->0->1 "
    "[3] -1/-1/-1->0->1",
    "myhost:2261199:2261301 [0] NCCL INFO P2P Chunksize set to 131072",
    "myhost:2261199:2261301 [0] NCCL INFO Channel 00/0 : 1[0] -> 0[0] [receive] via NET/IBext_v8/0/GDRDMA",
    "hostname-test:981:1267 [1] NCCL INFO Channel 09/0 : 33[1] -> 41[1] [send] via NET/IBext_v8/4",  # nccl#1814
    "hostname-test:987:1260 [7] NCCL INFO Channel 03/0 : 47[7] -> 39[7] [receive] via NET/IBext_v8/2",
    _NET_SEND,
    "kolyoz2:25148:25826 [3] NCCL INFO Channel 03/0 : 7[3] -> 5[1] via P2P/CUMEM",  # nccl-tests#252
    "kolyoz1:27224:27909 [2] NCCL INFO Channel 05/0 : 2[2] -> 0[0] via P2P/CUMEM",
    "myles-MC62-G40-00:6742:6769 [3] NCCL INFO Channel 00/0 : 3[3] -> 2[2] via P2P/direct pointer",  # tinygrad PR 22
    "[1,1]<stdout>:ip-172-31-0-63:2121:2136 [1] NCCL INFO NET/Socket: Using 2 threads and 8 sockets per thread",
    "myles-MC62-G40-00:6742:6778 [1] NCCL INFO [Proxy Progress] Device 1 CPU core 116",  # tinygrad PR 22
    "node4:565139:565148 [0] NCCL INFO Connected all rings",  # NVIDIA/nccl#1052
    "node4:565139:565148 [0] NCCL INFO Connected all trees",
    "node4:565139:565148 [0] NCCL INFO threadThresholds 8/8/64 | 16/8/64 | 512 | 512",
    "node4:565139:565148 [0] NCCL INFO 2 coll channels, 0 nvls channels, 2 p2p channels, 2 p2p channels per peer",
    "node2:14159:14172 [0] NCCL INFO New proxy send connection 4 from local rank 0, transport 2",
    "node2:14159:14168 [0] NCCL INFO Connection to proxy localRank 0 -> connection 0x7f7698000ec0",
    "hostname-test:984:1257 [4] NCCL INFO comm 0x557fe785f7a0 rank 36 nranks 64 cudaDev 4 nvmlDev 4 busId 9b000 "
    "commId 0x5ae77eb5ea4ec1ee - Init COMPLETE",  # NVIDIA/nccl#1814
    "tpgds-aihub0007:177792:177792 [5] NCCL INFO Init timings - ncclCommInitRank: rank 5 nranks 16 total 1.58 "
    "(kernels 0.26, alloc 0.97, bootstrap 0.07, allgathers 0.01, topo 0.06, graphs 0.00, connections 0.21, "
    "rest 0.00)",  # quoted from NVIDIA/nccl#1534
]

# Per-operation chatter that makes a long NCCL_DEBUG=INFO (INIT,COLL) log reach gigabytes
# (real lines quoted from https://github.com/NVIDIA/nccl/issues/1534).
PER_OP = [
    "tpgds-aihub0007:177794:177794 [7] NCCL INFO AllReduce: opCount 0 sendbuff 0x7fb201e00400 recvbuff "
    "0x7fb201e00400 count 1 datatype 7 op 0 root 0 comm 0x558f79e65f00 [nranks=16] stream 0x558f83fe3ca0",
    "tpgds-aihub0007:177794:177794 [7] NCCL INFO misc/utils.cc:233 memory stack hunk malloc(65536)",
    "tpgds-aihub0007:177787:177787 [0] NCCL INFO AllReduce: 4 Bytes -> Algo TREE proto LL channel{Lo..Hi}={0..0}",
]


def survivors(lines: list[str]) -> list[bool]:
    return pl.Series(lines, dtype=pl.String).str.contains(nccl.PREFILTER).to_list()


def test_healthy_log_keeps_well_under_one_percent():
    lines = INIT_BLOCK + PER_OP * ((2000 - len(INIT_BLOCK)) // len(PER_OP))
    kept = sum(survivors(lines))
    assert len(lines) >= 1900
    assert kept / len(lines) < 0.01, kept


def test_init_block_keeps_facts_and_drops_channel_chatter():
    kept = [line for line, k in zip(INIT_BLOCK, survivors(INIT_BLOCK), strict=True) if k]
    chatter = [line for line in kept if " Channel " in line]
    assert chatter == []  # transport lines and ring dumps are summarised per process (parse.dense) instead
    assert not any(k for line, k in zip(PER_OP, survivors(PER_OP), strict=True))
    assert not any("Trees [0]" in line or "P2P/CUMEM" in line or "threadThresholds" in line for line in kept)
    events = list(nccl.parse([Line(file="h.log", line=i + 1, raw=s, message=s) for i, s in enumerate(kept)],
                             FileContext(path="h.log", year=2026)))
    kinds = {e["kind"] for e in events}
    assert {"nccl.bootstrap", "nccl.version", "nccl.net_ib", "nccl.using_network", "nccl.env", "nccl.init_start",
            "nccl.connected", "nccl.init_complete"} <= kinds
    assert all(e["level"] in ("info", "trace") for e in events)  # a healthy log has no warnings


def test_channel_lines_are_summarised_not_parsed():
    from nccllens.parse.dense import classify

    frame = pl.DataFrame({"raw": INIT_BLOCK + PER_OP[:1]}).with_row_index("row").with_columns(pl.col("row").alias("line"))
    dense, _ = classify(frame)
    fams = dict(zip(dense["raw"], dense["fam"], strict=True))
    assert {line for line in INIT_BLOCK if " Channel " in line or "Trees [" in line} == {
        line for line, fam in fams.items() if fam in ("nccl.transport", "nccl.graph")}
    assert fams[_NET_SEND] == "nccl.transport"
    assert dict(zip(dense["raw"], dense["key"], strict=True))[_NET_SEND] == "NET/Socket/0"
    assert fams[PER_OP[0]] == "nccl.coll"


_FRAGMENTS = st.sampled_from(
    ["NCCL INFO ", "NCCL WARN ", "NCCL TRACE ", "NCCL CALL ", "NCCL version 2.21.5+cuda12.4", "host:1:2 ", "[0] ",
     "comm 0x1 rank ", "nranks ", "busId ", " - Init START", "-> ", "misc/socket.cc:564 ", "Bootstrap : Using ",
     "NET/IB : Using [0]", "Got completion from peer ", "<0>", "[Rank ", "] ", "(", ")", ":", "99999999999999999999",
     "commId 0x", "[2026-13-45 99:99:99] ", "Channel 00 : ", "\x00", "é", " "])


@settings(max_examples=300, deadline=None)
@given(st.one_of(st.text(max_size=200), st.lists(_FRAGMENTS, max_size=25).map("".join)))
def test_parse_never_raises_and_kinds_stay_in_family(text):
    lines = [Line(file="f.log", line=1, raw=text, message=text, row=0)]
    for e in nccl.parse(lines, FileContext(path="f.log", year=2026)):
        assert e["kind"].startswith("nccl.") and e["family"] == "nccl"
