"""torch family: TCPStore / c10d socket errors, store timeouts (missing rank), gloo transport errors.

Real lines come from shared/reference/samples/torch2.13_cpu_logs (torch 2.13.0+cpu), from
shared/reference/pytorch_c10d.md, or from the public issue cited next to them.
"""

from __future__ import annotations

import re

import polars as pl

from nccllens.parse import torch
from nccllens.parse.base import FileContext, Line

_RANK_PREFIX = re.compile(r"^\[rank(?P<rank>\d+)\]:")


def run(text: str, rank: int | None = None) -> list[dict]:
    """Parse ``text`` as one file; the ``[rankN]:`` prefix is stripped as the pipeline does."""
    lines = []
    for i, raw in enumerate(text.split("\n")):
        m = _RANK_PREFIX.match(raw)
        message, line_rank = (raw[m.end():], int(m["rank"])) if m else (raw, rank)
        lines.append(Line(file="x.log", line=i + 1, raw=raw, message=message, rank=line_rank, row=i))

    def following(line: Line, n: int) -> list[Line]:
        return lines[line.row + 1: line.row + 1 + n]

    keep = pl.Series([ln.message for ln in lines]).str.contains(torch.PREFILTER).to_list()
    survivors = [ln for ln, k in zip(lines, keep, strict=True) if k]
    events = list(torch.parse(survivors, FileContext(path="x.log", year=2026, _following=following)))
    assert all(e["kind"].startswith("torch.") for e in events)
    return events


FRAMES_CONNECT = "\n".join([  # tcpstore_client_server_errors.log, first block (frames 0-2 and 3 of the sample)
    "Exception raised from throwTimeoutError at /__w/pytorch/pytorch/torch/csrc/distributed/c10d/socket.cpp:1030 "
    "(most recent call first):",
    "frame #0: c10::Error::Error(c10::SourceLocation, std::__cxx11::basic_string<char, std::char_traits<char>, "
    "std::allocator<char> >) + 0x9d (0x7f5dcfb79b8d in /opt/venv/lib/python3.11/site-packages/torch/lib/libc10.so)",
    "frame #2: c10::DistNetworkError::DistNetworkError(c10::SourceLocation, std::__cxx11::basic_string<char, "
    "std::char_traits<char>, std::allocator<char> >) + 0x72 (0x7f5dcfb7b022 in /opt/venv/lib/python3.11/"
    "site-packages/torch/lib/libc10.so)",
    "frame #3: <unknown function> + 0x163b752 (0x7f5dbc63b752 in /opt/venv/lib/python3.11/site-packages/torch/lib/"
    "libtorch_cpu.so)",
    "<omitting python frames>",
    "",
])


def test_client_connect_timeout_retry_and_backtrace_folded():
    text = "\n".join([
        "[E1122 02:48:19.672565212 socket.cpp:1028] [c10d] The client socket has timed out after 3000ms while trying "
        "to connect to (127.0.0.1, 29991).",
        "[W1122 02:48:19.674475824 TCPStore.cpp:340] [c10d] TCP client failed to connect/validate to host "
        "127.0.0.1:29991 - retrying (try=0, timeout=3000ms, delay=3320ms): The client socket has timed out after "
        "3000ms while trying to connect to (127.0.0.1, 29991).",
        FRAMES_CONNECT,
    ])
    a, b = run(text)
    assert a["kind"] == "torch.store_error" and a["peer"] == "127.0.0.1:29991" and a["timeout_ms"] == 3000
    assert a["level"] == "error" and a["message"].startswith("[c10d] The client socket has timed out")
    assert b["kind"] == "torch.store_error" and b["value"] == "retrying" and b["level"] == "warning"
    assert b["detail"] == "raised from: throwTimeoutError (socket.cpp:1030)"  # noise frames dropped


def test_name_resolution_errno_and_bind_failures():
    text = "\n".join([
        "[W1122 02:48:31.630587492 socket.cpp:764] [c10d] The IPv6 network addresses of (no-such-host.invalid, 29991) "
        "cannot be retrieved (gai error: -2 - Name or service not known).",
        # pytorch_c10d.md §4, ≈1.11–2.3 per-attempt warning
        "[W socket.cpp:601] [c10d] The client socket has failed to connect to [localhost]:29500 (errno: 99 - Cannot "
        "assign requested address).",
        "[W1122 02:48:39.082428247 socket.cpp:525] [c10d] The server socket has failed to bind to [::]:29992 (errno: "
        "98 - Address already in use).",
        "   The server socket has failed to listen on any local network address. port: 29992, useIpv6: false, code: "
        "-98, name: EADDRINUSE, message: address already in use",
    ])
    gai, errno, bind, libuv = run(text)
    assert (gai["peer"], gai["error_code"], gai["value"]) == ("no-such-host.invalid:29991", -2, "Name or service not known")
    assert (errno["peer"], errno["error_code"]) == ("[localhost]:29500", 99)
    assert (bind["peer"], bind["error_code"], bind["value"]) == ("[::]:29992", 98, "Address already in use")
    assert (libuv["kind"], libuv["error_code"], libuv["value"], libuv["peer"]) == ("torch.store_error", 98, "EADDRINUSE", ":29992")


def test_store_wait_timeouts_key_and_clients():
    text = "\n".join([
        "[W1122 02:48:41.086151947 socket.cpp:494] [c10d] waitForInput: socket SocketImpl(fd=13, "
        "addr=[::ffff:127.0.0.1]:52636, remote=[::ffff:127.0.0.1]:29992) timed out after 2000ms",
        "   wait timeout after 2000ms, keys: /missing_key",
        "torch.distributed.DistStoreError: Timed out after 13 seconds waiting for clients. 1/2 clients joined.",
    ])
    wait_input, wait, clients = run(text)
    assert wait_input["kind"] == "torch.store_timeout" and wait_input["peer"] == "[::ffff:127.0.0.1]:29992"
    assert (wait["kind"], wait["key"], wait["timeout_ms"]) == ("torch.store_timeout", "/missing_key", 2000)
    assert wait.get("rank") is None  # the key names no rank
    assert (clients["timeout_ms"], clients["nranks"], clients["value"]) == (13000, 2, "1/2 joined")
    assert clients["exc_type"] == "torch.distributed.DistStoreError"


def test_missing_rank_from_store_keys():
    text = "\n".join([
        # real: https://github.com/modelscope/ms-swift/issues/3612 (NCCL uniqueId from [0] never arrived)
        "torch.distributed.DistBackendError: [2] is setting up NCCL communicator and retrieving ncclUniqueId from [0] "
        "via c10d key-value store by key '0', but store->get('0') got error: wait timeout after 1800000ms, keys: "
        "/default_pg/0//1//cuda//0",
        # synthetic: built from gloo Context::createAndConnectAllPairs (store->wait_get(std::to_string(rank))) under the
        #   PrefixStore chain "/default_pg/0//cpu//<device>/", message "wait timeout after {ms}ms, keys: {keys}", torch 2.x
        "torch.distributed.DistStoreError: wait timeout after 15000ms, keys: /default_pg/0//cpu//0/2",
        # real: https://github.com/NVIDIA/nccl/issues/708 (≤1.13 spelling, FileStore)
        "RuntimeError: [1] is setting up NCCL communicator and retreiving ncclUniqueId from [0] via c10d key-value "
        "store by key '0', but store->get('0') got error: Timeout waiting for key: default_pg/0/0 after 1800000 ms",
        # pytorch_c10d.md §2.10 (real)
        "[rank8]: torch.distributed.DistBackendError: [8] is setting up NCCL communicator and retrieving ncclUniqueId "
        "from [0] via c10d key-value store by key '0', but store->get('0') got error: Socket Timeout",
    ])
    nccl, gloo, old, socket = run(text, rank=5)
    assert (nccl["kind"], nccl["rank"], nccl["key"], nccl["timeout_ms"]) == ("torch.store_timeout", 0, "0", 1800000)
    assert nccl["value"] == "waiting rank 2" and nccl["peer"] == "rank 0"
    assert (gloo["kind"], gloo["rank"], gloo["key"]) == ("torch.store_timeout", 2, "/default_pg/0//cpu//0/2")
    assert old["kind"] == "torch.store_timeout" and old["rank"] == 0
    assert socket["kind"] == "torch.store_timeout" and socket["rank"] == 0


def test_comm_setup_connection_lost_is_store_error_not_timeout():
    # real: https://github.com/modelscope/ms-swift/issues/3612 family; text from pytorch_c10d.md §2.10 list
    e = run("[rank3]: torch.distributed.DistBackendError: [3] is setting up NCCL communicator and retrieving "
            "ncclUniqueId from [0] via c10d key-value store by key '0', but store->get('0') got error: Connection "
            "reset by peer", rank=3)[0]
    assert e["kind"] == "torch.store_error" and e["peer"] == "rank 0" and e.get("rank") is None


def test_store_based_barrier_timeout():
    # real: https://github.com/vllm-project/vllm/issues/1401 (title)
    e = run("RuntimeError: Timed out initializing process group in store based barrier on rank: 1, for key: "
            "store_based_barrier_key:1 (world_size=2, worker_count=1, timeout=0:30:00)")[0]
    assert (e["kind"], e["key"], e["nranks"], e["timeout_ms"]) == ("torch.store_timeout", "store_based_barrier_key:1",
                                                                    2, 1_800_000)
    assert e["rank"] == 1 and e["value"] == "1/2 joined"


def test_server_died_recv_and_send():
    text = "\n".join([  # tcpstore_server_died.log
        "[W1122 02:48:51.001551095 TCPStore.cpp:138] [c10d] recvValueWithTimeout failed on SocketImpl(fd=4, "
        "addr=[::ffff:127.0.0.1]:54974, remote=[::ffff:127.0.0.1]:29994): Failed to recv, got 0 bytes. Connection was "
        "likely closed. Did the remote server shutdown or crash?",
        "Exception raised from recvBytes at /__w/pytorch/pytorch/torch/csrc/distributed/c10d/Utils.hpp:787 (most "
        "recent call first):",
        "frame #5: c10d::TCPStore::doWait(c10::ArrayRef<std::__cxx11::basic_string<char, std::char_traits<char>, "
        "std::allocator<char> > >, std::chrono::duration<long, std::ratio<1l, 1000l> >) + 0xc5 (0x7eff66d42d35 in "
        "/opt/venv/lib/python3.11/site-packages/torch/lib/libtorch_cpu.so)",
        "",
        "=== get after server death: torch.distributed.DistNetworkError: Failed to recv, got 0 bytes. Connection was "
        "likely closed. Did the remote server shutdown or crash?",
        "[W1122 02:48:51.012238253 TCPStore.cpp:106] [c10d] sendBytes failed on SocketImpl(fd=4, "
        "addr=[::ffff:127.0.0.1]:54974, remote=[::ffff:127.0.0.1]:29994): Broken pipe",
        "=== wait after server death: torch.distributed.DistNetworkError: Broken pipe",
    ])
    recv, recv_exc, send, send_exc = run(text)
    assert recv["peer"] == "[::ffff:127.0.0.1]:29994" and recv["key"] == "recvValueWithTimeout"
    assert "recvBytes (Utils.hpp:787)" in recv["detail"] and "TCPStore::doWait" in recv["detail"]
    assert recv_exc["kind"] == "torch.store_error" and recv_exc["exc_type"] == "torch.distributed.DistNetworkError"
    assert send["value"] == "Broken pipe" and send["key"] == "sendBytes"
    assert send_exc["kind"] == "torch.store_error"


def test_should_dump_flag_secondary_symptom():
    # real, pytorch_c10d.md §2.7
    e = run("[rank3]:[W625 23:35:35.311127584 ProcessGroupNCCL.cpp:1662] [PG ID 0 PG GUID 0(default_pg) Rank 3] "
            'Failed to check the "should dump" flag on TCPStore, (maybe TCPStore server has shut down too early), with '
            "error: failed to recv, got 0 bytes")[0]
    assert (e["kind"], e["key"], e["value"], e["level"]) == ("torch.store_error", "should_dump",
                                                             "failed to recv, got 0 bytes", "warning")
    assert e["pg"] == "0" and e.get("rank") is None  # the [rank3]: prefix already says rank 3


def test_gloo_errors_timeout_peer_and_size():
    text = "\n".join([
        # fr_gloo_cpu_torch2.13/desync/torchrun_stdout_stderr.log
        "[rank0] RuntimeError: [/__w/pytorch/pytorch/third_party/gloo/gloo/transport/tcp/unbound_buffer.cc:78] Timed "
        "out waiting 10000ms for recv operation to complete",
        # gloo_size_mismatch_no_debug.log
        "[rank1] caught builtins.RuntimeError: [/__w/pytorch/pytorch/third_party/gloo/gloo/transport/tcp/pair.cc:537] "
        "Read error [127.0.0.1]:41882: Connection reset by peer. This is typically caused by a remote worker hanging or "
        "bugs in the application. Check the logs of the remote worker before reporting an error. GLHF! \U0001f3d6\ufe0f",
        # pytorch_c10d.md §3, older builds
        "RuntimeError: [../third_party/gloo/gloo/transport/tcp/pair.cc:598] Connection closed by peer "
        "[240.57.193.204]:49556",
    ])
    timeout, read, closed = run(text)
    assert (timeout["kind"], timeout["timeout_ms"], timeout["value"]) == ("torch.gloo_error", 10000, "recv timeout")
    assert (read["peer"], read["exc_type"], read["rank"]) == ("[127.0.0.1]:41882", "builtins.RuntimeError", 1)
    assert timeout["rank"] == 0  # from the script's "[rank0] " print
    assert closed["peer"] == "[240.57.193.204]:49556" and closed["value"] == "connection closed by peer"


def test_a_store_client_that_gives_up_on_a_name_names_that_peer():
    # real: https://github.com/awslabs/ai-on-eks/issues/240 (torchrun c10d rendezvous, Slurm on EKS)
    (e,) = run("TCP client failed to connect/validate to host slinky-0:29400 - Name or service not known")
    assert (e["kind"], e["peer"], e["value"]) == ("torch.store_error", "slinky-0:29400", "Name or service not known")


def test_the_name_that_does_not_resolve_is_the_culprit_host():
    from pathlib import Path

    import nccllens

    case = Path(__file__).resolve().parents[2] / "fixtures" / "public" / "slinky_slurm_eks_rdzv_hostname_slinky0_unresolvable"
    top = nccllens.analyze(str(case)).findings[0]
    assert (top.rule, top.category, top.hosts) == ("NL-NET-008", "network_unreachable", ["slinky-0"])


def test_the_peer_is_the_host_as_given_not_the_address_it_resolved_to():
    # fixtures/public/bunya_slurm_hf_deepspeed_master_short_hostname_admin_net_no_route: the short name resolved to
    # the node's admin-network name, which the other nodes could not route to
    (e,) = [e for e in run("RuntimeError: The client socket has failed to connect to any network address of (bun003, "
                           "9901). The client socket has failed to connect to bun003.admin:9901 (errno: 113 - No route "
                           "to host).") if e["kind"] == "torch.store_error"]
    assert (e["peer"], e["error_code"], e["value"]) == ("bun003:9901", 113, "No route to host")
