"""Ranks or nodes that disagree on versions, NCCL_* settings, transport or launcher configuration."""

from __future__ import annotations

import polars as pl

from nccllens.analyses.common import majority, make_finding
from nccllens.analyses.reads import reads
from nccllens.rank_ranges import compact_ranks
from nccllens.report.model import Finding

LAUNCH_KEYS = ("run_id", "rdzv_id", "nnodes", "max_nodes", "min_nodes", "nproc_per_node", "rdzv_backend",
               "rdzv_endpoint")


def _differences(rows: pl.DataFrame, subject: str) -> list[tuple[str, dict, list]]:
    """(subject value, host -> value, odd hosts) for each key whose value differs between hosts."""
    out = []
    for (key,), group in rows.group_by([subject], maintain_order=True):
        per_host = dict(group.group_by("host").agg(pl.col("value").sort().last()).iter_rows())
        if len(per_host) < 2 or len(set(per_host.values())) < 2:
            continue
        _, odd = majority(per_host)
        out.append((key, per_host, odd))
    return out


@reads("nccl.version", "torch.nccl_error", "nccl.env", "torchrun.config", "torch.store_timeout",
       "lightning.rank_init")
def config_mismatch(events: pl.DataFrame, lang: str) -> list[Finding]:
    hosted = events.filter(pl.col("host").is_not_null())
    versions = (hosted.filter(pl.col("version").is_not_null() & pl.col("kind").is_in(["nccl.version", "torch.nccl_error"]))
                .with_columns(pl.col("version").cast(pl.String).str.split(" ").list.first().alias("what"),
                              pl.col("version").alias("value")))
    env = hosted.filter((pl.col("kind") == "nccl.env") & pl.col("key").str.starts_with("NCCL_"))
    env_hosts = env["host"].unique().to_list()
    launch = hosted.filter((pl.col("kind") == "torchrun.config") & pl.col("key").is_in(LAUNCH_KEYS))
    found = []
    for what, rows in (("version", versions.select("host", "what", "value").rename({"what": "key"})),
                       ("env", env.select("host", "key", "value")),
                       ("launch", launch.select("host", "key", "value"))):
        for key, per_host, odd in _differences(rows, "key"):
            found.append((what, key, per_host, odd))
    # an NCCL_* variable set on some hosts and not on others (only hosts that print their env count)
    if len(env_hosts) >= 2:
        for (key,), group in env.group_by(["key"], maintain_order=True):
            have = set(group["host"].to_list())
            if 0 < len(have) < len(env_hosts):
                unset = {h: "(unset)" for h in env_hosts if h not in have}
                per_host = {**dict(group.select("host", "value").iter_rows()), **unset}
                _, odd = majority(per_host)
                found.append(("env", key, per_host, odd))
    out = []
    for what, key, per_host, odd in found:
        hosts = odd or sorted(per_host)
        evidence = {"version": versions, "env": env, "launch": launch}[what]
        evidence = evidence.filter(pl.col("host").is_in(hosts) & (pl.col("key") == key)) if what != "version" \
            else evidence.filter(pl.col("host").is_in(hosts) & (pl.col("what") == key))
        shown = ", ".join(f"{h}={v}" for h, v in sorted(per_host.items())[:8])
        # nodes launched with different rendezvous arguments can never form one job: an error, not a hint
        analysis = "AN-LAUNCH-MISMATCH" if what == "launch" else "AN-CONFIG-MISMATCH"
        out.append(make_finding(analysis, lang, evidence.head(5), hosts=hosts, key=key,
                                values=shown, confidence=0.7 if odd else 0.5))
    return out + surplus_workers(events, lang) + duplicate_ranks(events, lang)


def surplus_workers(events: pl.DataFrame, lang: str) -> list[Finding]:
    """More processes joined the store than the world size allows: two launches share one store
    (a job started twice, or a world size that does not match the processes started)."""
    barrier = events.filter((pl.col("kind") == "torch.store_timeout") & pl.col("nranks").is_not_null()
                            & pl.col("value").cast(pl.String).str.ends_with(" joined"))
    if not barrier.height:
        return []
    joined = barrier["value"].cast(pl.String).str.extract(r"^(\d+)/", 1).cast(pl.Int64)
    over = barrier.filter(joined > pl.Series(barrier["nranks"]).cast(pl.Int64))
    if not over.height:
        return []
    first = over.row(0, named=True)
    count = str(first["value"]).split("/", 1)[0]
    values = (f"world size {first['nranks']}，加入的进程 {count} 个" if lang == "zh"
              else f"world size {first['nranks']}, {count} processes joined")
    return [make_finding("AN-LAUNCH-MISMATCH", lang, over.head(5), key="world size", values=values, confidence=0.7)]


def duplicate_ranks(events: pl.DataFrame, lang: str) -> list[Finding]:
    """Two processes of one attempt stated the same global rank (Lightning's ``GLOBAL_RANK: N, MEMBER: k/W``):
    each node computed the same ranks, so the world is never complete (tasks per node, ``num_nodes`` or
    ``devices`` that do not match the launch)."""
    inits = events.filter(pl.col("kind") == "lightning.rank_init")
    if not inits.height:
        return []
    per_rank = inits.group_by("rank", pl.col("attempt").fill_null(-1)).agg(pl.len().alias("n"))
    twice = sorted(int(r) for r in per_rank.filter(pl.col("n") > 1)["rank"].to_list())
    if not twice:
        return []
    world = int(inits["nranks"].max())
    never = sorted(set(range(world)) - set(int(r) for r in inits["rank"].to_list()))
    zh = lang == "zh"
    values = (f"rank {compact_ranks(twice)} 各被多个进程使用" if zh else f"rank(s) {compact_ranks(twice)} started by more than one process")
    if never:
        values += (f"，rank {compact_ranks(never)} 从未出现（world size {world}）" if zh
                   else f", rank(s) {compact_ranks(never)} never (world size {world})")
    evidence = inits.filter(pl.col("rank").is_in(twice)).head(5)
    key = "rank 分配" if zh else "rank assignment"
    return [make_finding("AN-LAUNCH-MISMATCH", lang, evidence, key=key, values=values, confidence=0.7)]


@reads("nccl.using_network")
def transport_mismatch(events: pl.DataFrame, lang: str) -> list[Finding]:
    """``Using network IB`` on some hosts and ``Socket`` on others: the odd ones fell back."""
    net = events.filter((pl.col("kind") == "nccl.using_network") & pl.col("host").is_not_null()
                        & pl.col("value").is_not_null())
    per_host = dict(net.group_by("host").agg(pl.col("value").sort().first()).iter_rows())
    if len(set(per_host.values())) < 2:
        return []
    socket_hosts = sorted(h for h, v in per_host.items() if v.lower().startswith("socket"))
    if not socket_hosts:
        return []
    return [make_finding("AN-TRANSPORT-MISMATCH", lang, net.filter(pl.col("host").is_in(socket_hosts)).head(5),
                         hosts=socket_hosts, values=", ".join(f"{h}={v}" for h, v in sorted(per_host.items())[:8]))]
