"""Interface and net-plugin facts per host, compared across hosts (issue 16 §3.14).

NCCL says, per process, every interface its socket transport will use (``NET/Socket : Using [0]eth0:10.0.0.7<0>
[1]…``), the IB devices (``NET/IB : Using [0]mlx5_0:1/IB …``) and whether an external net plugin was loaded
(``NET/Plugin: Loaded net plugin …`` / ``NET/Plugin : No plugin found (libnccl-net.so), using internal
implementation``). Hosts of one job that disagree are a configuration problem:

- a net plugin loaded on some hosts and not on others: the hosts speak different transports (config_mismatch);
- the first socket interface a loopback or virtual one (``lo``, ``docker0``, ``veth…``, ``virbr0``, a link-local
  address) on some hosts and a real NIC on the others: those hosts advertise an address their peers cannot
  reach (network_interface). Differently named real NICs (``eth0`` on one node, ``ens5`` on another) are normal
  and are not reported.
"""

from __future__ import annotations

import re

import polars as pl

from nccllens import lazy_regex
from nccllens.analyses.common import majority, make_finding
from nccllens.analyses.reads import reads
from nccllens.report.model import Finding

# NCCL 2.19+ names the plugin library it loaded ("Plugin Path : /opt/hpcx/.../libnccl-net.so") and says
# "Could not find: libnccl-net.so. Using internal network plugin." where there is none
_LOADED = lazy_regex.compile(r"(?i)Loaded net plugin|Initialized NET plugin|Assigned NET plugin|Using non-device net plugin"
                             r"|^Plugin Path : ")
_INTERNAL = lazy_regex.compile(r"(?i)No plugin found|Plugin load \(?[^)]*\)? returned|using internal implementation"
                               r"|Using internal network plugin")
_VIRTUAL = lazy_regex.compile(r"^(?:lo|docker\d*|veth\w*|virbr\d*|br-\w+|cni\d*|flannel\S*|cali\w+|tunl\d*|ip6tnl\d*)$")
_LINK_LOCAL = lazy_regex.compile(r"^(?:169\.254\.|fe80:)", re.I)


def plugin_per_host(events: pl.DataFrame) -> dict[str, str]:
    """host → ``loaded`` or ``internal`` (what its NCCL said about the external net plugin)."""
    rows = events.filter((pl.col("kind") == "nccl.info") & (pl.col("key") == "net_plugin") & pl.col("host").is_not_null())
    out: dict[str, str] = {}
    for host, value in rows.select(pl.col("host").cast(pl.String), "value").iter_rows():
        if _LOADED.search(value or ""):
            out[host] = "loaded"
        elif _INTERNAL.search(value or "") and out.get(host) != "loaded":
            out[host] = "internal"
    return out


def first_interface_kind(value: str) -> str | None:
    """``virtual`` or ``nic`` for the first interface of a ``NET/Socket : Using`` list (``eth0:10.0.0.7<0> …``)."""
    first = (value or "").split(" ")[0]
    if ":" not in first:
        return None
    name, addr = first.split(":", 1)
    if _VIRTUAL.match(name) or _LINK_LOCAL.match(addr):
        return "virtual"
    return "nic"


def interface_per_host(events: pl.DataFrame) -> dict[str, tuple[str, str]]:
    """host → (kind of its first socket interface, the interface list as NCCL printed it)."""
    rows = events.filter((pl.col("kind") == "nccl.net_socket") & pl.col("host").is_not_null() & pl.col("value").is_not_null())
    out: dict[str, tuple[str, str]] = {}
    for host, value in rows.select(pl.col("host").cast(pl.String), "value").iter_rows():
        kind = first_interface_kind(value)
        if kind is not None and (host not in out or kind == "virtual"):
            out[host] = (kind, value)
    return out


@reads("nccl.info", "nccl.net_socket")
def net_mismatch(events: pl.DataFrame, lang: str) -> list[Finding]:
    out = []
    plugins = plugin_per_host(events)
    if len(set(plugins.values())) > 1:
        _, odd = majority(plugins)
        hosts = odd or sorted(h for h, v in plugins.items() if v == "loaded")
        evidence = events.filter((pl.col("kind") == "nccl.info") & (pl.col("key") == "net_plugin")
                                 & pl.col("host").cast(pl.String).is_in(hosts))
        out.append(make_finding("AN-CONFIG-MISMATCH", lang, evidence.head(5), hosts=hosts, key="NCCL net plugin",
                                values=", ".join(f"{h}={v}" for h, v in sorted(plugins.items())[:8]),
                                confidence=0.6))
    ifaces = interface_per_host(events)
    kinds = {h: k for h, (k, _) in ifaces.items()}
    if len(set(kinds.values())) > 1:
        odd = sorted(h for h, k in kinds.items() if k == "virtual")
        evidence = events.filter((pl.col("kind") == "nccl.net_socket") & pl.col("host").cast(pl.String).is_in(odd))
        out.append(make_finding("AN-NET-IFACE-MISMATCH", lang, evidence.head(5), hosts=odd,
                                values=", ".join(f"{h}={v.split(' ')[0]}" for h, (_, v) in sorted(ifaces.items())[:8])))
    return out


def _addresses(value: str) -> list[tuple[str, str]]:
    """(interface, address) of each real entry of a socket interface list (``eth1:10.0.0.7<0> …``)."""
    out = []
    for part in (value or "").split(" "):
        name, sep, addr = part.partition(":")
        addr = addr.split("<", 1)[0]
        if sep and addr and not _VIRTUAL.match(name) and not _LINK_LOCAL.match(addr):
            out.append((name, addr))
    return out


@reads("nccl.net_socket")
def shared_hostname(events: pl.DataFrame, lang: str) -> list[Finding]:
    """Two machines under one host name: processes of one host name whose NCCL gives one interface two
    addresses, printed interleaved in one log (at the same time, so not a restart on a new address). NCCL told
    the nodes apart by host name (before 2.12 it did by that alone): it wires them as one node (P2P, SHM)."""
    rows = events.filter((pl.col("kind") == "nccl.net_socket") & pl.col("host").is_not_null() & pl.col("value").is_not_null())
    if rows.height < 3:
        return []
    order: dict[tuple[str, str, str], list[str]] = {}  # (host, file, interface) → its addresses in line order
    ordered = rows.sort(["file", "line"]).select(pl.col("host").cast(pl.String), pl.col("file").cast(pl.String), "value")
    for host, file, value in ordered.iter_rows():
        for name, addr in _addresses(value):
            order.setdefault((host, file, name), []).append(addr)
    for (host, file, name), addrs in sorted(order.items()):
        if sum(1 for a, b in zip(addrs, addrs[1:], strict=False) if a != b) < 2:
            continue  # one address, or one after the other (a restart)
        evidence = rows.filter((pl.col("host").cast(pl.String) == host) & (pl.col("file").cast(pl.String) == file))
        return [make_finding("AN-SHARED-HOSTNAME", lang, evidence.head(5), hosts=[host], interface=name,
                             values=", ".join(sorted(set(addrs))[:6]))]
    return []
