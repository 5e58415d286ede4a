"""Inter-node NCCL traffic over sockets on a host whose NCCL runs on an IPoIB interface.

NCCL's network transport carries only traffic between nodes, so a ``Channel … via NET/Socket/…`` line is an
inter-node connection over TCP. When the same host's NCCL bootstraps (or lists its socket interfaces) on an
IPoIB interface (``ib0``, ``ibp12s0``), the node has InfiniBand and NCCL is not using it: the IB transport did
not start (no ``/dev/infiniband`` in the container, a missing or mismatched libibverbs or net plugin, a wrong
``NCCL_IB_HCA``). The job then runs at TCP speed, and socket connections between the nodes fail under load.
``NCCL_IB_DISABLE=1`` (someone chose sockets) names no fallback.
"""

from __future__ import annotations

import polars as pl

from nccllens.analyses.common import make_finding, summary_evidence
from nccllens.analyses.reads import reads
from nccllens.report.model import Finding

IPOIB = r"^ib[\w.]*$"


@reads(summaries=("nccl.transport",))
def sockets_beside_ipoib(summaries: pl.DataFrame, events: pl.DataFrame, lang: str) -> list[Finding]:
    rows = summaries.filter((pl.col("family") == "nccl.transport") & pl.col("key").str.starts_with("NET/Socket"))
    if not rows.height or not events.height:
        return []
    chosen = events.filter(pl.col("message").cast(pl.String).fill_null("").str.contains("NCCL_IB_DISABLE set by environment to 1"))
    if chosen.height:
        return []
    ifaces = events.filter(pl.col("kind").is_in(["nccl.bootstrap", "nccl.net_socket"]) & pl.col("iface").is_not_null())
    ipoib = ifaces.filter(pl.col("iface").cast(pl.String).str.contains(IPOIB))
    socket_hosts = {str(h) for h in rows["host"].drop_nulls().unique().to_list()}
    ib_hosts = {str(h) for h in ipoib["host"].drop_nulls().unique().to_list()}
    hosts = sorted(socket_hosts & ib_hosts)
    if not hosts:
        return []
    iface = str(ipoib.filter(pl.col("host").cast(pl.String).is_in(hosts))["iface"].cast(pl.String).drop_nulls().first())
    evidence = rows.filter(pl.col("host").cast(pl.String).is_in(hosts)).head(5)
    return [make_finding("AN-SOCKETS-BESIDE-IPOIB", lang, summary_evidence(evidence), hosts=hosts, iface=iface)]
