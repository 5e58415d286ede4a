"""Dense modes of the synthesiser: the logs of a hang post-mortem, where nearly every line is NCCL chatter.

- ``coll``: ``NCCL_DEBUG_SUBSYS=COLL`` per-operation lines on three communicators per rank (the world, a
  tensor-parallel group of the node's ranks, a data-parallel group across nodes), each with its own
  ``comm`` pointer and ``commId``; the training script's ``step N loss L`` on the console (~15% of lines);
- ``transport``: channel storms: many communicator inits per rank, each printing its connections
  (``Channel %02d/%d : %d[%d] -> %d[%d] [send|receive] via NET/IB/%d/GDRDMA``, ``via P2P/CUMEM/read``)
  and its ring order; progress lines as above.

Fault ``opcount_behind`` (``coll`` mode): one rank stops silently one opCount before every other rank on
the world communicator (its process dies there, without a line); the others time out in the collective it
never issued. Every line is built from the verbatim format strings (shared/reference/nccl_logs.md §2).
"""

from __future__ import annotations

import synth_formats as f

COLL_OP = ("%s: opCount %lx sendbuff %p recvbuff %p count %zu datatype %d op %d root %d comm %p [nranks=%d] "
           "stream %p")  # NCCL enqueue.cc INFO(NCCL_COLL, ...), every version


def comms(job, rank: int) -> list[tuple[str, str, int, int]]:
    """(comm pointer, commId, comm rank, nranks) of the rank's communicators: world, node (TP), cross-node (DP)."""
    local, hi = divmod(rank, job.local)[1], rank // job.local
    base = f"0x55d0c8{rank % 4096:04x}"
    return [(base + "0", job.comm_id, rank, job.n),
            (base + "8", f"{int(job.comm_id, 16) ^ (0x1000 + hi):016x}", local, job.local),
            (base + "c", f"{int(job.comm_id, 16) ^ (0x2000 + local):016x}", hi, job.h)]


def coll_line(pre: str, op_count: int, comm: str, nranks: int, op: str = "AllReduce", count: int = 262144) -> str:
    return (f"{pre}{op}: opCount {op_count:x} sendbuff 0x7f3a2c000000 recvbuff 0x7f3a2c000000 count {count} "
            f"datatype 7 op 0 root 0 comm {comm} [nranks={nranks}] stream 0x55d0c91e2a40")


def init_lines(job, rank: int, dev: int, pre: str, ip: str) -> list[str]:
    out = [f"{pre}Bootstrap : Using eth0:{ip}<0>", f"{pre}NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/IB [RO]; "
           f"OOB eth0:{ip}<0>", f"{pre}Using network IB"]
    for comm, comm_id, crank, n in comms(job, rank):
        init = (f"{pre}ncclCommInitRank comm {comm} rank {crank} nranks {n} cudaDev {dev} nvmlDev {dev} "
                f"busId {0x1b000 + dev * 0x10000:x} commId 0x{comm_id}")
        out += [f"{init} - Init START", f"{init} - Init COMPLETE"]
    return out


def coll_body(job, rank: int, pre: str, ops: int, stop: int) -> list[str]:
    """The last ``ops`` world operations up to ``stop``, each followed by one TP and, every 4th, one DP op."""
    (world, _, _, n), (tp, _, _, ntp), (dp, _, _, ndp) = comms(job, rank)
    out = []
    for op in range(max(1, stop - ops + 1), stop + 1):
        out.append(coll_line(pre, op, world, n))
        out.append(coll_line(pre, op, tp, ntp, "AllGather", 65536))
        if op % 4 == 0:
            out.append(coll_line(pre, op // 4, dp, ndp, "ReduceScatter", 1048576))
    return out


def transport_body(job, rank: int, dev: int, pre: str, lines: int) -> list[str]:
    """Communicator inits (a split per pipeline stage, say) until ``lines`` lines: 32 channels each way, for
    the rings and the trees."""
    out, k = [], 0
    nxt, prv = (rank + 1) % job.n, (rank - 1) % job.n
    while len(out) < lines:
        comm = f"0x7f{rank % 4096:04x}{k:06x}"
        init = (f"{pre}ncclCommSplit comm {comm} rank {rank} nranks {job.n} cudaDev {dev} nvmlDev {dev} "
                f"busId {0x1b000 + dev * 0x10000:x} parent 0x55d0c8{rank % 4096:04x}0 color {k} key {rank}- Init START")
        out.append(init)
        if rank == 0:
            out += [f"{pre}Channel {ch:02d}/32 :" + "".join(f" {r:4d}" for r in range(min(job.n, 24))) for ch in range(32)]
        for conn in (0, 1):  # ring connections, then tree ones (connIndex 1), 32 channels each way
            for ch in range(32):
                inter = nxt // job.local != rank // job.local
                via_send = f"NET/IB/{ch % 4}/GDRDMA" if inter else "P2P/CUMEM/read"
                via_recv = f"NET/IB/{ch % 4}/GDRDMA" if (prv // job.local != rank // job.local) else "P2P/CUMEM/read"
                out.append(f"{pre}Channel {ch:02d}/{conn} : {rank}[{dev}] -> {nxt}[{nxt % job.local}] [send] via {via_send}")
                out.append(f"{pre}Channel {ch:02d}/{conn} : {prv}[{prv % job.local}] -> {rank}[{dev}] [receive] via "
                           f"{via_recv}")
        out.append(f"{pre}Connected all rings")
        k += 1
    return out


def progress(rank: int, steps: range, torch: str) -> list[str]:
    pre = f.excepthook_prefix(rank, torch)
    return [f"{pre}step {s} loss {2.0 + 10.0 / s:.4f} lr 1.0e-04" for s in steps]
