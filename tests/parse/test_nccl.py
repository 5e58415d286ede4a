"""nccl family: prefixes of every generation, Init lines, network facts, WARN fields, backtraces.

Lines are real (fixtures/public/*, whose SOURCE.md cites the public thread, or the issue URL cited
next to them) unless marked ``# synthetic``.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import polars as pl

from nccllens.parse import nccl
from nccllens.parse.base import FileContext, Line

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "public"


def fixture_lines(relpath: str) -> list[str]:
    return (FIXTURES / relpath).read_text(encoding="utf-8").split("\n")


def run(texts: list[str], rank: int | None = None) -> list[dict]:
    """Parse ``texts`` as one file like the pipeline does; checks PREFILTER keeps every parsed line."""
    lines = [Line(file="x.log", line=i + 1, raw=s, message=s, rank=rank, row=i) for i, s in enumerate(texts)]
    keep = pl.Series([ln.message for ln in lines], dtype=pl.String).str.contains(nccl.PREFILTER).to_list()
    ctx = FileContext(path="x.log", year=2026)
    kept_numbers = {ln.line for ln, k in zip(lines, keep, strict=True) if k}
    for e in nccl.parse(lines, ctx):
        assert e["line"] in kept_numbers, f"PREFILTER drops a line the parser reads: {e['raw']!r}"
    events = list(nccl.parse([ln for ln in lines if ln.line in kept_numbers], ctx))
    for e in events:
        assert e["family"] == "nccl" and e["kind"].startswith("nccl."), e
    return events


def one(text: str, rank: int | None = None) -> dict:
    events = run([text], rank=rank)
    assert len(events) == 1, events
    return events[0]


# --- Init START / COMPLETE, every generation ------------------------------------------------------

def test_init_complete_2_15_and_older_no_comm_id():
    # https://github.com/NVIDIA/nccl/issues/629
    e = one("A03-R28-I49-3-9000018:193027:193119 [7] NCCL INFO comm 0x7fdf08000d00 rank 15 nranks 16 cudaDev 7 "
            "busId e7000 - Init COMPLETE")
    assert (e["kind"], e["rank"], e["nranks"], e["key"]) == ("nccl.init_complete", 15, 16, "e7000")
    assert (e["host"], e["pid"]) == ("A03-R28-I49-3-9000018", 193027)
    assert "comm_id" not in e


def test_init_complete_2_16_comm_id_without_nvml_dev():
    # synthetic: built from "comm %p rank %d nranks %d cudaDev %d busId %lx commId 0x%llx - Init COMPLETE", 2.16
    e = one("gpu-a:4242:4300 [1] NCCL INFO comm 0x55d0c1e0a2b0 rank 3 nranks 4 cudaDev 1 busId 2b000 "
            "commId 0x6d3f2c1a9b8e7f00 - Init COMPLETE")
    assert (e["kind"], e["rank"], e["comm_id"]) == ("nccl.init_complete", 3, "0x6d3f2c1a9b8e7f00")


def test_init_start_2_18_and_complete_with_nvml_dev():
    # https://github.com/NVIDIA/nccl/issues/1038 (NCCL 2.18.3)
    e = one("host-2:38610:38610 [0] NCCL INFO comm 0x1277bf60 rank 0 nranks 1 cudaDev 0 nvmlDev 0 busId 65000 "
            "commId 0xbd10cc2bcb56e132 - Init START")
    assert (e["kind"], e["rank"], e["nranks"], e["comm_id"]) == ("nccl.init_start", 0, 1, "0xbd10cc2bcb56e132")
    done = [e for e in run(fixture_lines("nccl_init_lines/nccl2.18.5_two_nodes_roce_init_complete.log"))
            if e["kind"] == "nccl.init_complete"]
    assert [(e["host"], e["rank"], e["comm_id"]) for e in done] == [("node2", 0, "0xbe1ea4dcf86be262")]


def test_init_start_2_21_api_name_prefix_all_ranks_one_comm_id():
    events = run(fixture_lines("nccl_init_lines/nccl2.21.5_ncclCommInitRank_init_start_two_nodes.log"))
    starts = [e for e in events if e["kind"] == "nccl.init_start"]
    assert len(starts) >= 6
    assert {e["comm_id"] for e in starts} == {"0x996ee6f117cb8e1e"}
    assert {e["value"] for e in starts} == {"ncclCommInitRank"}
    assert {(e["host"], e["rank"]) for e in starts} >= {("kolyoz2", 4), ("kolyoz1", 0)}
    assert all(e["nranks"] == 8 for e in starts)


def test_init_start_split_form_keeps_parent_color_key():
    # https://github.com/NVIDIA/nccl/issues/1605
    e = one("myhost:2261199:2261301 [0] NCCL INFO ncclCommSplit comm 0x595122703ca0 rank 0 nranks 2 cudaDev 0 "
            "nvmlDev 0 busId 1a000 parent 0x5951213c0f90 color 1684518034 key 0 commId 0x5a16c3838ce6f1f8 - Init START")
    assert (e["kind"], e["value"], e["nranks"]) == ("nccl.init_start", "ncclCommSplit", 2)
    assert "parent 0x5951213c0f90 color 1684518034 key 0" in e["detail"]
    # synthetic: built from "... busId %lx parent %p splitCount %d color %d key %d- Init START" (no commId), 2.19
    e = one("gpu-a:4242:4300 [1] NCCL INFO ncclCommSplit comm 0x55d0c1e0a2b0 rank 1 nranks 2 cudaDev 1 nvmlDev 1 "
            "busId 2b000 parent 0x55d0c1d00000 splitCount 1 color 7 key 1- Init START")
    assert (e["kind"], e["rank"], "comm_id" in e) == ("nccl.init_start", 1, False)


def test_init_start_2_29_rank_tag():
    # synthetic: built from "[Rank %d] %s comm %p rank %d nranks %d cudaDev %d nvmlDev %d busId %lx commId 0x%llx
    # - Init START", 2.29.7
    e = one("[2026-05-02 10:11:12] gpu-b:900:950 [2] NCCL INFO [Rank 6] ncclCommInitRankConfig comm 0x5600aa rank 6 "
            "nranks 16 cudaDev 2 nvmlDev 2 busId 3a000 commId 0x1122334455667788 - Init START")
    assert (e["kind"], e["rank"], e["nranks"], e["ts"]) == ("nccl.init_start", 6, 16, datetime(2026, 5, 2, 10, 11, 12))
    assert e["ts_kind"] == "absolute"


def test_launcher_rank_wins_over_comm_rank_and_dev_is_never_rank():
    line = ("hostname-test:984:1257 [4] NCCL INFO comm 0x557fe785f7a0 rank 36 nranks 64 cudaDev 4 nvmlDev 4 "
            "busId 9b000 commId 0x5ae77eb5ea4ec1ee - Init COMPLETE")  # https://github.com/NVIDIA/nccl/issues/1814
    assert one(line, rank=12)["rank"] == 12
    assert one(line)["rank"] == 36
    # a WARN names no rank: '[3]' is the CUDA device
    assert "rank" not in one("ubuntu:9621:9688 [3] misc/shmutils.cc:112 NCCL WARN Error while creating shared memory "
                             "segment /dev/shm/nccl-KWfVyt (size 5967872)")  # nccl-tests#166 (fixtures)


def test_teardown_abort_complete():
    events = run(fixture_lines("ib_errors/nccl2.1x_error4_two_vms_nccl_tests.log"))
    (e,) = [e for e in events if e["kind"] == "nccl.teardown"]
    assert (e["host"], e["rank"], e["nranks"], e["value"]) == ("vm1", 1, 2, "Abort COMPLETE")


# --- version, bootstrap, network ------------------------------------------------------------------

def test_version_bare_banner_info_form_and_timestamped():
    assert one("NCCL version 2.7.3+cuda10.2")["version"] == "nccl 2.7.3+cuda10.2"  # pytorch#40622 (fixtures)
    e = one("host-2:38610:38610 [0] NCCL INFO NCCL version 2.18.3+cuda12.2")  # NVIDIA/nccl#1038
    assert (e["kind"], e["version"], e["host"]) == ("nccl.version", "nccl 2.18.3+cuda12.2", "host-2")
    # synthetic: built from "[%F %T] " + "NCCL version %s", 2.26 with VERSION timestamps on
    e = one("[2026-01-05 07:08:09] NCCL version 2.26.6+cuda12.8")
    assert (e["version"], e["ts"]) == ("nccl 2.26.6+cuda12.8", datetime(2026, 1, 5, 7, 8, 9))


def test_bootstrap_every_form():
    e = one("node2:14159:14159 [0] NCCL INFO Bootstrap : Using enp24s0np0:10.10.10.1<0>")  # nccl#1052 (fixtures)
    assert (e["kind"], e["iface"], e["peer"]) == ("nccl.bootstrap", "enp24s0np0", "10.10.10.1<0>")
    e = one("26a46eb2b1d3:111329:111329 [0] NCCL INFO Bootstrap : Using [0]eth0:172.17.0.2<0>")  # NVIDIA/nccl#367
    assert (e["iface"], e["peer"]) == ("eth0", "172.17.0.2<0>")
    e = one("gh1:180172:180172 [0] NCCL INFO Bootstrap : Using ib0:fe80::a288:c203:d2:aaf2%ib0<0>")  # nccl#1291
    assert (e["iface"], e["peer"]) == ("ib0", "fe80::a288:c203:d2:aaf2%ib0<0>")
    # synthetic: built from "Bootstrap: Using%s" with " eth0:10.0.0.1<0>", 2.24
    e = one("gpu-c:77:77 [0] NCCL INFO Bootstrap: Using eth0:10.0.0.1<0>")
    assert (e["kind"], e["iface"], e["peer"]) == ("nccl.bootstrap", "eth0", "10.0.0.1<0>")


def test_ib_devices_socket_fallback_and_chosen_network():
    events = run(fixture_lines("nccl_init_lines/ib_fallback_no_device_found_socket.log"))
    kinds = [e["kind"] for e in events]
    assert "nccl.net_ib_none" in kinds
    (sock,) = [e for e in events if e["kind"] == "nccl.net_socket"][:1]
    assert (sock["iface"], sock["value"]) == ("bond0", "bond0:10.25.193.57<0>")
    ib = one("4c217144f0b1:113168:113179 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/IB [2]mlx5_2:1/IB "
             "[3]mlx5_3:1/IB [RO]; OOB eth0:10.0.1.9<0>")  # NVIDIA/nccl#983
    assert (ib["kind"], ib["value"], ib["iface"]) == ("nccl.net_ib", "mlx5_0:1/IB mlx5_1:1/IB mlx5_2:1/IB mlx5_3:1/IB",
                                                      "eth0")
    # ≤2.11 wording ' ; OOB' (ROCm/rccl#419)
    assert one("e05r3n09:929:929 [2] NCCL INFO NET/IB : Using [0]mlx5_3:1/IB [1]mlx5_2:1/IB ; OOB "
               "ib0:11.5.5.50<0>")["iface"] == "ib0"
    nets = [e["value"] for e in run(fixture_lines("nccl_init_lines/ib_fallback_socket_with_net_warn_no_route.log"))
            if e["kind"] == "nccl.using_network"]
    assert nets == ["Socket"]


def test_env_both_wordings_and_connected():
    e = one("node2:14159:14172 [0] NCCL INFO NCCL_IB_GID_INDEX set by environment to 3.")  # nccl#1052
    assert (e["kind"], e["key"], e["value"]) == ("nccl.env", "NCCL_IB_GID_INDEX", "3")
    e = one("node2:14159:14168 [0] NCCL INFO NCCL_IB_HCA set to mlx5_4")  # nccl#1052
    assert (e["key"], e["value"]) == ("NCCL_IB_HCA", "mlx5_4")
    assert one("node4:565139:565148 [0] NCCL INFO Connected all rings")["value"] == "all rings"
    assert one("hostname-test:983:1261 [3] NCCL INFO Connected NVLS tree")["kind"] == "nccl.connected"  # nccl#1814


# --- WARN, backtraces, TRACE, CALL, RAS --------------------------------------------------------------

def test_warn_2_26_timestamp_errno_and_shm_class():
    events = run(fixture_lines("shm_exhausted_ci_runner_pod/runner-workflow-pod.log"))
    w = next(e for e in events if e["kind"] == "nccl.warn")
    assert (w["key"], w["value"], w["error_code"], w["level"]) == ("misc/shmutils.cc:88", "shm", 28, "error")
    assert (w["ts"], w["ts_kind"]) == (datetime(2026, 4, 22, 21, 34, 20), "absolute")
    assert w["message"].startswith("Error: failed to extend /dev/shm/")


def test_ib_completion_errors_every_wording_name_the_peer():
    old = run(fixture_lines("ib_errors/nccl2.1x_error4_two_vms_nccl_tests.log"))[0]
    assert (old["kind"], old["peer"], old["detail"], old["host"]) == ("nccl.warn", "192.168.0.12<60054>", "status 4",
                                                                      "vm2")
    new = run(fixture_lines("ib_errors/nccl_status12_then_status5_hostname-test.log"))[0]
    assert (new["peer"], new["detail"], new["value"]) == ("172.36.143.59<44206>", "status 12", "ib_completion")
    ipv6 = run(fixture_lines("ib_completion_error4_acs_gdr/H100-1.log"))[0]
    assert ipv6["peer"] == "fe80::966d:ae03:8b:df50%ib0<44413>"
    # synthetic: built from "NET/IB: Got completion from peer %s with status=%d opcode=%d len=%u vendor err %u (%s)%s%s%s%s
    # hca %s", 2.22
    e = one("[2026-02-01 03:04:05] gpu-d:10:20 [0] transport/net_ib.cc:1700 NCCL WARN NET/IB: Got completion from "
            "peer 10.1.2.3<50000> with status=12 opcode=0 len=0 vendor err 129 (Recv) hca mlx5_3")
    assert (e["peer"], e["iface"], e["detail"]) == ("10.1.2.3<50000>", "mlx5_3", "status 12")


def test_socket_failures_name_the_peer():
    events = run(fixture_lines("nccl_init_lines/sglang_socketPollConnect_no_route_to_host.log"))
    w = next(e for e in events if e["kind"] == "nccl.warn")
    assert (w["peer"], w["error_code"], w["value"]) == ("10.0.0.4<56849>", 113, "connect_failed")
    # synthetic: built from "socketProgress: Connection closed by remote peer %s", 2.16
    e = one("gpu-e:300:310 [5] misc/socket.cc:47 NCCL WARN socketProgress: Connection closed by remote peer "
            "gpu-f<51234>")
    assert (e["peer"], e["value"], e["level"]) == ("gpu-f<51234>", "connection_closed", "error")


def test_warn_2_30_function_and_backtrace_variants():
    # synthetic: built from "[TS] host:pid:tid [dev] FILE:LINE (FUNC) NCCL WARN <msg>" and
    # "Net : Call to recv from %s failed : %s" bodies, 2.30.7
    e = one("[2026-06-01 00:00:01.250] gpu-g:5:6 [0] misc/socket.cc:860 (ncclOsSocketProgressOpt) NCCL WARN "
            "ncclOsSocketProgressOpt: Call to recv from 10.9.8.7<4000> failed : Connection reset by peer")
    assert (e["key"], e["detail"], e["peer"]) == ("misc/socket.cc:860", "ncclOsSocketProgressOpt", "10.9.8.7<4000>")
    assert e["ts"] == datetime(2026, 6, 1, 0, 0, 1, 250000)
    bt = [e for e in run(fixture_lines("shm_exhausted/nccl_tests_three_ranks_one_process.log"))
          if e["kind"] == "nccl.backtrace"]
    assert (bt[0]["key"], bt[0]["error_code"]) == ("transport/shm.cc:114", 2)
    assert {e.get("value") for e in bt} == {None, "Async thread"}
    threads = {e.get("value") for f in ("ib_errors/nccl2.1x_error4_two_vms_nccl_tests.log",
                                        "ib_errors/nccl2.20_plugin_status12_kp-ddp-worker-0.log")
               for e in run(fixture_lines(f)) if e["kind"] == "nccl.backtrace"}
    assert {"Proxy Thread", "Progress Thread"} <= threads
    # synthetic: built from "%s:%d -> %d (%s)", 2.18, and "%s:%d (%s) -> %d", 2.30.7
    e = one("gpu-h:1:1 [0] NCCL INFO misc/socket.cc:564 -> 2 (Connection refused)")
    assert (e["error_code"], e["detail"]) == (2, "Connection refused")
    assert one("gpu-h:1:1 [0] NCCL INFO init.cc:1800 (ncclCommInitRankDev) -> 6")["key"] == "init.cc:1800"


def test_trace_elapsed_call_and_ras():
    # synthetic: built from "%s:%d:%d [%d] %f %s:%d NCCL TRACE <msg>", TRACE build
    e = one("gpu-i:42:43 [0] 5237.162988 ncclCommInitRankFunc:1630 NCCL TRACE comm 0x5555 rank 0 nranks 2 "
            "cudaDev 0 nvmlDev 0 busId 1000 commId 0xabc - Init COMPLETE")
    assert (e["kind"], e["level"], e["ts_kind"]) == ("nccl.init_complete", "trace", "elapsed")
    assert abs(e["ts_rel"] - 5.237162988) < 1e-9
    # synthetic: built from "%s:%d:%d NCCL CALL ncclAllReduce(...)", 2.13
    e = one("gpu-i:42:42 NCCL CALL ncclAllReduce(0x7f0000000000, 0x7f0000000000, 1024, 7, 0, 0x5555, 0x6666)")
    assert (e["kind"], e["op"], e["pid"]) == ("nccl.call", "ncclAllReduce", 42)
    # synthetic: built from "RAS declaring peer %s as DEAD; rasDeadPeersHash 0x%lx", 2.24
    e = one("gpu-j:8:9 [0] NCCL INFO RAS declaring peer 10.0.0.3<28028> as DEAD; rasDeadPeersHash 0x1f2e")
    assert (e["kind"], e["peer"]) == ("nccl.ras", "10.0.0.3<28028>")


def test_torch_wrapped_nccl_error_is_left_to_the_torch_family():
    lines = fixture_lines("shm_exhausted/torch_last_error_nccl2.21.5.log")
    assert run(lines) == []
    assert not pl.Series(lines, dtype=pl.String).str.contains(nccl.PREFILTER).any()


def test_ib_async_event_names_the_device_port_and_init_timings():
    # synthetic: built from "NET/IB : %s:%d Got async event : %s", 2.20
    e = one("gpu-k:3:4 [0] transport/net_ib.cc:120 NCCL WARN NET/IB : mlx5_2:1 Got async event : port error")
    assert (e["value"], e["iface"], e["level"]) == ("ib_async_event", "mlx5_2:1", "error")
    # quoted from https://github.com/NVIDIA/nccl/issues/1534 (2.23+ wording)
    e = one("tpgds-aihub0007:177792:177792 [5] NCCL INFO Init timings - ncclCommInitRank: rank 5 nranks 16 total 1.58 "
            "(kernels 0.26, alloc 0.97, bootstrap 0.07, allgathers 0.01, topo 0.06, graphs 0.00, connections 0.21, "
            "rest 0.00)")
    assert (e["kind"], e["key"]) == ("nccl.info", "init_timings")
    assert "bootstrap 0.07" in e["value"]


def test_duplicate_gpu_names_both_ranks_and_they_are_the_culprits_on_that_host():
    # real: https://github.com/huggingface/accelerate/issues/2246 (two processes per GPU on qgpu2018)
    from pathlib import Path

    import nccllens
    from nccllens.parse.nccl_warn import warn_fields

    body = "Duplicate GPU detected : rank 6 and rank 4 both on CUDA device 31000"
    assert warn_fields(body)["peer"] == "ranks 6, 4"
    case = Path(__file__).resolve().parents[2] / "fixtures" / "public" / "accelerate_slurm_two_procs_per_gpu_duplicate_gpu_qgpu2018"
    top = nccllens.analyze(str(case)).findings[0]
    assert (top.rule, top.ranks, top.hosts) == ("NL-NCCL-004", [4, 5, 6, 7], ["qgpu2018"])


def test_nccl_2_2_lines_without_the_nccl_word_are_nccl_lines():
    # source: https://github.com/horovod/horovod/issues/288 (NCCL 2.2.12)
    from nccllens.extract import events_from_text

    events = events_from_text(
        "C4140-V100-1:24:201 [0] misc/ibvwrap.cu:61 WARN Failed to open libibverbs.so[.1]\n"
        "C4140-V100-1:24:201 [0] INFO NET : Using interface ib0:192.168.11.1<0>\n"
        "2019-01-01 12:00:00 INFO Using interface eth0 for training\n")
    kinds = dict(zip(events["kind"].cast(str).to_list(), events["host"].cast(str).to_list(), strict=True))
    assert kinds.get("nccl.warn") == "C4140-V100-1"
    assert "nccl.net_socket" in kinds
    socket = events.filter(events["kind"].cast(str) == "nccl.net_socket").row(0, named=True)
    assert socket["iface"] == "ib0"
    assert events.filter(events["family"].cast(str) == "nccl").height == 2  # a plain "INFO" log line is not NCCL's


def test_a_line_whose_whole_prefix_was_stripped_is_still_an_nccl_event():
    # https://github.com/NVIDIA/nccl/issues/451: the reporter pasted NCCL lines without host:pid:tid [dev]
    e = one("NCCL INFO NET/Socket : Using [0]bond0:200.1.93.2<0>")
    assert (e["kind"], e["iface"], e["peer"], e.get("host")) == ("nccl.net_socket", "bond0", "200.1.93.2<0>", None)
    w = one("misc/ibvwrap.cc:212 NCCL WARN Call to ibv_open_device failed")
    assert (w["kind"], w["key"]) == ("nccl.warn", "misc/ibvwrap.cc:212")


def test_a_socket_line_with_a_redacted_address_keeps_its_interface():
    # https://github.com/sgl-project/sglang/pull/1427: the author replaced the address with "<ip>"
    e = one("NCCL INFO NET/Socket : Using [0]ib0.<ip>")
    assert (e["kind"], e["iface"], e.get("peer")) == ("nccl.net_socket", "ib0", None)


def test_a_connect_retry_of_nccl_2_12_to_2_18_is_read_with_its_try_count():
    # https://github.com/hiyouga/LlamaFactory/issues/8045: "%s: connect returned %s, retrying (%d/%ld) after sleep
    # for %u msec" names no address (later versions say "connect to <addr> returned")
    e = one("zgiot:1183664:1184669 [0] NCCL INFO socketPollConnect: connect returned No route to host, retrying "
            "(34/34) after sleep for 3400 msec")
    assert e["kind"] == "nccl.info" and e["value"] == "retrying" and e["detail"] == "34/34"
    assert e["host"] == "zgiot"
