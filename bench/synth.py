"""Write the logs of a synthetic job of N ranks on H hosts, with one injected fault.

    python bench/synth.py OUT --ranks 512 --hosts 64 --fault xid79 --bytes 1G

    python bench/synth.py OUT --ranks 64 --hosts 8 --fault exception --torch 2.1 --nccl 2.17 --log-dir

Layout (what a user collects): ``<host>/console.log`` (torchrun console, ``[rankN]:`` prefixes),
``<host>/nccl.<host>.<pid>.log`` (``NCCL_DEBUG_FILE`` per rank, NCCL_DEBUG=INFO with COLL),
``<host>/dmesg.txt`` (``dmesg -T``), and ``expected.toml`` with the verdict the fault should get.
With ``--log-dir`` the workers' own output goes where torchrun ``--log-dir`` puts it,
``<host>/torchrun/none_<id>/attempt_0/<local_rank>/{stdout,stderr}.log``, and the console keeps the
agent's lines; ``--tee`` shows the workers' output on the console too, each line after torchrun's
``[default<local_rank>]:``. ``--torch`` and ``--nccl`` choose the format generation (``synth_formats``).
Every file starts with a line saying it is synthetic.
"""

from __future__ import annotations

import argparse
import random
from datetime import datetime, timedelta
from pathlib import Path

import synth_dense as dense
import synth_formats as f

FAULTS = ("xid79", "gpu_oom", "exception", "divergence", "ib", "missing_node", "straggler", "host_oom",
          "opcount_behind", "none")
MODES = ("sparse", "coll", "transport")  # sparse: one communicator's COLL lines; the others: synth_dense
T0 = datetime(2026, 11, 22, 1, 0, 0)
NEVER_SEEN_SHARE = 0.25  # as nccllens.analyses.collectives (the synthesiser does not import nccllens)
TIMEOUT_MS = 600_000


def _size(text: str) -> int:
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    return int(float(text[:-1]) * units[text[-1].upper()]) if text[-1].upper() in units else int(text)


class Job:
    def __init__(self, ranks: int, hosts: int, fault: str, seed: int, per_rank_bytes: int = 0,
                 torch: str = "2.4", nccl: str = "2.21", mode: str = "sparse"):
        self.n, self.h, self.fault, self.mode = ranks, hosts, fault, mode
        self.torch, self.nccl = torch, nccl
        self.local = ranks // hosts
        rnd = random.Random(seed)
        self.bad_host = rnd.randrange(1, hosts) if hosts > 1 else 0
        self.bad_rank = self.bad_host * self.local + rnd.randrange(self.local)
        if fault == "divergence" and ranks == 2:  # two ranks: rank 0 on a code path of its own, as in real jobs
            self.bad_host, self.bad_rank = 0, 0
        # enough collectives before the fault for each rank's NCCL log to reach its share of the bytes
        self.fail_seq = max(4000, per_rank_bytes // 180 + 10)
        self.t_fault = T0 + timedelta(minutes=30)
        self.comm_id = f"{rnd.getrandbits(64):016x}"
        self.run_suffix = f"{rnd.getrandbits(32):08x}"  # torchrun's <run_id>_<random> folder
        self.per_rank_bytes = per_rank_bytes

    def host(self, i: int) -> str:
        return f"gpu-node-{i:03d}"

    def pid(self, rank: int) -> int:
        return 40000 + rank * 7

    def ip(self, i: int) -> str:
        return f"10.1.{i // 250}.{i % 250 + 1}"

    def expected(self) -> dict:
        bad_host, bad_rank = self.host(self.bad_host), self.bad_rank
        node = list(range(self.bad_host * self.local, (self.bad_host + 1) * self.local))
        # a missing node: its ranks never joined the collective the others wait in. Blamed as absent
        # when they are a small part of the job; when they are more than a quarter of it (2 nodes),
        # missing logs are likelier than a culprit, and nobody is blamed (analyses.collectives)
        missing = "unknown" if len(node) > max(1, NEVER_SEEN_SHARE * self.n) else "rank_divergence"
        # two ranks stuck in different collectives: no majority; rank 0 alone on its side is named
        # (analyses.common.rank0_on_tie), and the two-rank job puts the divergent code path on rank 0
        odd = ([bad_rank], [bad_host])
        return {
            "xid79": ("gpu_hardware", [bad_rank], [bad_host]),
            "gpu_oom": ("gpu_oom", [bad_rank], [bad_host]),
            "exception": ("application_error", [bad_rank], [bad_host]),
            "divergence": ("rank_divergence", *odd),
            "ib": ("ib_fabric", [], [bad_host]),
            "missing_node": (missing, node, []),
            "straggler": ("straggler", node, [bad_host]),
            "host_oom": ("host_oom", [bad_rank], [bad_host]),
            # absent from the collective the others wait in (AN-COLLECTIVE-ABSENT; AN-OPCOUNT-BEHIND agrees)
            "opcount_behind": ("rank_divergence", [bad_rank], [bad_host]),
            "none": ("none", [], []),
        }[self.fault]


def _stop(job: Job, rank: int) -> int:
    """The rank's last collective: the one everybody times out in, one before it for a rank that failed."""
    if job.fault in ("xid79", "gpu_oom", "exception", "host_oom", "opcount_behind") and rank == job.bad_rank:
        return job.fail_seq - 1
    return job.fail_seq + 50 if job.fault == "none" else job.fail_seq


def _write_dense_nccl(job: Job, rank: int, out: Path, per_rank_bytes: int) -> None:
    hi, dev = divmod(rank, job.local)
    host, pid = job.host(hi), job.pid(rank)
    pre = f.nccl_prefix(host, pid, pid, dev)
    lines = dense.init_lines(job, rank, dev, pre, job.ip(hi))
    budget = max(1, int(per_rank_bytes * 0.85) // (190 if job.mode == "coll" else 100))  # lines; progress: the rest
    if job.mode == "coll":
        lines += dense.coll_body(job, rank, pre, max(1, budget * 4 // 9), _stop(job, rank))
    else:
        lines += dense.transport_body(job, rank, dev, pre, budget)
        lines += [dense.coll_line(pre, op, dense.comms(job, rank)[0][0], job.n)
                  for op in range(max(1, _stop(job, rank) - 20), _stop(job, rank) + 1)]
    with open(out / host / f"nccl.{host}.{pid}.log", "w") as fh:
        fh.write(f.MARK)
        fh.write("\n".join(lines) + "\n")


def _write_rank_nccl(job: Job, rank: int, out: Path, per_rank_bytes: int) -> None:
    if job.mode != "sparse":
        _write_dense_nccl(job, rank, out, per_rank_bytes)
        return
    hi, dev = divmod(rank, job.local)
    host, pid = job.host(hi), job.pid(rank)
    comm = f"0x55d0c8{rank % 4096:04x}0"
    lines = f.nccl_init(host, pid, dev, rank, job.n, job.h, job.local, comm, job.comm_id, job.ip(hi), job.nccl)
    with open(out / host / f"nccl.{host}.{pid}.log", "w") as fh:
        fh.write(f.MARK)
        fh.write("\n".join(lines) + "\n")
        stop = _stop(job, rank)
        line_bytes = len(f.nccl_coll(host, pid, dev, 1, comm, job.n)) + 1
        ops = max(1, per_rank_bytes // line_bytes)  # the last `ops` collectives before the stop
        first = max(1, stop - ops + 1)
        block = []
        for op in range(first, stop + 1):
            block.append(f.nccl_coll(host, pid, dev, op, comm, job.n))
            if len(block) >= 20000:
                fh.write("\n".join(block) + "\n")
                block.clear()
        if block:
            fh.write("\n".join(block) + "\n")
        if job.fault == "ib" and hi == job.bad_host:
            fh.write("\n".join(f.ib_completion_warn(host, pid, dev, job.ip((hi + 1) % job.h), job.nccl)) + "\n")


def _console(job: Job, hi: int, late: timedelta) -> tuple[list[str], dict[int, list[str]], dict[int, list[str]],
                                                          list[str]]:
    """The node's agent lines before the workers' output, each local rank's stderr and stdout lines,
    and the agent's lines after them."""
    agent, tv = 30000 + hi, job.torch
    t = T0 + late
    run = "torch.distributed.run"
    head = [f.pylog("W", t, agent, "torch/distributed/run.py:793", tv, run) + "*" * 41,
            f.pylog("W", t, agent, "torch/distributed/run.py:793", tv, run) + "Setting OMP_NUM_THREADS environment "
            "variable for each process to be 1 in default, to avoid your system being overloaded, please further "
            "tune the variable for optimal performance in your application as needed. "]
    head += f.rendezvous(t + timedelta(seconds=1), agent, hi, job.h,
                         list(range(hi * job.local, (hi + 1) * job.local)), job.n, tv)
    ranks = range(hi * job.local, (hi + 1) * job.local)
    err: dict[int, list[str]] = {r: [] for r in ranks}
    out: dict[int, list[str]] = {r: [] for r in ranks}
    if job.mode != "sparse":  # every rank's progress, ~15% of the lines
        count = max(2, int(job.per_rank_bytes * 0.15) // 45)
        for rank in ranks:
            out[rank] += dense.progress(rank, range(10, 10 * count + 1, 10), tv)
    elif hi == job.h - 1:
        last = job.n - 1
        pre = f.excepthook_prefix(last, tv)  # the training script's own print, as the job's consoles show it
        out[last] += [f"{pre}step {step} loss {2.0 + 1.0 / step:.4f}" for step in range(100, 1001, 100)]
    watch_t = job.t_fault + timedelta(milliseconds=TIMEOUT_MS + 17)
    if job.fault in ("none", "straggler"):
        return head, err, out, []
    for rank in ranks:
        if rank == job.bad_rank and job.fault in ("gpu_oom", "exception"):
            exc = (["torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 3 has a total "
                    "capacity of 79.10 GiB of which 1.23 GiB is free. Including non-PyTorch memory, this process has "
                    "77.86 GiB memory in use."] if job.fault == "gpu_oom" else ["KeyError: 'input_ids'"])
            err[rank] += f.traceback(rank, exc, [("/workspace/train.py", 212, "<module>", "main()"),
                                                 ("/workspace/train.py", 187, "main", "loss = step(model, batch)")], tv)
            continue
        if rank == job.bad_rank and job.fault in ("xid79", "host_oom", "opcount_behind"):
            continue
        op = "BROADCAST" if (job.fault == "divergence" and rank == job.bad_rank) else "ALLREDUCE"
        err[rank] += f.watchdog(rank, watch_t, job.fail_seq, op, TIMEOUT_MS, job.fail_seq - 1, tv)
    end = watch_t + timedelta(seconds=3)
    tail = []
    for lr in range(job.local):
        rank = hi * job.local + lr
        code = -9 if (job.fault == "host_oom" and rank == job.bad_rank) else -6
        if rank == job.bad_rank and job.fault in ("gpu_oom", "exception"):
            code = 1
        tail.append(f.agent_failed(end, agent, code, lr, job.pid(rank), tv))
    return head, err, out, tail


def _dmesg(job: Job, hi: int) -> list[str]:
    boot = T0 - timedelta(days=3)
    lines = [f.dmesg_t(boot, "Linux version 5.15.0-91-generic (buildd@lcy02-amd64-045) (gcc (Ubuntu 11.4.0) 11.4.0)"),
             f.dmesg_t(boot + timedelta(seconds=12), "mlx5_core 0000:5e:00.0: Port module event: module 0, Cable plugged")]
    if hi == job.bad_host and job.fault == "xid79":
        lines += [f.dmesg_t(job.t_fault, m) for m in f.xid79(f"0000:{0x1b + (job.bad_rank % job.local) * 0x10:02x}:00")]
    if hi == job.bad_host and job.fault == "host_oom":
        lines.append(f.dmesg_t(job.t_fault, f.oom_kill(job.pid(job.bad_rank))))
    return lines


def _write_node_output(job: Job, hi: int, host_dir: Path, late: timedelta, log_dir: bool, tee: bool) -> None:
    head, err, out, tail = _console(job, hi, late)

    def shown(rank: int, lines: list[str]) -> list[str]:  # torchrun --tee: TailLog's "[{role}{local_rank}]:"
        return [f"[default{rank - hi * job.local}]:{x}" for x in lines] if tee else lines

    # the console interleaves the workers' output (here: rank by rank) between the agent's lines, unless
    # it went only to the --log-dir files
    workers = [x for r in sorted(out) for x in shown(r, out[r])] + [x for r in sorted(err) for x in shown(r, err[r])]
    console = head + (workers if tee or not log_dir else []) + tail
    (host_dir / "console.log").write_text(f.MARK + "\n".join(console) + "\n")
    if not log_dir:
        return
    run = host_dir / "torchrun" / f"none_{job.run_suffix}" / "attempt_0"  # <log_dir>/<run_id>_<rand>/attempt_<n>
    for rank in sorted(err):
        rank_dir = run / str(rank - hi * job.local)
        rank_dir.mkdir(parents=True, exist_ok=True)
        (rank_dir / "stderr.log").write_text(f.MARK + "".join(x + "\n" for x in err[rank]))
        (rank_dir / "stdout.log").write_text(f.MARK + "".join(x + "\n" for x in out[rank]))


NEEDS = {"divergence": (2, 1), "missing_node": (2, 2), "straggler": (2, 2), "ib": (2, 2),
         "opcount_behind": (3, 1)}  # fault: (ranks, hosts)


def check_job(ranks: int, hosts: int, fault: str, mode: str = "sparse") -> str | None:
    """Why these cannot make a job with this fault (None when they can)."""
    if fault not in FAULTS:
        return f"unknown fault {fault!r} (one of {', '.join(FAULTS)})"
    if mode not in MODES:
        return f"unknown mode {mode!r} (one of {', '.join(MODES)})"
    if hosts < 1 or ranks < hosts or ranks % hosts:
        return f"{ranks} ranks cannot be spread evenly over {hosts} host(s)"
    need_ranks, need_hosts = NEEDS.get(fault, (1, 1))
    if ranks < need_ranks or hosts < need_hosts:
        return f"fault {fault!r} needs at least {need_ranks} ranks on {need_hosts} host(s)"
    return None


def write_job(out: Path, ranks: int, hosts: int, fault: str, total_bytes: int, seed: int = 7, torch: str = "2.4",
              nccl: str = "2.21", log_dir: bool = False, tee: bool = False, mode: str = "sparse") -> Path:
    problem = check_job(ranks, hosts, fault, mode)
    if problem:
        raise ValueError(problem)
    per_rank = total_bytes // max(ranks, 1)
    job = Job(ranks, hosts, fault, seed, per_rank, torch, nccl, mode)
    for hi in range(hosts):
        if fault == "missing_node" and hi == job.bad_host:
            continue
        host_dir = out / job.host(hi)
        host_dir.mkdir(parents=True, exist_ok=True)
        late = timedelta(minutes=5) if (fault == "straggler" and hi == job.bad_host) else timedelta(0)
        _write_node_output(job, hi, host_dir, late, log_dir, tee)
        (host_dir / "dmesg.txt").write_text(f.MARK + "\n".join(_dmesg(job, hi)) + "\n")
        for rank in range(hi * job.local, (hi + 1) * job.local):
            _write_rank_nccl(job, rank, out, per_rank)
    category, culprit_ranks, culprit_hosts = job.expected()
    (out / "expected.toml").write_text(
        f'{f.MARK}scenario = "synth_{fault}_{ranks}r"\nprovoked = "{fault} injected by bench/synth.py"\n'
        f'category = "{category}"\nculprit_ranks = {culprit_ranks}\nculprit_hosts = {culprit_hosts!r}\n'
        f'healthy = {str(fault == "none").lower()}\nsynthetic = true\ntorch_format = "{torch}"\n'
        f'nccl_format = "{nccl}"\nlog_dir = {str(log_dir).lower()}\ntee = {str(tee).lower()}\n'.replace("'", '"'))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("--ranks", type=int, default=8)
    ap.add_argument("--hosts", type=int, default=2)
    ap.add_argument("--fault", choices=FAULTS, default="xid79")
    ap.add_argument("--bytes", default="1M", help="total size, e.g. 1G")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--torch", choices=f.TORCH, default="2.4", help="PyTorch format generation (first version of it)")
    ap.add_argument("--nccl", choices=f.NCCL, default="2.21", help="NCCL format generation (first version of it)")
    ap.add_argument("--log-dir", action="store_true", help="workers' output in torchrun --log-dir trees")
    ap.add_argument("--mode", choices=MODES, default="sparse", help="coll: COLL lines on three communicators per "
                    "rank; transport: channel storms from many communicator inits (both with progress lines)")
    ap.add_argument("--tee", action="store_true", help="workers' output also on the console, as torchrun --tee 3 shows "
                    "it ([default<local_rank>]: before each line)")
    a = ap.parse_args()
    problem = check_job(a.ranks, a.hosts, a.fault, a.mode)
    if problem:
        ap.error(problem)
    write_job(a.out, a.ranks, a.hosts, a.fault, _size(a.bytes), a.seed, a.torch, a.nccl, a.log_dir, a.tee, a.mode)


if __name__ == "__main__":
    main()
