"""Ranks waiting for the main process: a traceback that stops in ``main_process_first``.

HF ``TrainingArguments.main_process_first`` and accelerate's ``main_process_first`` /
``local_main_process_first`` let the main process (rank 0, or local rank 0 of each node) do some work
alone (tokenising, mapping, downloading) while every other process waits in ``dist.barrier()``; the main
process joins the barrier only when its work is done. A traceback of a waiting process that ends in that
barrier (a store or collective timeout, a reset connection) therefore says where the job stood: the main
process was still at its work (a straggler), or it was gone (its peers lost it). The culprit is the main
process, not the ranks that printed the traceback. A traceback cut short (a paste that stops a frame or two in)
counts where its last frames were entering such a block (``with ...main_process_first(...)`` into the context
manager's ``__enter__``: a waiting process's barrier is all that runs there).
"""

from __future__ import annotations

import polars as pl

from nccllens.analyses.common import hosts_of, make_finding, rank_list
from nccllens.analyses.reads import reads
from nccllens.report.model import Finding

_WAIT_FRAME = r"\bin (?:local_)?main_process_first\b|(?m)^entering: (?:local_)?main_process_first$"
_LOCAL_FRAME = r"\bin local_main_process_first\b|(?m)^entering: local_main_process_first$"


def _main_rank(local: bool, hosts: list[str], rank_hosts: dict[int, str]) -> int | None:
    """Rank 0, or for a per-node wait the lowest rank of the waiting node where the logs place ranks."""
    if not local or len(set(rank_hosts.values())) <= 1:
        return 0
    on_node = sorted(r for r, h in rank_hosts.items() if h in hosts)
    return on_node[0] if on_node else None


@reads("python.traceback")
def waiting_for_main(events: pl.DataFrame, rank_hosts: dict[int, str], dead: set[int], lang: str) -> list[Finding]:
    waits = events.filter((pl.col("kind") == "python.traceback")
                          & pl.col("detail").cast(pl.String).fill_null("").str.contains(_WAIT_FRAME))
    if not waits.height:
        return []
    local = waits["detail"].cast(pl.String).str.contains(_LOCAL_FRAME).all()
    hosts = [str(h) for h in waits["host"].drop_nulls().unique().to_list()]
    main = _main_rank(local, hosts, rank_hosts)
    waiting = sorted({int(r) for r in waits["rank"].drop_nulls().to_list()} - ({main} if main is not None else set()))
    culprits = [main] if main is not None else []
    gone = main is not None and main in dead
    return [make_finding(
        "AN-MAIN-FIRST-WAIT", lang, waits, ranks=culprits,
        hosts=hosts_of(culprits, rank_hosts) if culprits else hosts,
        category="peer_exited" if gone else None,
        main=f"rank {main}" if main is not None else ("local rank 0" if local else "rank 0"),
        waiting=rank_list(waiting))]
