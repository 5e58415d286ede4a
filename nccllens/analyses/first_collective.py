"""Hangs told by where a job stopped: every rank of a one-node job stuck in its very first collective with no error
(GPU peer-to-peer suspected), and a job stopped at its wall-clock limit by a harness or scheduler."""

from __future__ import annotations

import polars as pl

from nccllens import lazy_regex
from nccllens.analyses.common import NOT_STATED, PerLang, make_finding, rank_list
from nccllens.analyses.one_node import intra_node_links_cover
from nccllens.analyses.reads import reads
from nccllens.report.model import Finding

CONSEQUENCE = lazy_regex.compile(r"(?i)time[ds]?[ _-]?out|watchdog|taking the entire process down|DistBackendError|"
                         r"SIGABRT|signal 6|exit ?code|ChildFailedError|terminate called|Aborted")


@reads("torch.watchdog_timeout", "progress.bench*")
def first_collective_hang(events: pl.DataFrame, rank_hosts: dict[int, str], lang: str, world: int | None = None,
                          summaries: pl.DataFrame | None = None) -> list[Finding]:
    """Every rank of a one-node job stuck in the very first collective, with no error but the timeouts (or
    an nccl-tests run whose header never got a result row): GPU peer-to-peer that hangs (ACS, IOMMU, a
    PCIe switch without P2P) is the usual cause. A suspect, at low confidence: the experiment decides."""
    hosts = [str(h) for h in events["host"].drop_nulls().unique().to_list()]
    members = events.filter(pl.col("kind") == "progress.bench_rank")
    one_process = bool(members.height) and members["pid"].is_null().all() and not hosts  # NCCL 1.x tests
    # where no line names a host, NCCL's own connections may show one node: P2P/shared-memory links joining every rank
    linked = not hosts and intra_node_links_cover(summaries, world)
    if len(hosts) != 1 and not one_process and not linked:
        return []  # one node, and the logs must say which: an excerpt without hosts may span many
    errors = events.filter(pl.col("level").is_in(["error", "critical"]))
    waits = events.filter(pl.col("kind") == "torch.watchdog_timeout")
    bench = events.filter(pl.col("kind").cast(pl.String).str.starts_with("progress.bench"))
    others = errors.filter(~pl.col("message").fill_null("").str.contains(CONSEQUENCE.pattern))
    if others.height:
        return []
    if waits.height:
        if waits["seq"].is_null().any() or waits["seq"].max() > 1 or waits["rank"].n_unique() < 2:
            return []
        if set(events["rank"].drop_nulls().to_list()) - set(waits["rank"].to_list()):
            return []  # a rank that is not waiting: it is the story (absent, busy or dead), not the GPUs'
        if events.filter(pl.col("kind") == "progress.bar").height:
            return []
        op = waits["op"].drop_nulls().first()
        evidence = waits
        stuck = PerLang(en=f"collective 1 ({op})" if op else "collective 1",
                        zh=f"第 1 次集合通信（{op}）" if op else "第 1 次集合通信")
    elif bench.height and not bench.filter(pl.col("kind").is_in(["progress.bench_row", "progress.bench_done"])).height:
        # the column header comes once the communicators are up: a header without a row is the first
        # size's collective; without the header, NCCL lines must show init got that far (a paste that stops
        # during init looks the same whether it hung there or was cut: the hang is the reading a ticket needs)
        table = bench.filter(pl.col("kind") == "progress.bench_table")
        nccl = events.filter(pl.col("family") == "nccl")
        if errors.height or not (table.height or nccl.height):
            return []
        evidence = pl.concat([bench, nccl.sort(["file", "line"]).tail(2)]) if not table.height else bench
        stuck = PerLang(en="the first nccl-tests size", zh="nccl-tests 的第一个数据量")
    else:
        return []
    ranks = sorted({int(r) for r in evidence["rank"].drop_nulls().to_list()})
    unnamed = (PerLang(en="the job's node", zh="作业所在节点") if waits.height
               else PerLang(en="the test's node", zh="运行测试的节点"))
    node = hosts[0] if hosts else unnamed
    return [make_finding("AN-FIRST-COLLECTIVE-HANG", lang, evidence, ranks=(), hosts=hosts,
                         stuck=stuck, node=node, waiting=rank_list(ranks) if ranks else PerLang(en="all", zh="所有"))]


@reads("harness.wallclock")
def wallclock_kill(events: pl.DataFrame, lang: str) -> list[Finding]:
    """A harness or scheduler stopped the job at its time limit: never a healthy run. When ranks were
    already stuck (timeouts, a rank absent or busy), those findings explain the kill."""
    hits = events.filter(pl.col("kind") == "harness.wallclock")
    if not hits.height:
        return []
    first = hits.sort(["ts", "file", "line"], nulls_last=True).row(0, named=True)
    return [make_finding("AN-WALLCLOCK-KILL", lang, hits, hosts=hits["host"].drop_nulls().unique().to_list(),
                         by=first["value"] or NOT_STATED, limit=first["detail"] or NOT_STATED, text=first["message"])]
