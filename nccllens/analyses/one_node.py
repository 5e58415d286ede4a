"""Sockets on one node: a missing RDMA device, or a loopback interface, matters only between nodes.

NCCL's network transport (IB/RoCE, EFA, or TCP sockets) carries only inter-node traffic; GPUs of one
node talk over P2P, NVLink or shared memory. So ``NET/IB : No device found``, ``Using network Socket``,
``Failed to open libibverbs.so`` or ``NCCL_IB_DISABLE=1`` are harmless in a job that runs on one node.
When the logs show that the job ran on one node — one host, its NCCL connections all intra-node
(``via P2P/…``, ``via SHM/…``, ``direct pointer``) and none ``via NET/…``, or every rank of a known world
size on that host, or (where the lines name no host) intra-node connections that link every rank of the
known world size, since only ranks of one node can talk over P2P or shared memory — an ``ib_fallback``
warning is demoted to context. With no such evidence (a single
node's excerpt of a multi-node job looks the same) the finding stays. The same holds for NCCL
advertising a host-local interface (``lo``, ``docker0``): only other nodes cannot reach it.

The other way round: when NCCL's socket transport runs over an IPoIB interface (``ib0``…), the node has
InfiniBand that NCCL is not using, so a socket or missing-libibverbs context line becomes the
``ib_fallback`` cause it is, unless the logs show that the job ran on one node (then sockets carry no
traffic). Two hosts, or a paste whose NCCL prefixes (host names) were stripped, count as "not one node";
one named host does not
(NCCL_IB_DISABLE=1 stays context: someone chose it).
"""

from __future__ import annotations

import polars as pl

from nccllens.report.model import Finding, JobModel

CATEGORY = "ib_fallback"
HOST_LOCAL_IFACE = ("NL-NET-007",)  # a loopback / bridge interface: unreachable from other nodes only
CHOSEN = ("NL-IB-011",)  # NCCL_IB_DISABLE=1: a choice, not a fallback
_IPOIB = r"^ib[\w.]*$"
_EDGE = r"\b(\d+)\[[0-9a-fA-Fx]+\] -> (\d+)\[[0-9a-fA-Fx]+\]"


def _hosts(events: pl.DataFrame) -> set[str]:
    if not events.height or "host" not in events.columns:
        return set()
    return {str(h) for h in events["host"].drop_nulls().unique().to_list()}


def _transports(summaries: pl.DataFrame | None) -> list[str]:
    if summaries is None or not summaries.height:
        return []
    rows = summaries.filter(pl.col("family").cast(pl.String) == "nccl.transport")
    return [str(k) for k in rows["key"].drop_nulls().unique().to_list()]


def intra_node_links_cover(summaries: pl.DataFrame | None, world: int | None) -> bool:
    """Intra-node connections (``a[bus] -> b[bus] via P2P/SHM/…``; none via NET) that link ranks 0..world-1 into
    one group: P2P and shared memory join only ranks of one node, so the whole job ran on one node."""
    if summaries is None or not summaries.height or not world or world < 2:
        return False
    rows = summaries.filter(pl.col("family").cast(pl.String) == "nccl.transport")
    if not rows.height or rows["key"].cast(pl.String).str.starts_with("NET").any():
        return False
    parent = list(range(world))

    def root(node: int) -> int:
        while parent[node] != node:
            parent[node] = parent[parent[node]]
            node = parent[node]
        return node

    pairs = rows["raw"].cast(pl.String).str.extract_groups(_EDGE).struct.unnest().drop_nulls()
    for a, b in pairs.iter_rows():
        a, b = int(a), int(b)
        if a >= world or b >= world:
            return False  # a rank beyond the world size: not the communicator we know
        parent[root(a)] = root(b)
    return len({root(r) for r in range(world)}) == 1


def ran_on_one_node(events: pl.DataFrame, job: JobModel, summaries: pl.DataFrame | None) -> bool:
    """True only with positive evidence that every rank ran on one host."""
    hosts = _hosts(events)
    if not hosts:
        return intra_node_links_cover(summaries, job.world_size)
    if len(hosts) != 1:
        return False
    vias = _transports(summaries)
    if any(v.startswith("NET") for v in vias):
        return False  # an inter-node connection
    if vias:
        return True  # connections were built, all of them inside the node
    members = events.filter(pl.col("kind").cast(pl.String) == "progress.bench_rank")
    if members.height and set(members["host"].cast(pl.String).drop_nulls().to_list()) <= hosts:
        return True  # nccl-tests lists every rank of the test with its host
    ws = job.world_size
    if ws and len(job.rank_hosts) >= ws and set(job.rank_hosts.values()) <= hosts:
        return True
    return False


def quiet_one_node_fallback(findings: list[Finding], events: pl.DataFrame, job: JobModel,
                            summaries: pl.DataFrame | None) -> None:
    """Demote (in place) RDMA/socket and host-local-interface findings of a job that ran on one node."""
    fallback = [f for f in findings if (f.category == CATEGORY or f.rule in HOST_LOCAL_IFACE)
                and f.severity in ("warning", "error")]
    if not fallback or not ran_on_one_node(events, job, summaries):
        return
    for f in fallback:
        f.severity, f.role = "info", "context"
        f.confidence = round(min(f.confidence, 0.3), 2)


def sockets_over_ipoib(events: pl.DataFrame, job: JobModel, summaries: pl.DataFrame | None) -> bool:
    """A socket transport over an ``ib*`` interface, with two hosts named or none."""
    nccl = events.filter(pl.col("family").cast(pl.String) == "nccl") if events.height else events
    if not nccl.height or len(_hosts(nccl)) == 1 or ran_on_one_node(events, job, summaries):
        return False  # one named host: an excerpt of one node, most often a one-node job
    sockets = nccl.filter(pl.col("kind").cast(pl.String) == "nccl.net_socket")
    return bool(sockets.height and sockets["iface"].cast(pl.String).str.contains(_IPOIB).any())


def raise_ipoib_fallback(findings: list[Finding], events: pl.DataFrame, job: JobModel,
                         summaries: pl.DataFrame | None) -> None:
    """Promote (in place) socket / no-RDMA context findings of a multi-node job that talks over IPoIB."""
    quiet = [f for f in findings if f.category == CATEGORY and f.severity == "info" and f.rule not in CHOSEN]
    if not quiet or not sockets_over_ipoib(events, job, summaries):
        return
    for f in quiet:
        f.severity, f.role = "warning", "cause"
        f.confidence = round(max(f.confidence, 0.5), 2)


def quiet_idle_socket_iface(findings: list[Finding], events: pl.DataFrame) -> None:
    """Demote (in place) a host-local interface in NCCL's socket-transport list on hosts where NCCL found its
    InfiniBand/RoCE devices: the network transport is IB there, so the socket list carries no traffic (the
    bootstrap interface, on its own line, still counts)."""
    local = [f for f in findings if f.rule in HOST_LOCAL_IFACE and f.severity in ("warning", "error")
             and f.evidence and all("NET/Socket" in (e.text or "") for e in f.evidence)]
    if not local or not events.height:
        return
    ib = events.filter(pl.col("kind").cast(pl.String) == "nccl.net_ib")
    ib_hosts = {str(h) for h in ib["host"].drop_nulls().unique().to_list()}
    for f in local:
        if ib.height and (set(f.hosts) <= ib_hosts if f.hosts else True):
            f.severity, f.role = "info", "context"
            f.confidence = round(min(f.confidence, 0.3), 2)


# what shows a node has an RDMA fabric NCCL could use: IB in use elsewhere, an IPoIB interface, a device or plugin
# name, or the settings that point NCCL at one
# (an OFI plugin alone is none: images ship it for instances without EFA)
RDMA_SIGNS = (r"mlx\d_\d|NCCL_IB_HCA|NCCL_NET_GDR|NCCL_IB_DISABLE set by environment to 0|\bibv_|IBext|/dev/infiniband|"
              r"\befa\b|Selected Provider is efa|GDRDMA|RoCE|NET/IB ?: Using|\bib[a-z]?\d+\b|ibp\d+s\d+|\bp4d\b|\bp5\.|"
              r"InfiniBand")
UNEXPECTED = ("NL-IB-008",)  # "NET/IB : No device found": a fallback only where RDMA was there to use


def quiet_fallback_without_rdma(findings: list[Finding], events: pl.DataFrame) -> None:
    """Demote (in place) a missing-IB-device finding when nothing in the logs shows the nodes have RDMA: on an
    Ethernet cluster "No device found" then sockets is the normal path, not a fallback."""
    missing = [f for f in findings if f.rule in UNEXPECTED and f.severity in ("warning", "error")]
    if not missing or not events.height:
        return
    text = pl.concat_str([pl.col("message").cast(pl.String).fill_null(""), pl.col("iface").cast(pl.String).fill_null("")],
                         separator=" ")
    if events.select(text.str.contains(RDMA_SIGNS).any()).item():
        return
    for f in missing:
        f.severity, f.role = "info", "context"
        f.confidence = round(min(f.confidence, 0.3), 2)
