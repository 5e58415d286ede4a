"""Line templates for the cluster-log synthesiser, each built from a verbatim format string.

Every line the synthesiser writes is synthetic; the templates below copy the format strings of
NCCL 2.21.5 (src/init.cc, src/bootstrap.cc, src/transport/net_ib.cc, src/enqueue.cc), PyTorch 2.4
ProcessGroupNCCL / torchrun (c10 logging with timestamps, torch._logging headers) and the NVIDIA
driver's Xid report (krcReportXid), as documented in shared/reference/*.md.
"""

from __future__ import annotations

from datetime import datetime

MARK = "# synthetic: written by nccllens bench/synth.py from verbatim format strings; not a real job\n"


def nccl_prefix(host: str, pid: int, tid: int, dev: int) -> str:
    return f"{host}:{pid}:{tid} [{dev}] NCCL INFO "  # "%s:%d:%d [%d] NCCL INFO " (2.10–2.25)


def nccl_init(host: str, pid: int, dev: int, rank: int, nranks: int, nnodes: int, local: int,
              comm: str, comm_id: str, ip: str) -> list[str]:
    p = nccl_prefix(host, pid, pid, dev)
    out = []
    if rank == 0:
        out.append("NCCL version 2.21.5+cuda12.4")
    out += [
        f"{p}Bootstrap : Using eth0:{ip}<0>",
        f"{p}NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/IB [RO]; OOB eth0:{ip}<0>",
        f"{p}Using network IB",
        f"{p}ncclCommInitRank comm {comm} rank {rank} nranks {nranks} cudaDev {dev} nvmlDev {dev} busId "
        f"{0x1b000 + dev * 0x10000:x} commId 0x{comm_id} - Init START",
        f"{p}comm {comm} rank {rank} nRanks {nranks} nNodes {nnodes} localRanks {local} localRank {dev} MNNVL 0",
    ]
    nxt = (rank + 1) % nranks
    for ch in range(8):
        out.append(f"{p}Channel {ch:02d}/0 : {rank}[{dev}] -> {nxt}[{(dev + 1) % local}] via P2P/IPC/read")
    out += [
        f"{p}Connected all rings",
        f"{p}Connected all trees",
        f"{p}32 coll channels, 32 collnet channels, 0 nvls channels, 32 p2p channels, 32 p2p channels per peer",
        f"{p}ncclCommInitRank comm {comm} rank {rank} nranks {nranks} cudaDev {dev} nvmlDev {dev} busId "
        f"{0x1b000 + dev * 0x10000:x} commId 0x{comm_id} - Init COMPLETE",
    ]
    return out


def nccl_coll(host: str, pid: int, dev: int, op_count: int, comm: str, nranks: int) -> str:
    # "%s: opCount %lx sendbuff %p recvbuff %p count %zu datatype %d op %d root %d comm %p [nranks=%d] stream %p"
    return (f"{nccl_prefix(host, pid, pid, dev)}AllReduce: opCount {op_count:x} sendbuff 0x7f3a2c000000 "
            f"recvbuff 0x7f3a2c000000 count 262144 datatype 7 op 0 root 0 comm {comm} [nranks={nranks}] "
            f"stream 0x55d0c91e2a40")


def ib_completion_warn(host: str, pid: int, dev: int, peer_ip: str) -> list[str]:
    # 2.20-2.21: "NET/IB : Got completion from peer %s with status=%d opcode=%d len=%d vendor err %d (%s)"
    return ["", f"{host}:{pid}:{pid + 7} [{dev}] transport/net_ib.cc:1696 NCCL WARN NET/IB : Got completion "
                f"from peer {peer_ip}<47612> with status=12 opcode=0 len=0 vendor err 129 (Recv)"]


def glog(level: str, ts: datetime, src: str) -> str:
    # c10 logging without glog, PyTorch >= 2.4: "[%c%d %02d:%02d:%02d.%09ld %s:%d] "
    return f"[{level}{ts.month * 100 + ts.day} {ts:%H:%M:%S}.{ts.microsecond * 1000:09d} {src}] "


def pylog(level: str, ts: datetime, pid: int, src: str) -> str:
    # torch._logging TorchLogsFormatter: "%c%m%d %H:%M:%S.%f %d %s:%d] "
    return f"{level}{ts:%m%d %H:%M:%S}.{ts.microsecond:06d} {pid} {src}] "


def work(seq: int, op: str, timeout_ms: int) -> str:
    return f"WorkNCCL(SeqNum={seq}, OpType={op}, NumelIn=262144, NumelOut=262144, Timeout(ms)={timeout_ms})"


def watchdog(rank: int, ts: datetime, seq: int, op: str, timeout_ms: int, last_completed: int) -> list[str]:
    pre = f"[rank{rank}]:"
    return [
        f"{pre}{glog('E', ts, 'ProcessGroupNCCL.cpp:607')}[Rank {rank}] Watchdog caught collective operation "
        f"timeout: {work(seq, op, timeout_ms)} ran for {timeout_ms + 17} milliseconds before timing out.",
        f"{pre}{glog('E', ts, 'ProcessGroupNCCL.cpp:1664')}[PG 0 (default_pg) Rank {rank}] Exception (either an "
        f"error or timeout) detected by watchdog at work: {seq}, last enqueued NCCL work: {seq}, last completed "
        f"NCCL work: {last_completed}.",
        f"{pre}{glog('E', ts, 'ProcessGroupNCCL.cpp:1709')}[PG 0 (default_pg) Rank {rank}] Timeout at NCCL work: "
        f"{seq}, last enqueued NCCL work: {seq}, last completed NCCL work: {last_completed}.",
        f"{pre}{glog('E', ts, 'ProcessGroupNCCL.cpp:621')}[Rank {rank}] Some NCCL operations have failed or timed "
        f"out. Due to the asynchronous nature of CUDA kernels, subsequent GPU operations might run on "
        f"corrupted/incomplete data.",
        f"{pre}{glog('E', ts, 'ProcessGroupNCCL.cpp:627')}[Rank {rank}] To avoid data inconsistency, we are taking "
        f"the entire process down.",
    ]


def traceback(rank: int, exc_lines: list[str], frames: list[tuple[str, int, str, str]]) -> list[str]:
    pre = f"[rank{rank}]: "
    out = [f"{pre}Traceback (most recent call last):"]
    for path, line, func, code in frames:
        out += [f'{pre}  File "{path}", line {line}, in {func}', f"{pre}    {code}"]
    return out + [pre + x for x in exc_lines]


def agent_failed(ts: datetime, agent_pid: int, code: int, local_rank: int, pid: int) -> str:
    return (pylog("E", ts, agent_pid, "torch/distributed/elastic/multiprocessing/api.py:833")
            + f"failed (exitcode: {code}) local_rank: {local_rank} (pid: {pid}) of binary: /usr/bin/python3")


def dmesg_t(ts: datetime, msg: str) -> str:
    return f"[{ts:%a %b} {ts.day:2d} {ts:%H:%M:%S %Y}] {msg}"  # dmesg -T: ctime, space-padded day


def xid79(pci: str) -> list[str]:
    return [f"NVRM: Xid (PCI:{pci}): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.",
            f"NVRM: GPU {pci}.0: GPU has fallen off the bus."]


def oom_kill(pid: int) -> str:
    return (f"Out of memory: Killed process {pid} (python3) total-vm:98765432kB, anon-rss:87654321kB, "
            f"file-rss:0kB, shmem-rss:0kB, UID:0 pgtables:180224kB oom_score_adj:0")


def rendezvous(ts: datetime, agent_pid: int, group_rank: int, nnodes: int, ranks: list[int], world: int) -> list[str]:
    """torchrun INFO (LOGLEVEL=INFO) rendezvous lines, as torch/distributed/elastic/agent/server/api.py logs them."""
    src = "torch/distributed/elastic/agent/server/api.py"
    head = pylog("I", ts, agent_pid, f"{src}:707")
    res = pylog("I", ts, agent_pid, f"{src}:553")
    local = list(range(len(ranks)))
    return [f"{head}[default] Rendezvous'ing worker group",
            f"{res}[default] Rendezvous complete for workers. Result:",
            f"{res}  restart_count=0", f"{res}  master_addr=10.1.0.1", f"{res}  master_port=29500",
            f"{res}  group_rank={group_rank}", f"{res}  group_world_size={nnodes}", f"{res}  local_ranks={local}",
            f"{res}  role_ranks={ranks}", f"{res}  global_ranks={ranks}",
            f"{res}  role_world_sizes={[world] * len(ranks)}", f"{res}  global_world_sizes={[world] * len(ranks)}",
            f"{res}"]
