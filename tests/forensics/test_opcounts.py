"""Forensics on the dense families' summaries: opCounts per communicator, progress per rank, transports per host.

Synthetic logs: every line is built from NCCL's verbatim format strings (shared/reference/nccl_logs.md §2:
``comm %p rank %d nranks %d cudaDev %d nvmlDev %d busId %lx commId 0x%llx - Init COMPLETE``, ``%s: opCount %lx
sendbuff %p recvbuff %p count %zu datatype %d op %d root %d comm %p [nranks=%d] stream %p``, ``Channel %02d/%d :
%d[%lx] -> %d[%lx] [send] via NET/%s/%d``) or from a training script's ``print(f"step {n} loss {x}")``.
"""

from __future__ import annotations

from pathlib import Path

import nccllens

COMM_ID = "0x5ae77eb5ea4ec1ee"


def _host(rank: int) -> str:
    return f"gpu-node-{rank // 2:03d}"


def _nccl_file(root: Path, rank: int, n: int, last: int, op_at_last: str = "AllReduce", via: str = "NET/IB/0/GDRDMA",
               tail: list[str] = ()) -> None:
    host, pid = _host(rank), 40000 + rank
    pre = f"{host}:{pid}:{pid} [{rank % 2}] NCCL INFO "
    comm = f"0x55d0c8{rank:04x}0"
    lines = ["synthetic: built from NCCL format strings",
             pre + f"comm {comm} rank {rank} nranks {n} cudaDev {rank % 2} nvmlDev {rank % 2} busId 1b000 "
                   f"commId {COMM_ID} - Init START"]
    lines += [pre + f"Channel {ch:02d}/0 : {rank}[{rank % 2}] -> {(rank + 1) % n}[{(rank + 1) % 2}] [send] via {via}"
              for ch in range(4)]
    lines.append(pre + f"comm {comm} rank {rank} nranks {n} cudaDev {rank % 2} nvmlDev {rank % 2} busId 1b000 "
                       f"commId {COMM_ID} - Init COMPLETE")
    for op_count in range(1, last + 1):
        op = op_at_last if op_count == last else "AllReduce"
        lines.append(pre + f"{op}: opCount {op_count:x} sendbuff 0x7f3a2c000000 recvbuff 0x7f3a2c000000 count 262144 "
                           f"datatype 7 op 0 root 0 comm {comm} [nranks={n}] stream 0x55d0c9a1b2c0")
    lines += list(tail)
    folder = root / host
    folder.mkdir(exist_ok=True)
    (folder / f"nccl.{host}.{pid}.log").write_text("\n".join(lines) + "\n")


def _finding(report, rule: str):
    return next((f for f in report.findings if f.rule == rule), None)


def test_one_rank_one_opcount_behind_whose_log_ends_is_the_culprit(tmp_path):
    for rank in range(8):
        _nccl_file(tmp_path, rank, 8, 300 if rank != 5 else 299)
    report = nccllens.analyze(str(tmp_path))
    f = _finding(report, "AN-OPCOUNT-BEHIND")
    assert f is not None and f.ranks == [5] and f.hosts == ["gpu-node-002"]
    assert f.category == "peer_exited" and "12b" in f.title and "12c" in f.title
    assert report.findings[0].rule == "AN-OPCOUNT-BEHIND"
    assert any(e.file.endswith("nccl.gpu-node-002.40005.log") and e.rank == 5 for e in f.evidence)


def test_a_rank_behind_that_went_on_is_a_straggler(tmp_path):
    for rank in range(4):
        tail = [f"gpu-node-{rank // 2:03d}:{40000 + rank}:{40000 + rank} [0] NCCL INFO Proxy thread waiting"] * 3
        _nccl_file(tmp_path, rank, 4, 50 if rank != 0 else 48, tail=tail if rank == 0 else ())
    f = _finding(nccllens.analyze(str(tmp_path)), "AN-OPCOUNT-BEHIND")
    assert f is not None and f.ranks == [0] and f.category == "straggler"


def test_a_different_op_at_the_same_opcount_is_divergence_of_the_minority(tmp_path):
    for rank in range(4):
        _nccl_file(tmp_path, rank, 4, 40, op_at_last="Broadcast" if rank == 3 else "AllReduce")
    report = nccllens.analyze(str(tmp_path))
    f = _finding(report, "AN-OPCOUNT-DIVERGENCE")
    assert f is not None and f.ranks == [3] and f.category == "rank_divergence"
    assert "Broadcast" in f.summary and _finding(report, "AN-OPCOUNT-BEHIND") is None


def test_healthy_communicator_gives_no_opcount_finding(tmp_path):
    for rank in range(4):
        _nccl_file(tmp_path, rank, 4, 40)
    report = nccllens.analyze(str(tmp_path))
    assert not {f.rule for f in report.findings} & {"AN-OPCOUNT-BEHIND", "AN-OPCOUNT-DIVERGENCE",
                                                    "AN-TRANSPORT-FALLBACK", "AN-PROGRESS-STOPPED"}


def test_the_rank_whose_progress_stopped_first(tmp_path):
    lines = ["synthetic: a training script's own prints, as torchrun --tee shows them"]
    for step in range(10, 510, 10):
        lines += [f"[rank{r}]: step {step} loss {2.0 + 10.0 / step:.4f}" for r in range(4) if r != 2 or step <= 300]
    (tmp_path / "console.log").write_text("\n".join(lines) + "\n")
    f = _finding(nccllens.analyze(str(tmp_path)), "AN-PROGRESS-STOPPED")
    assert f is not None and f.ranks == [2] and "300" in f.title and "500" in f.title


def test_socket_transport_on_one_host_while_others_use_ib(tmp_path):
    for rank in range(6):
        _nccl_file(tmp_path, rank, 6, 20, via="NET/Socket/0" if rank // 2 == 1 else "NET/IB/0/GDRDMA")
    f = _finding(nccllens.analyze(str(tmp_path)), "AN-TRANSPORT-FALLBACK")
    assert f is not None and f.hosts == ["gpu-node-001"] and f.category == "ib_fallback"
    assert "gpu-node-000=IB" in f.title and "gpu-node-001=Socket" in f.title


def test_without_ranks_the_divergent_process_is_named_by_host_and_pid(tmp_path):
    # https://github.com/NVIDIA/nccl/issues/147: the maintainer's grep of every process's COLL log at opCount 0
    # (fixtures/public/nccl_ddp_first_broadcast_count_mismatch_rank0_8gpu); no line states a rank, and "[dev]"
    # is a CUDA device, never a rank: the odd process is named by what the lines do state
    case = Path(__file__).resolve().parents[2] / "fixtures/public/nccl_ddp_first_broadcast_count_mismatch_rank0_8gpu"
    (tmp_path / "nccl_coll.log").write_bytes((case / "nccl_coll.log").read_bytes())
    report = nccllens.analyze(str(tmp_path))
    f = report.findings[0]
    assert f.rule == "AN-OPCOUNT-DIVERGENCE" and f.category == "rank_divergence"
    assert f.ranks == [] and f.hosts == ["learnfair062"]
    assert f.title.startswith("Process(es) learnfair062:32615 issued") and "count 25503912 datatype 6" in f.summary
    assert "?" not in f.title
