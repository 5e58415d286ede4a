"""Flight-recorder dumps compared across ranks: who never reached a collective, who ran a different one,
whose dump is missing; and the text report of PyTorch's own analyser (``torchfrtrace`` / ``fr_trace``).

Works on whatever dumps exist, on JSON and pickle twins of the same dump (deduplicated), and on gloo
dumps whose ``pg_config`` is empty (groups come from the entries themselves).

- Divergence is a different op, size or dtype at the same collective (``mismatched``).
- A rank whose last entry is an earlier collective, completed, with nothing different at the collective
  the others are in, did not take another path: it is late (a straggler), busy somewhere else.
- Gloo records a timed-out collective as completed (its ``pg_status`` and its entries' states say so),
  and a rank whose collective timed out goes on to the next: gloo dumps cannot tell who is ahead, so a
  rank behind in a gloo dump is reported with that caveat and low confidence.
- A member of a group (``pg_config``, else the stated world size) that left no dump is named.
"""

from __future__ import annotations

import polars as pl

from nccllens.analyses.common import NOT_STATED, UNNAMED_OP, hosts_of, majority, make_finding, rank_list
from nccllens.analyses.reads import reads
from nccllens.report.model import Finding

DONE = ("completed",)


def _entries(events: pl.DataFrame) -> pl.DataFrame:
    return (events.filter((pl.col("kind") == "flight.entry") & (pl.col("key").fill_null("collective") == "collective")
                          & pl.col("rank").is_not_null() & pl.col("seq").is_not_null())
            .with_columns(pl.col("pg").cast(pl.String).fill_null("?").alias("pg"),
                          pl.col("detail").fill_null("").str.split("\n").list.first().alias("sizes"),
                          pl.col("detail").fill_null("").str.split("\n").list.slice(1).list.join(" <- ").alias("frames"),
                          pl.col("message").fill_null("").str.starts_with("gloo:").alias("gloo"))
            .with_columns((pl.col("frames") == "").alias("_bare"))
            .sort(["rank", "pg", "seq", "_bare", "file", "line"])  # of a pickle and its JSON twin, the one with frames
            .unique(["rank", "pg", "seq"], keep="first", maintain_order=True).drop("_bare"))


def _frames_text(row_frames: str | None) -> str:
    return row_frames if row_frames else "(no frames recorded)"


@reads("flight.entry")
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
        tails = (group.filter(pl.col("rank").is_in(behind)).sort(["rank", "seq"])
                 .unique("rank", keep="last", maintain_order=True))
        gloo = bool(group["gloo"].any())
        # late, not diverged: each behind rank finished its last collective, and that collective is the same
        # op and size on the ranks that went further (nothing different where they parted)
        same = True
        for seq, op, sizes in tails.select("seq", "op", "sizes").iter_rows():
            others = group.filter((pl.col("seq") == seq) & ~pl.col("rank").is_in(behind))
            if others.height and ((others["op"].cast(pl.String) != str(op)).any() or (others["sizes"] != sizes).any()):
                same = False
        completed = bool(tails["value"].is_in(DONE).all())
        late = same and completed and not gloo
        odd = tails.head(1).row(0, named=True)
        top_row = reached.row(0, named=True)
        evidence = pl.concat([reached.head(2), tails]).drop("sizes", "frames", "gloo")
        rule = "AN-FLIGHT-GLOO-BEHIND" if gloo else ("AN-FLIGHT-LATE" if late else "AN-FLIGHT-MISSING")
        out.append(make_finding(
            rule, lang, evidence, ranks=behind, hosts=hosts_of(behind, rank_hosts), pg=pg, seq=top,
            op=top_row["op"] or UNNAMED_OP, reached=len(last) - len(behind),
            stopped=", ".join(f"{r}:{last[r]}" for r in behind[:16]),
            odd_frames=f"rank {odd['rank']} last at {odd['seq']}{_named(odd['op'], odd['value'])}: "
                       f"{_frames_text(odd['frames'])}",
            top_frames=f"{top_row['op'] or 'seq'} at {top}: {_frames_text(top_row['frames'])}"))
    return out


def _named(*parts) -> str:
    """`` (op, state)`` of what a dump entry states, nothing when it states neither."""
    known = [str(p) for p in parts if p]
    return f" ({', '.join(known)})" if known else ""


@reads("flight.entry")
def mismatched(events: pl.DataFrame, rank_hosts: dict[int, str], lang: str) -> list[Finding]:
    entries = _entries(events)
    out = []
    for (pg,), group in entries.group_by(["pg"], maintain_order=True):
        for (seq,), at in group.sort("seq").group_by(["seq"], maintain_order=True):
            if at.height < 2:
                continue
            ops = {r: str(o) for r, o in at.select("rank", "op").iter_rows()}
            sizes = dict(at.select("rank", "sizes").iter_rows())
            what, values = ("op", ops) if len(set(ops.values())) > 1 else ("size", sizes)
            if len(set(values.values())) < 2:
                continue
            top, odd = majority(values)
            ranks = odd if top is not None else sorted(values)
            frames = dict(at.select("rank", "frames").iter_rows())
            shown = ", ".join(f"rank {r}: {ops[r]} {sizes[r]}".strip() for r in sorted(values)[:8])
            keep = [r for r in sorted(values) if r not in ranks][:1] + ranks[:3]
            where = "; ".join(f"rank {r} ({ops[r]}): {_frames_text(frames.get(r))}" for r in keep)
            out.append(make_finding(
                "AN-FLIGHT-MISMATCH", lang, at.drop("sizes", "frames", "gloo"), ranks=ranks,
                hosts=hosts_of(ranks, rank_hosts), pg=pg, seq=seq, what=what, shown=shown, frames=where,
                confidence=0.85 if top is not None else 0.6))
            break  # later entries of this group follow from the first mismatch
    return out


@reads("flight.entry", "flight.pg_status")
def missing_dumps(events: pl.DataFrame, world: int | None, rank_hosts: dict[int, str], dead: set[int],
                  lang: str) -> list[Finding]:
    """Members of a recorded group without a dump: they never reached the point where the others dumped
    (dead, or busy elsewhere). Members: ``pg_config``; for gloo (which writes none) the stated world size,
    else the ranks any log shows and those below the highest dumped rank (which exist for sure)."""
    flight = events.filter(pl.col("family") == "flight")
    dumps = flight.filter(pl.col("kind").is_in(["flight.entry", "flight.pg_status"]) & pl.col("rank").is_not_null())
    if not dumps.height:
        return []
    dumped = set(dumps["rank"].to_list())
    members: set[int] = set()
    for text in flight.filter(pl.col("kind") == "flight.pg_config")["detail"].drop_nulls().to_list():
        members |= {int(r) for r in text.split(",") if r.strip().isdigit()}
    if not members:  # gloo writes no pg_config: the stated world, else every rank the logs show and the gaps
        seen = set(events["rank"].drop_nulls().to_list())
        members = set(range(world)) if world else seen | set(range(max(dumped) + 1))
    absent = sorted(members - dumped)
    if not absent or len(absent) >= len(members):
        return []
    gone = [r for r in absent if r in dead]
    evidence = dumps.sort(["rank", "file", "line"]).unique("rank", keep="last", maintain_order=True)
    return [make_finding(
        "AN-FLIGHT-NO-DUMP", lang, evidence, ranks=absent, hosts=hosts_of(absent, rank_hosts),
        category="peer_exited" if gone and len(gone) == len(absent) else None,
        missing=rank_list(absent), dumped=rank_list(sorted(dumped)), members=len(members))]


@reads("flight.analysis")
def analyser_report(events: pl.DataFrame, rank_hosts: dict[int, str], lang: str) -> list[Finding]:
    """``torchfrtrace`` / ``fr_trace`` output: the analyser already matched the dumps; use what it found."""
    rows = events.filter(pl.col("kind") == "flight.analysis")
    out = []
    for what in ("missing_ranks", "errors", "size_mismatch", "missing_dumps"):
        mine = rows.filter(pl.col("value") == what)
        if not mine.height:
            continue
        first = mine.sort(["file", "line"]).row(0, named=True)
        ranks = sorted({int(r) for k in mine["key"].drop_nulls().to_list() for r in k.split(",") if r.strip().isdigit()})
        detail = [x for x in (first["detail"] or "").split("\n") if " at " in x]
        own = [x for x in detail if "/torch/distributed/" not in x]  # the job's frames say which code path
        frames = " <- ".join(own or detail) or "(no frames shown)"
        out.append(make_finding(
            "AN-FRTRACE-" + what.upper().replace("_", "-"), lang, mine, ranks=ranks,
            hosts=hosts_of(ranks, rank_hosts), seq=first["seq"] if first["seq"] is not None else NOT_STATED,
            op=first["op"] or UNNAMED_OP, pg=first["pg"] or NOT_STATED, world=first["nranks"] or NOT_STATED,
            missing=rank_list(ranks), frames=frames, blocks=mine.height, text=first["message"]))
    return out
