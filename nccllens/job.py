"""The job model (world size, hosts, ranks, communicators, versions, attempts); per-rank status is
``nccllens.rank_status``.

Everything is derived from the event table with group-bys; Python only walks the per-rank
summary (one row per rank), never the events.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import polars as pl

from nccllens import lazy_regex
from nccllens.events import MAX_RANK
from nccllens.report.model import JobModel
from nccllens.timeline import normalize

_NUM = lazy_regex.compile(r"-?\d+")
_NODE_RANK = lazy_regex.compile(r"'rank'\s*:\s*'?(\d+)")


@dataclass
class WorldSize:
    """The job's world size, and what stated it."""

    size: int | None  # stated by the launcher, the rendezvous, WORLD_SIZE or NCCL (never by the ranks seen alone)
    source: str  # what stated it
    nnodes: int | None = None
    nproc_per_node: int | None = None
    node_ranks: dict[str, int] = field(default_factory=dict)  # host -> node rank (static rendezvous)
    seen: int | None = None  # the highest rank seen + 1: ranks 0..seen-1 exist, whether or not they were absent

    @property
    def at_least(self) -> int | None:
        """The size stated, else the ranks known to exist (0 to the highest rank seen)."""
        return self.size or self.seen


def _config(events: pl.DataFrame) -> dict[str, list[tuple[str | None, str]]]:
    rows = events.filter(pl.col("kind") == "torchrun.config").select("host", "key", "value")
    out: dict[str, list[tuple[str | None, str]]] = {}
    for host, key, value in rows.iter_rows():
        if key and value is not None:
            out.setdefault(key.strip().lower(), []).append((host, str(value)))
    return out


def _first_int(values: list[tuple[str | None, str]]) -> int | None:
    nums = [int(m.group(0)) for _, v in values for m in [_NUM.search(v)] if m and len(m.group(0)) <= 9]
    return max(nums) if nums else None


def world_size(events: pl.DataFrame) -> WorldSize:
    """The largest size a launcher, rendezvous, ``WORLD_SIZE`` or NCCL ``nranks`` states. The highest rank
    seen is no size: an excerpt of ranks 1 and 2 says nothing about a silent rank 0 (``seen`` keeps it)."""
    cfg = _config(events)
    nproc = _first_int(cfg.get("nproc_per_node", []))
    nnodes = _first_int(cfg.get("max_nodes", []) or cfg.get("nnodes", []))
    node_ranks = {}
    for key in ("rdzv_configs", "node_rank", "group_rank"):
        for host, value in cfg.get(key, []):
            m = _NODE_RANK.search(value) if key == "rdzv_configs" else _NUM.search(value)
            number = (m.group(1) if key == "rdzv_configs" else m.group(0)) if m else ""
            if host and number and len(number) <= 9:  # longer: a malformed line (and int() refuses 4,300 digits)
                node_ranks[host] = int(number)
    candidates: list[tuple[int, str]] = []
    if nproc and nnodes:
        candidates.append((nproc * nnodes, "torchrun nproc_per_node x nnodes"))
    for key in ("world_size", "global_world_size", "global_world_sizes"):
        if cfg.get(key):
            candidates.append((_first_int(cfg[key]) or 0, f"torchrun {key}"))
    env = events.filter((pl.col("key") == "WORLD_SIZE") & pl.col("value").str.contains(r"^\d+$"))
    if env.height:
        candidates.append((int(env["value"].cast(pl.Int64).max()), "WORLD_SIZE"))
    nccl = events.filter(pl.col("kind").is_in(["nccl.init_start", "nccl.init_complete"]))["nranks"].drop_nulls()
    if len(nccl):
        candidates.append((int(nccl.max()), "NCCL nranks"))
    stated = events.filter(~pl.col("kind").is_in(["nccl.init_start", "nccl.init_complete"]))["nranks"].drop_nulls()
    if len(stated):
        candidates.append((int(stated.max()), "stated size (nranks, world_size)"))
    ranks = events["rank"].drop_nulls()
    seen = int(ranks.max()) + 1 if len(ranks) else None
    candidates = [c for c in candidates if 0 < c[0] <= MAX_RANK]  # 2**31 ranks is a malformed line
    if not candidates:
        return WorldSize(None, "", nnodes, nproc, node_ranks, seen)
    best = max(candidates, key=lambda c: c[0])
    if seen and seen > best[0]:  # a sub-communicator's nranks: the ranks seen go further
        best = (seen, f"{best[1]} (ranks seen go further)")
    return WorldSize(best[0], best[1], nnodes, nproc, node_ranks, seen)


def _iso(value) -> str | None:
    return value.isoformat() if value is not None else None


def _versions(events: pl.DataFrame) -> dict[str, list[str]]:
    stated = events.filter(pl.col("version").is_not_null() & (pl.col("family") != "flight"))
    out: dict[str, set[str]] = {}
    for text in stated["version"].unique().to_list():
        what, _, value = text.partition(" ")
        if not value:
            continue
        out.setdefault(what, set()).add(value)
        if "+cuda" in value:
            out.setdefault("cuda", set()).add(value.split("+cuda", 1)[1])
    return {k: sorted(v) for k, v in sorted(out.items())}


def communicators(events: pl.DataFrame) -> list[dict]:
    init = events.filter(pl.col("kind").is_in(["nccl.init_start", "nccl.init_complete"])
                         & pl.col("comm_id").is_not_null())
    if not init.height:
        return []
    groups = (init.group_by("comm_id")
              .agg(pl.col("nranks").max(), pl.col("rank").drop_nulls().unique().sort().alias("ranks"),
                   pl.col("host").drop_nulls().unique().sort().alias("hosts"),
                   (pl.col("kind") == "nccl.init_complete").any().alias("complete"))
              .sort("comm_id"))
    return groups.to_dicts()


def _rendezvous_ranks(events: pl.DataFrame) -> dict[int, str]:
    """torchrun's rendezvous result lists the global ranks each agent (host) started."""
    rows = events.filter((pl.col("kind") == "torchrun.rendezvous") & pl.col("host").is_not_null()
                         & pl.col("detail").str.contains("global_ranks=", literal=True))
    out: dict[int, str] = {}
    for host, detail in rows.select("host", "detail").iter_rows():
        m = re.search(r"global_ranks=\[([\d, ]*)\]", detail)
        for r in re.findall(r"\d+", m[1]) if m else []:
            out.setdefault(int(r), host)
    return out


def rank_hosts(events: pl.DataFrame) -> dict[int, str]:
    out = _rendezvous_ranks(events)
    # lazily, so that only the two columns are read (a filter on the frame copies all of its columns)
    mode = (events.lazy().filter(pl.col("rank").is_not_null() & pl.col("host").is_not_null())
            .group_by("rank").agg(pl.col("host").mode().sort().first()).collect())
    out.update(dict(mode.iter_rows()))
    return dict(sorted(out.items()))


def build_job(events: pl.DataFrame, ws: WorldSize | None = None) -> JobModel:
    """The job model of ``events``; ``ws``: ``world_size(events)`` when the caller has it already."""
    events = normalize(events)
    ws = world_size(events) if ws is None else ws
    ts = events["ts"].drop_nulls()
    attempts = events["attempt"].drop_nulls()
    restarts = events.filter(pl.col("kind") == "torchrun.restart")
    n_attempts = None
    if len(attempts):
        n_attempts = int(attempts.max()) + 1
    if restarts.height:
        n_attempts = max(n_attempts or 1, restarts.height + 1)
    return JobModel(
        world_size=ws.size,
        hosts=sorted(events["host"].drop_nulls().unique().to_list()),
        ranks_seen=sorted(int(r) for r in events["rank"].drop_nulls().unique().to_list()),
        rank_hosts={str(r): h for r, h in sorted(rank_hosts(events).items())},
        versions=_versions(events),
        communicators=communicators(events),
        attempts=n_attempts,
        start=_iso(ts.min()) if len(ts) else None,
        end=_iso(ts.max()) if len(ts) else None,
    )
