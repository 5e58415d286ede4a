"""Reports built by hand for the renderer tests: what the analysis would hand the renderers.

Log lines are real unless marked synthetic:
- XID79: the "current" Xid format quoted in /work/shared/reference/dmesg_xid.md §2.1.
- WATCHDOG_RANK1: the 2.4-era real sample in /work/shared/reference/pytorch_c10d.md §2.2.
- WATCHDOG_RS_RANK0/4: https://github.com/hiyouga/LlamaFactory/issues/6269
  (fixtures/public/pytorch_watchdog/torch2.4_reduce_scatter_pg1.log).
- NCCL_BANNER: https://github.com/NVIDIA/nccl-tests/issues/293 (fixtures/public/healthy_nccl_init_two_nodes).
"""

from __future__ import annotations

from nccllens.report.model import Evidence, Finding, InputFile, JobModel, RankStatus, Report, Verdict

XID79 = "NVRM: Xid (PCI:0000:5d:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus."
WATCHDOG_RANK1 = (
    "[rank1]:[E1003 18:37:01.832146912 ProcessGroupNCCL.cpp:607] [Rank 1] Watchdog caught collective "
    "operation timeout: WorkNCCL(SeqNum=6463, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=1800000) "
    "ran for 1800017 milliseconds before timing out."
)
# synthetic: built from "[Rank {rank}] Watchdog caught collective operation timeout: {WorkNCCL(...)} ran for
# {elapsed_ms} milliseconds before timing out." with the 2.4 "[rank{r}]:[E%m%d ...] " prefix, torch 2.4
WATCHDOG_RANK0 = (
    "[rank0]:[E1003 18:37:01.832201311 ProcessGroupNCCL.cpp:607] [Rank 0] Watchdog caught collective "
    "operation timeout: WorkNCCL(SeqNum=6463, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=1800000) "
    "ran for 1800018 milliseconds before timing out."
)
WATCHDOG_RS_RANK0 = (
    "[rank0]:[E1206 18:44:12.715298746 ProcessGroupNCCL.cpp:607] [Rank 0] Watchdog caught collective operation "
    "timeout: WorkNCCL(SeqNum=7753, OpType=_REDUCE_SCATTER_BASE, NumelIn=544997376, NumelOut=68124672, "
    "Timeout(ms)=600000) ran for 600061 milliseconds before timing out."
)
WATCHDOG_RS_RANK4 = (
    "[rank4]:[E1206 18:44:12.755262105 ProcessGroupNCCL.cpp:607] [Rank 4] Watchdog caught collective operation "
    "timeout: WorkNCCL(SeqNum=7753, OpType=_REDUCE_SCATTER_BASE, NumelIn=544997376, NumelOut=68124672, "
    "Timeout(ms)=600000) ran for 600099 milliseconds before timing out."
)
NCCL_BANNER = "NCCL version 2.21.5+cuda12.4"

# hostile text (not a log line): what an attacker could put into a log that ends up in a report
HOSTILE_SCRIPT = "<script>document.title='pwned'</script>"
HOSTILE_IMG = "<img src=x onerror=\"document.title='pwned'\">"

XID_TITLE = "Xid 79: GPU has fallen off the bus on gpu-node-07"
XID_TITLE_ZH = "Xid 79：gpu-node-07 上的 GPU 掉卡（fallen off the bus）"
XID_REMEDIATION = ("1. Drain gpu-node-07 and reseat or replace the GPU at PCI 0000:5d:00.\n"
                   "2. Restart the job without that node.")
XID_REMEDIATION_ZH = "1. 将 gpu-node-07 下线，重新插拔或更换 PCI 0000:5d:00 上的 GPU。\n2. 去掉该节点后重启作业。"


def host_of(rank: int, per_host: int = 8, width: int = 2) -> str:
    return f"gpu-node-{rank // per_host:0{width}d}"


def xid_report(lang: str = "en", hostile: bool = False) -> Report:
    """Xid 79 on gpu-node-07 (rank 61) explains the watchdog timeouts of the 63 other ranks."""
    culprit = 61
    xid_text = XID79 + (f" {HOSTILE_SCRIPT} {HOSTILE_IMG}" if hostile else "")
    cause = Finding(
        id="F1", rule="NL-GPU-001", category="gpu_hardware", severity="critical", role="cause",
        confidence=0.93, title=XID_TITLE, remediation=XID_REMEDIATION,
        summary="The GPU stopped answering the driver; every collective it was part of hung.",
        ranks=[culprit], hosts=["gpu-node-07"], first_seen="2026-11-22T03:12:05",
        evidence=[Evidence("gpu-node-07/dmesg.txt", 4412, xid_text, None, "gpu-node-07", "2026-11-22T03:12:05")],
        explains=["F2"], count=1, references=["https://docs.nvidia.com/deploy/xid-errors/"],
        texts={"zh": {"title": XID_TITLE_ZH, "summary": "GPU 不再响应驱动；它参与的所有集合通信都卡住了。",
                      "remediation": XID_REMEDIATION_ZH}},
    )
    others = [r for r in range(64) if r != culprit]
    symptom = Finding(
        id="F2", rule="NL-TORCH-001", category="collective_timeout", severity="error", role="symptom",
        confidence=0.6, title="Watchdog timeout in ALLREDUCE SeqNum 6463 on 63 ranks",
        summary="Ranks waited 30 minutes in the same all-reduce.", remediation="Fix the cause above.",
        ranks=others, hosts=sorted({host_of(r) for r in others}), first_seen="2026-11-22T03:42:06",
        evidence=[Evidence("gpu-node-00/rank0.log", 812, WATCHDOG_RANK0, 0, "gpu-node-00", "2026-11-22T03:42:06"),
                  Evidence("gpu-node-00/rank1.log", 809, WATCHDOG_RANK1, 1, "gpu-node-00", "2026-11-22T03:42:06")],
        explained_by="F1", count=63,
        texts={"zh": {"title": "63 个 rank 在 ALLREDUCE SeqNum 6463 上 watchdog 超时", "summary": "",
                      "remediation": "先处理上面的根因。"}},
    )
    ranks = [RankStatus(rank=r, host=host_of(r), local_rank=r % 8, state="crashed" if r == culprit else "timed_out",
                        last_seq=6462 if r == culprit else 6463, last_op="ALLREDUCE",
                        first_error=None if r == culprit else (WATCHDOG_RANK1 if r == 1 else None),
                        first_error_ts=None if r != 1 else "2026-11-22T03:42:06") for r in range(64)]
    hosts = [f"gpu-node-{i:02d}" for i in range(8)]
    inputs = [InputFile(f"{h}/rank{r}.log", lines=900, events=12, kind="log", host=h, rank=r)
              for r in range(0, 64, 8) for h in [host_of(r)]]
    inputs += [InputFile("gpu-node-07/dmesg.txt", lines=5000, events=3, kind="dmesg", host="gpu-node-07"),
               InputFile("gpu-node-03/core.1234", skipped="binary file (core dump)"),
               InputFile("job.yaml", skipped="not a log: configuration")]
    return Report(
        verdict=Verdict("gpu_hardware", "GPU on gpu-node-07 fell off the bus (Xid 79)", 0.93, "F1",
                        texts={"zh": "gpu-node-07 上的 GPU 掉卡（Xid 79）"}),
        findings=[cause, symptom],
        job=JobModel(world_size=64, hosts=hosts, ranks_seen=list(range(64)),
                     rank_hosts={str(r): host_of(r) for r in range(64)}, versions={"nccl": ["2.21.5"]},
                     start="2026-11-22T01:02:03", end="2026-11-22T03:42:07"),
        ranks=ranks, inputs=inputs, lang=lang, version="0.1.0",
    )


def healthy_report(lang: str = "en") -> Report:
    info = Finding(id="F1", rule="NL-NCCL-100", category="nccl_internal", severity="info", role="context",
                   confidence=1.0, title="NCCL 2.21.5 on every rank", summary="", remediation="",
                   evidence=[Evidence("test1.log", 3, NCCL_BANNER, 0, "node-a")], count=1)
    ranks = [RankStatus(rank=r, host="node-a" if r < 8 else "node-b", state="finished") for r in range(16)]
    return Report(verdict=Verdict("none", "No failure found in the logs.", 1.0), findings=[info],
                  job=JobModel(world_size=16, hosts=["node-a", "node-b"]), ranks=ranks,
                  inputs=[InputFile("test1.log", 40, 5, kind="log", host="node-a"),
                          InputFile("test2.log", 38, 4, kind="log", host="node-b")], lang=lang, version="0.1.0")


def unknown_report(lang: str = "en") -> Report:
    """Only watchdog timeouts: the rank that stopped issuing collectives left no log."""
    symptom = Finding(
        id="F1", rule="NL-TORCH-001", category="collective_timeout", severity="error", role="symptom",
        confidence=0.4, title="Watchdog timeout in _REDUCE_SCATTER_BASE SeqNum 7753 on ranks 0,4",
        summary="", remediation="Collect the logs of every rank.", ranks=[0, 4], hosts=[],
        evidence=[Evidence("rank0.log", 1, WATCHDOG_RS_RANK0, 0), Evidence("rank4.log", 1, WATCHDOG_RS_RANK4, 4)],
        count=2)
    ranks = [RankStatus(rank=r, state="timed_out" if r in (0, 4) else "never_seen") for r in range(8)]
    return Report(verdict=Verdict("unknown", "only watchdog timeouts: the rank that stopped issuing collectives "
                                  "left no log (no logs from ranks 1-3,5-7)", 0.3),
                  findings=[symptom], ranks=ranks, job=JobModel(world_size=8),
                  inputs=[InputFile("rank0.log", 10, 2), InputFile("rank4.log", 10, 2)], lang=lang)


def big_report(lang: str = "en") -> Report:
    """4,096 ranks on 512 hosts: rank 61's GPU on gpu-node-007 failed, the rest timed out; one host silent."""
    report = xid_report(lang)
    cause = report.findings[0]
    cause.hosts = ["gpu-node-007"]
    cause.title = cause.title.replace("gpu-node-07", "gpu-node-007")
    cause.texts["zh"]["title"] = cause.texts["zh"]["title"].replace("gpu-node-07", "gpu-node-007")
    cause.evidence[0].host = "gpu-node-007"
    report.findings[1].ranks = [r for r in range(4096) if r != 61]
    report.findings[1].hosts = [host_of(r, width=3) for r in range(0, 4096, 8)]
    silent = range(8 * 300, 8 * 301)
    report.ranks = [RankStatus(rank=r, host=host_of(r, width=3), local_rank=r % 8, last_seq=6463,
                               state="crashed" if r == 61 else "silent" if r in silent else "timed_out")
                    for r in range(4096)]
    report.job = JobModel(world_size=4096, hosts=[host_of(r, width=3) for r in range(0, 4096, 8)],
                          rank_hosts={str(r): host_of(r, width=3) for r in range(4096)})
    return report
