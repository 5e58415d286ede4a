"""Line templates for the cluster-log synthesiser, each built from a verbatim format string.

Every line the synthesiser writes is synthetic; the templates below copy the format strings of NCCL
(src/init.cc, src/bootstrap.cc, src/transport/net_ib.cc, src/enqueue.cc), PyTorch ProcessGroupNCCL /
torchrun (c10 logging, torch._logging and stdlib logging headers) and the NVIDIA driver's Xid report
(krcReportXid), as documented in shared/reference/*.md, for several format generations:

- ``TORCH`` (the first version of each generation): 2.1 (C++ ``[E file:line]`` without time, no
  ``[rankN]:`` prefix, ``[Rank N]`` log prefix, no PG status line, stdlib-logging torchrun headers);
  2.3 (``[rankN]:``, ``[PG 0 Rank N]``, ``Timeout at NCCL work``, torch._logging headers); 2.4 (C++
  timestamps, ``[PG 0 (default_pg) Rank N]``, the ``Exception (either an error or timeout)`` line
  too); 2.7 (``[PG ID 0 PG GUID 0(default_pg) Rank N]``, ``failure detected by watchdog at work
  sequence id``), up to 2.13.
- ``NCCL``: 2.17 (no ``Init START``, ``comm ... - Init COMPLETE`` without the API name, IB
  completion ``with error %d, opcode %d``); 2.21 (``ncclCommInitRank ... Init START/COMPLETE``,
  topology summary, ``status=%d opcode=%d``); 2.23 (every rank prints ``NCCL INFO NCCL version``,
  ``NET/IB: Got completion ... hca %s``).
"""

from __future__ import annotations

from datetime import datetime

MARK = "# synthetic: written by nccllens bench/synth.py from verbatim format strings; not a real job\n"
TORCH = ("2.1", "2.3", "2.4", "2.7")
NCCL = ("2.17", "2.21", "2.23")
NCCL_FULL = {"2.17": "2.17.1+cuda12.1", "2.21": "2.21.5+cuda12.4", "2.23": "2.23.4+cuda12.6"}


def _at_least(version: str, first: str) -> bool:
    return tuple(map(int, version.split("."))) >= tuple(map(int, first.split(".")))


def nccl_prefix(host: str, pid: int, tid: int, dev: int) -> str:
    return f"{host}:{pid}:{tid} [{dev}] NCCL INFO "  # "%s:%d:%d [%d] NCCL INFO " (2.10–2.25)


def nccl_init(host: str, pid: int, dev: int, rank: int, nranks: int, nnodes: int, local: int,
              comm: str, comm_id: str, ip: str, nccl: str = "2.21") -> list[str]:
    p = nccl_prefix(host, pid, pid, dev)
    out = []
    if _at_least(nccl, "2.22"):
        out.append(f"{p}NCCL version {NCCL_FULL[nccl]}")  # 2.22+: every process, at INFO
    elif rank == 0:
        out.append(f"NCCL version {NCCL_FULL[nccl]}")  # <= 2.21: rank 0 only, a bare printf
    out += [
        f"{p}Bootstrap : Using eth0:{ip}<0>",
        f"{p}NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/IB [RO]; OOB eth0:{ip}<0>",
        f"{p}Using network IB",
    ]
    bus = f"{0x1b000 + dev * 0x10000:x}"
    if _at_least(nccl, "2.18"):
        # "%s comm %p rank %d nranks %d cudaDev %d nvmlDev %d busId %lx commId 0x%llx - Init START" (2.21+)
        api = "ncclCommInitRank " if _at_least(nccl, "2.21") else ""
        init = f"{p}{api}comm {comm} rank {rank} nranks {nranks} cudaDev {dev} nvmlDev {dev} busId {bus} commId 0x{comm_id}"
        out.append(f"{init} - Init START")
    if _at_least(nccl, "2.20"):  # "comm %p rank %d nRanks %d nNodes %d localRanks %d localRank %d MNNVL %d"
        out.append(f"{p}comm {comm} rank {rank} nRanks {nranks} nNodes {nnodes} localRanks {local} localRank {dev} MNNVL 0")
    nxt = (rank + 1) % nranks
    for ch in range(8):
        out.append(f"{p}Channel {ch:02d}/0 : {rank}[{dev}] -> {nxt}[{(dev + 1) % local}] via P2P/IPC/read")
    out += [
        f"{p}Connected all rings",
        f"{p}Connected all trees",
        f"{p}32 coll channels, 32 collnet channels, 0 nvls channels, 32 p2p channels, 32 p2p channels per peer",
    ]
    if _at_least(nccl, "2.18"):
        out.append(f"{init} - Init COMPLETE")
    else:  # 2.16-2.17: "comm %p rank %d nranks %d cudaDev %d busId %lx commId 0x%llx - Init COMPLETE"
        out.append(f"{p}comm {comm} rank {rank} nranks {nranks} cudaDev {dev} busId {bus} commId 0x{comm_id} "
                   f"- Init COMPLETE")
    return out


def nccl_coll(host: str, pid: int, dev: int, op_count: int, comm: str, nranks: int) -> str:
    # "%s: opCount %lx sendbuff %p recvbuff %p count %zu datatype %d op %d root %d comm %p [nranks=%d] stream %p"
    return (f"{nccl_prefix(host, pid, pid, dev)}AllReduce: opCount {op_count:x} sendbuff 0x7f3a2c000000 "
            f"recvbuff 0x7f3a2c000000 count 262144 datatype 7 op 0 root 0 comm {comm} [nranks={nranks}] "
            f"stream 0x55d0c91e2a40")


def ib_completion_warn(host: str, pid: int, dev: int, peer_ip: str, nccl: str = "2.21") -> list[str]:
    warn = f"{host}:{pid}:{pid + 7} [{dev}] transport/net_ib.cc:1696 NCCL WARN "  # "\n%s:%d:%d [%d] %s:%d NCCL WARN "
    peer = f"{peer_ip}<47612>"
    if _at_least(nccl, "2.22"):
        # "NET/IB: Got completion from peer %s with status=%d opcode=%d len=%u vendor err %u (%s)%s%s%s%s hca %s"
        body = f"NET/IB: Got completion from peer {peer} with status=12 opcode=0 len=0 vendor err 129 (Recv) hca mlx5_0"
    elif _at_least(nccl, "2.20"):
        # "NET/IB : Got completion from peer %s with status=%d opcode=%d len=%d vendor err %d (%s)"
        body = f"NET/IB : Got completion from peer {peer} with status=12 opcode=0 len=0 vendor err 129 (Recv)"
    else:  # 2.10-2.17: "NET/IB : Got completion from peer %s with error %d, opcode %d, len %d, vendor err %d"
        body = f"NET/IB : Got completion from peer {peer} with error 12, opcode 0, len 0, vendor err 129"
    return ["", warn + body]


def glog(level: str, ts: datetime, src: str, torch: str = "2.4") -> str:
    if not _at_least(torch, "2.4"):
        return f"[{level} {src}] "  # c10 logging without glog, <= 2.3: "[%c %s:%d] " (no time)
    # c10 logging without glog, PyTorch >= 2.4: "[%c%d %02d:%02d:%02d.%09ld %s:%d] "
    return f"[{level}{ts.month * 100 + ts.day} {ts:%H:%M:%S}.{ts.microsecond * 1000:09d} {src}] "


_LEVEL_NAMES = {"I": "INFO", "W": "WARNING", "E": "ERROR"}


def pylog(level: str, ts: datetime, pid: int, src: str, torch: str = "2.4", logger: str = "") -> str:
    """The header of a torchrun (Python) log record: torch._logging's TorchLogsFormatter from ~2.3,
    ``[%(asctime)s] %(name)s: [%(levelname)s] `` in ~2.1-2.2 (``logger`` is the record's logger name)."""
    if not _at_least(torch, "2.3"):
        return f"[{ts:%Y-%m-%d %H:%M:%S},{ts.microsecond // 1000:03d}] {logger}: [{_LEVEL_NAMES[level]}] "
    # torch._logging TorchLogsFormatter: "%c%m%d %H:%M:%S.%f %d %s:%d] "
    return f"{level}{ts:%m%d %H:%M:%S}.{ts.microsecond:06d} {pid} {src}] "


def rank_prefix(rank: int, torch: str) -> str:
    """``[rankN]:`` that c10 logging puts before each C++ line once the default PG exists (~2.2/2.3+)."""
    return f"[rank{rank}]:" if _at_least(torch, "2.3") else ""


def pg_prefix(rank: int, torch: str) -> str:
    """``ProcessGroupNCCL::logPrefix()`` of the default PG."""
    if _at_least(torch, "2.7"):
        return f"[PG ID 0 PG GUID 0(default_pg) Rank {rank}] "
    if _at_least(torch, "2.4"):
        return f"[PG 0 (default_pg) Rank {rank}] "
    if _at_least(torch, "2.3"):
        return f"[PG 0 Rank {rank}] "
    return f"[Rank {rank}] "


def work(seq: int, op: str, timeout_ms: int) -> str:
    return f"WorkNCCL(SeqNum={seq}, OpType={op}, NumelIn=262144, NumelOut=262144, Timeout(ms)={timeout_ms})"


# ProcessGroupNCCL.cpp line numbers: values, not format. Where shared/reference quotes a real line of
# the generation they are its (2.3: watchdog 737, tear-down 577; 2.4: all; 2.7: watchdog 632, status
# 2271); the others are plausible neighbours.
_CPP_LINES = {
    "2.1": {"watchdog": 475, "down1": 489, "down2": 495},
    "2.3": {"watchdog": 737, "status": 1387, "down1": 577, "down2": 583},
    "2.4": {"watchdog": 607, "status": 1709, "exception": 1664, "down1": 621, "down2": 627},
    "2.7": {"watchdog": 632, "status": 2271, "down1": 684, "down2": 690},
}


def watchdog(rank: int, ts: datetime, seq: int, op: str, timeout_ms: int, last_completed: int,
             torch: str = "2.4") -> list[str]:
    rp, pg, n = rank_prefix(rank, torch), pg_prefix(rank, torch), _CPP_LINES[torch]

    def cpp(key: str) -> str:
        return rp + glog("E", ts, f"ProcessGroupNCCL.cpp:{n[key]}", torch)

    out = [f"{cpp('watchdog')}[Rank {rank}] Watchdog caught collective operation timeout: "
           f"{work(seq, op, timeout_ms)} ran for {timeout_ms + 17} milliseconds before timing out."]
    if torch == "2.4":
        out.append(f"{cpp('exception')}{pg}Exception (either an error or timeout) detected by watchdog at work: {seq}, "
                   f"last enqueued NCCL work: {seq}, last completed NCCL work: {last_completed}.")
    if torch in ("2.3", "2.4"):
        out.append(f"{cpp('status')}{pg}Timeout at NCCL work: {seq}, last enqueued NCCL work: {seq}, last completed "
                   f"NCCL work: {last_completed}.")
    if torch == "2.7":  # "{prefix} failure detected by watchdog at work sequence id: ..." (two spaces)
        out.append(f"{cpp('status')}{pg} failure detected by watchdog at work sequence id: {seq} PG status: last "
                   f"enqueued work: {seq}, last completed work: {last_completed}")
    rank_tag = f"[Rank {rank}] " if _at_least(torch, "2.3") else ""
    out += [
        f"{cpp('down1')}{rank_tag}Some NCCL operations have failed or timed out. Due to the asynchronous nature of "
        f"CUDA kernels, subsequent GPU operations might run on corrupted/incomplete data.",
        f"{cpp('down2')}{rank_tag}To avoid data inconsistency, we are taking the entire process down.",
    ]
    return out


def excepthook_prefix(rank: int, torch: str) -> str:
    """``[rankN]: `` that the default PG's excepthook puts before a worker's Python output (2.3+)."""
    return f"[rank{rank}]: " if _at_least(torch, "2.3") else ""


def traceback(rank: int, exc_lines: list[str], frames: list[tuple[str, int, str, str]],
              torch: str = "2.4") -> list[str]:
    pre = excepthook_prefix(rank, torch)
    out = [f"{pre}Traceback (most recent call last):"]
    for path, line, func, code in frames:
        out += [f'{pre}  File "{path}", line {line}, in {func}', f"{pre}    {code}"]
    return out + [pre + x for x in exc_lines]


def agent_failed(ts: datetime, agent_pid: int, code: int, local_rank: int, pid: int, torch: str = "2.4") -> str:
    return (pylog("E", ts, agent_pid, "torch/distributed/elastic/multiprocessing/api.py:833", torch,
                  "torch.distributed.elastic.multiprocessing.api")
            + f"failed (exitcode: {code}) local_rank: {local_rank} (pid: {pid}) of binary: /usr/bin/python3")


def dmesg_t(ts: datetime, msg: str) -> str:
    return f"[{ts:%a %b} {ts.day:2d} {ts:%H:%M:%S %Y}] {msg}"  # dmesg -T: ctime, space-padded day


def xid79(pci: str) -> list[str]:
    return [f"NVRM: Xid (PCI:{pci}): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.",
            f"NVRM: GPU {pci}.0: GPU has fallen off the bus."]


def oom_kill(pid: int) -> str:
    return (f"Out of memory: Killed process {pid} (python3) total-vm:98765432kB, anon-rss:87654321kB, "
            f"file-rss:0kB, shmem-rss:0kB, UID:0 pgtables:180224kB oom_score_adj:0")


def rendezvous(ts: datetime, agent_pid: int, group_rank: int, nnodes: int, ranks: list[int], world: int,
               torch: str = "2.4") -> list[str]:
    """torchrun INFO (LOGLEVEL=INFO) rendezvous lines, as torch/distributed/elastic/agent/server/api.py logs them.
    torch._logging repeats the header on every line of the multi-line result; stdlib logging (<= 2.2) does not."""
    src, logger = "torch/distributed/elastic/agent/server/api.py", "torch.distributed.elastic.agent.server.api"
    head = pylog("I", ts, agent_pid, f"{src}:707", torch, logger)
    res = pylog("I", ts, agent_pid, f"{src}:553", torch, logger)
    cont = res if _at_least(torch, "2.3") else ""
    local = list(range(len(ranks)))
    return [f"{head}[default] Rendezvous'ing worker group",
            f"{res}[default] Rendezvous complete for workers. Result:",
            f"{cont}  restart_count=0", f"{cont}  master_addr=10.1.0.1", f"{cont}  master_port=29500",
            f"{cont}  group_rank={group_rank}", f"{cont}  group_world_size={nnodes}", f"{cont}  local_ranks={local}",
            f"{cont}  role_ranks={ranks}", f"{cont}  global_ranks={ranks}",
            f"{cont}  role_world_sizes={[world] * len(ranks)}", f"{cont}  global_world_sizes={[world] * len(ranks)}",
            f"{cont}"]
