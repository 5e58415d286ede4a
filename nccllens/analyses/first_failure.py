"""The earliest fatal event across all ranks and nodes, with an honest word about clock uncertainty."""

from __future__ import annotations

import polars as pl

from nccllens.analyses.common import PerLang, make_finding, spec
from nccllens.events import earliest_first
from nccllens.report.model import Finding
from nccllens.timeline import clock_notes

# Lines a launcher or a peer prints because something else failed first: never "the first failure".
CONSEQUENCE_KINDS = ("torchrun.failure", "torchrun.root_cause", "torchrun.worker_failed", "torchrun.sigterm_sent",
                     "torchrun.signal_received", "torchrun.state", "torch.taking_down", "torch.dump",
                     "nccl.backtrace", "nccl.teardown")
CLOSE_SECONDS = 2.0  # two first events closer than this on different hosts: order not certain


def first_failure(events: pl.DataFrame, lang: str) -> list[Finding]:
    # the order of the fatal events on four columns only (sorting them whole copied every column)
    order = (events.lazy().with_row_index("_row")
             .filter(pl.col("level").is_in(["error", "critical"]) & pl.col("ts").is_not_null()
                     & ~pl.col("kind").is_in(CONSEQUENCE_KINDS))
             .sort([*earliest_first(), pl.col("_row")]).select("_row", "host").collect())
    if not order.height:
        return []
    first = events.row(order["_row"][0], named=True)
    fatal_head = events[order["_row"][:1]]
    later = order.filter(pl.col("host") != first["host"]).head(1) if first["host"] else order.head(0)
    runner_up = events[later["_row"]]
    notes = {lg: clock_notes(events, lg) for lg in ("en", "zh")}  # each language's text says them in its own
    certain = PerLang(en="yes", zh="是")
    if runner_up.height:
        gap = (runner_up["ts"][0] - first["ts"]).total_seconds()
        if gap < CLOSE_SECONDS:
            certain = PerLang(en="no", zh="否")
            notes["zh"].insert(0, f"{runner_up['host'][0]} 上的下一条错误仅晚 {gap:.1f} 秒")
            notes["en"].insert(0, f"the next error, on {runner_up['host'][0]}, is only {gap:.1f} s later")
    ranks = [first["rank"]] if first["rank"] is not None else []
    hosts = [first["host"]] if first["host"] else []
    evidence = pl.concat([fatal_head, runner_up]) if runner_up.height else fatal_head
    by_kind = spec("AN-FIRST-FAILURE").get("by_kind", {})
    category = by_kind.get(first["kind"]) or by_kind.get((first["family"] or "").split(".")[0])
    return [make_finding("AN-FIRST-FAILURE", lang, evidence, ranks=ranks, hosts=hosts, first_seen=first["ts"],
                         category=category,
                         what=_what(first), where=_where(first), certain=certain,
                         notes=PerLang({lg: ("；" if lg == "zh" else "; ").join(n) if n else ("无" if lg == "zh" else "none")
                                        for lg, n in notes.items()}))]


def _what(row: dict) -> str:
    """The error as its line says it (shortened), not the event kind."""
    text = " ".join(str(row.get("message") or row.get("raw") or "").split())
    return text if len(text) <= 90 else text[:87] + "..."


def _where(row: dict) -> PerLang:
    host, rank, file = row.get("host"), row.get("rank"), str(row.get("file") or "")
    en = ", ".join(x for x in (host, f"rank {rank}" if rank is not None else None) if x)
    zh = en
    if not en:
        en, zh = f"the node that wrote {file}", f"写出 {file} 的节点"
    return PerLang(en=en, zh=zh)
