"""Flight-recorder dumps compared across ranks: who never reached a collective, who ran a different one.

Works on whatever dumps exist (a missing rank's dump is simply absent from the vote), on JSON and
pickle twins of the same dump (deduplicated), and on gloo dumps whose ``pg_config`` is empty
(groups come from the entries themselves).
"""

from __future__ import annotations

import polars as pl

from nccllens.analyses.common import hosts_of, majority, make_finding
from nccllens.report.model import Finding


def _entries(events: pl.DataFrame) -> pl.DataFrame:
    return (events.filter((pl.col("kind") == "flight.entry") & (pl.col("key").fill_null("collective") == "collective")
                          & pl.col("rank").is_not_null() & pl.col("seq").is_not_null())
            .with_columns(pl.col("pg").fill_null("?"))
            .sort(["rank", "pg", "seq", "file", "line"])
            .unique(["rank", "pg", "seq"], keep="first", maintain_order=True))


def not_reached(events: pl.DataFrame, rank_hosts: dict[int, str], lang: str) -> list[Finding]:
    entries = _entries(events)
    out = []
    for (pg,), group in entries.group_by(["pg"], maintain_order=True):
        last = dict(group.group_by("rank").agg(pl.col("seq").max()).iter_rows())
        if len(last) < 2:
            continue
        top = max(last.values())
        behind = sorted(r for r, s in last.items() if s < top)
        if not behind or len(behind) == len(last):
            continue
        reached = group.filter(pl.col("seq") == top)
        evidence = pl.concat([reached.head(2), group.filter(pl.col("rank").is_in(behind)).sort("seq").tail(1)])
        out.append(make_finding(
            "AN-FLIGHT-MISSING", lang, evidence, ranks=behind, hosts=hosts_of(behind, rank_hosts), pg=pg, seq=top,
            op=reached["op"][0] or "?", reached=len(last) - len(behind),
            stopped=", ".join(f"{r}:{last[r]}" for r in behind[:16])))
    return out


def mismatched(events: pl.DataFrame, rank_hosts: dict[int, str], lang: str) -> list[Finding]:
    entries = _entries(events)
    out = []
    for (pg,), group in entries.group_by(["pg"], maintain_order=True):
        for (seq,), at in group.sort("seq").group_by(["seq"], maintain_order=True):
            if at.height < 2:
                continue
            ops = dict(at.select("rank", "op").iter_rows())
            sizes = dict(at.select("rank", pl.col("detail").fill_null("")).iter_rows())
            what, values = ("op", ops) if len(set(ops.values())) > 1 else ("size", sizes)
            if len(set(values.values())) < 2:
                continue
            top, odd = majority(values)
            ranks = odd if top is not None else sorted(values)
            shown = ", ".join(f"rank {r}: {ops[r]} {sizes[r]}".strip() for r in sorted(values)[:8])
            out.append(make_finding(
                "AN-FLIGHT-MISMATCH", lang, at, ranks=ranks, hosts=hosts_of(ranks, rank_hosts), pg=pg, seq=seq,
                what=what, shown=shown, confidence=0.85 if top is not None else 0.6))
            break  # later entries of this group follow from the first mismatch
    return out
