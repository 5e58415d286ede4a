"""Synthetic multi-rank scenarios run through the whole pipeline (files on disk → analyze)."""

from __future__ import annotations

from pathlib import Path

import nccllens
from nccllens.report.rank_table import render_ranks

# synthetic: built from `[Rank {rank}] Watchdog caught collective operation timeout: WorkNCCL(SeqNum={seq},
# OpType={op}, NumelIn={n}, NumelOut={m}, Timeout(ms)={t}) ran for {elapsed} milliseconds before timing out.`
# with the c10 header `[E{MMDD} {hh:mm:ss.ns} ProcessGroupNCCL.cpp:607] ` and torchrun's `[rank{r}]:` tee prefix,
# torch 2.4 (shared/reference/pytorch_c10d.md §2.1-2.2)
WATCHDOG = ("[rank{r}]:[E1003 18:37:{s:02d}.832146912 ProcessGroupNCCL.cpp:607] [Rank {r}] Watchdog caught collective "
            "operation timeout: WorkNCCL(SeqNum={seq}, OpType={op}, NumelIn=1, NumelOut=1, Timeout(ms)=1800000) ran "
            "for 1800017 milliseconds before timing out.")
# synthetic: built from `{host}:{pid}:{tid} [{dev}] NCCL INFO ncclCommInitRank comm {comm} rank {rank} nranks {n}
# cudaDev {dev} nvmlDev {dev} busId {bus} commId {id} - Init COMPLETE`, NCCL 2.21 (shared/reference/nccl_logs.md)
INIT = ("{host}:{pid}:{pid} [{d}] NCCL INFO ncclCommInitRank comm 0x55d0 rank {r} nranks {n} cudaDev {d} nvmlDev {d} "
        "busId 3b000 commId 0xabcdef0123 - Init COMPLETE")
# synthetic: built from `NVRM: Xid (PCI:{pci}): {xid}, pid={pid}, name={name}, {text}` with a dmesg -T prefix,
# driver 535 (shared/reference/dmesg_xid.md)
XID = "[Sat Oct  3 18:06:58 2026] NVRM: Xid (PCI:0000:3b:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus."


def _write(root: Path, name: str, lines: list[str]) -> None:
    path = root / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def _node_files(root: Path, nodes: int, per_node: int, *, skip_ranks=(), seq=6463, op="ALLREDUCE",
                odd=None) -> None:
    for node in range(nodes):
        host = f"gpu-node-{node:02d}"
        lines = []
        for d in range(per_node):
            r = node * per_node + d
            lines.append(INIT.format(host=host, pid=1000 + r, d=d, r=r, n=nodes * per_node))
        for d in range(per_node):
            r = node * per_node + d
            if r in skip_ranks:
                continue
            this_op = odd[1] if odd and r == odd[0] else op
            lines.append(WATCHDOG.format(r=r, s=1 + d, seq=seq, op=this_op))
        _write(root, f"{host}/train.log", lines)


def test_missing_rank_among_64(tmp_path):
    _node_files(tmp_path, 8, 8, skip_ranks={37})
    report = nccllens.analyze(str(tmp_path))
    top = report.findings[0]
    assert report.verdict.category == "rank_divergence"
    assert top.rule == "AN-COLLECTIVE-ABSENT" and top.ranks == [37] and top.hosts == ["gpu-node-04"]
    assert "6463" in top.title
    symptoms = [f for f in report.findings if f.category == "collective_timeout"]
    assert symptoms and all(f.explained_by == top.id for f in symptoms)
    status = {s.rank: s.state for s in report.ranks}
    assert status[37] != "timed_out" and status[0] == "timed_out"
    table = render_ranks(report)
    assert "\n0-7 " in table and "\n32-36 " in table and "\n38-39 " in table  # grouped per node and state


def test_divergence_at_one_seqnum(tmp_path):
    _node_files(tmp_path, 2, 4, odd=(5, "BROADCAST"))
    report = nccllens.analyze(str(tmp_path))
    top = report.findings[0]
    assert top.category == "rank_divergence" and top.ranks == [5] and top.hosts == ["gpu-node-01"]
    assert "BROADCAST" in top.summary or "BROADCAST" in top.title


def test_xid_on_one_node_explains_timeouts_everywhere(tmp_path):
    _node_files(tmp_path, 8, 8, skip_ranks=set(range(56, 64)))
    _write(tmp_path, "gpu-node-07/dmesg.txt", [XID])
    report = nccllens.analyze(str(tmp_path))
    top = report.findings[0]
    assert report.verdict.category == "gpu_hardware"
    assert top.category == "gpu_hardware" and top.hosts == ["gpu-node-07"]
    absent = [f for f in report.findings if f.rule == "AN-COLLECTIVE-ABSENT"]
    assert absent and absent[0].explained_by == top.id


# synthetic: built from the torch logging header `{L}{MMDD} {hh:mm:ss.us} {pid} {file}:{line}] ` and the real
# 2.13 message `Using nproc_per_node=2.` (fixtures/sigkill_one_rank/node-a/console.log line 1)
START = "I1122 03:{m:02d}:{s:02d}.702000 8366 torch/distributed/run.py:747] Using nproc_per_node=8."


def test_straggler_node(tmp_path):
    for node in range(4):
        minute, second = (27, 40) if node == 3 else (26, 1 + node)
        _write(tmp_path, f"node-{node}/console.log", [START.format(m=minute, s=second)])
    report = nccllens.analyze(str(tmp_path))
    late = [f for f in report.findings if f.rule == "AN-STRAGGLER"]
    assert len(late) == 1 and late[0].hosts == ["node-3"] and late[0].category == "straggler"
    assert report.verdict.category == "straggler"
