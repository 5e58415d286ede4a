"""The culprit a message names: a rule with ``culprit = "peer"`` (docs/rule-format.md) blames the ``peer``
its events name (the rank a barrier or a unique-id fetch waits on, the host that closed the connection,
the store host that could not be reached) rather than the ranks and hosts that printed them.

The ``peer`` column holds what the message says: ``rank 3``, ``ranks 1, 5``, ``host:port``,
``[::ffff:10.0.0.7]:29500``, ``10.0.0.7<43369>`` (NCCL), a bare host. An address names a host as the logs
name it: an IP that one host's NCCL lines list as its own (``Bootstrap : Using eth0:10.0.0.7<0>``) is that
host; another address stays as printed. A wildcard or loopback address names no other host (the peer is
on the reporter's own host), so such events keep their reporters as culprits.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import polars as pl

from nccllens import lazy_regex

_RANKS = lazy_regex.compile(r"^ranks? (\d+(?:,\s*\d+)*)$")
_BRACKETED = lazy_regex.compile(r"^\[(?P<addr>[^\]]+)\](?::\d+)?$")
_NCCL_ADDR = lazy_regex.compile(r"^(?P<addr>[^\s<>]+)<\d+>$")
_HOST_PORT = lazy_regex.compile(r"^(?P<addr>[^\s:\[\]]*):\d+$")
_MAPPED = lazy_regex.compile(r"^::ffff:", re.I)
_NOWHERE = lazy_regex.compile(r"^(?:|0\.0\.0\.0|::|::1|localhost|127\.\d+\.\d+\.\d+|\*)$", re.I)
# NCCL lines that list a host's own addresses
_OWN_ADDRESS_KINDS = ("nccl.bootstrap", "nccl.net_socket")


@dataclass(frozen=True)
class Target:
    """The ranks and hosts a message names as its peer."""

    ranks: tuple[int, ...] = ()
    hosts: tuple[str, ...] = ()


def address_of(peer: str) -> str | None:
    """The host or address part of a peer string (no port), or None."""
    text = peer.strip()
    for pattern in (_BRACKETED, _NCCL_ADDR, _HOST_PORT):
        m = pattern.match(text)
        if m:
            text = m["addr"]
            break
    text = _MAPPED.sub("", text)
    if not text or " " in text:
        return None
    return text


_IP = lazy_regex.compile(r"^(?:\d+\.\d+\.\d+\.\d+|[0-9A-Fa-f:]*:[0-9A-Fa-f:.]*)$")


def target_of(peer: str | None, addresses: dict[str, str] | None = None,
              known: frozenset[str] = frozenset()) -> Target | None:
    """What ``peer`` names: ranks, or one host (None: nothing, or only the reporter's own host). A fully
    qualified name whose first label is a host the logs name (``known``) is that host."""
    if not peer:
        return None
    m = _RANKS.match(peer.strip())
    if m:
        return Target(ranks=tuple(int(x) for x in re.findall(r"\d+", m[1])))
    addr = address_of(peer)
    if addr is None or _NOWHERE.match(addr):
        return None
    host = (addresses or {}).get(addr)
    if host is None and not _IP.match(addr) and "." in addr and addr.split(".", 1)[0] in known:
        host = addr.split(".", 1)[0]
    return Target(hosts=(host or addr,))


@dataclass
class AddressBook:
    """Which host owns an address, and which host a rank ran on, as the whole event table says."""

    hosts: dict[str, str] = field(default_factory=dict)  # address -> host (only addresses of one host)
    rank_hosts: dict[int, str] = field(default_factory=dict)  # rank -> host (ranks seen on one host)
    known: frozenset[str] = frozenset()  # every host the events name


def address_book(events: pl.DataFrame) -> AddressBook:
    book = AddressBook()
    if not events.height:
        return book
    own = (events.filter(pl.col("kind").is_in(_OWN_ADDRESS_KINDS) & pl.col("peer").is_not_null()
                         & pl.col("host").is_not_null())
           .select(pl.col("peer"), pl.col("host").cast(pl.String)).unique())
    seen: dict[str, set[str]] = {}
    for peer, host in own.iter_rows():
        for part in re.findall(r"[0-9A-Fa-f:.]+(?=<\d+>)", peer) or [peer]:
            addr = address_of(part)
            if addr and not _NOWHERE.match(addr):
                seen.setdefault(addr, set()).add(host)
    book.hosts = {addr: next(iter(hosts)) for addr, hosts in seen.items() if len(hosts) == 1}
    placed = (events.filter(pl.col("rank").is_not_null() & pl.col("host").is_not_null())
              .group_by("rank").agg(pl.col("host").cast(pl.String).unique().alias("hosts"))
              .filter(pl.col("hosts").list.len() == 1))
    book.rank_hosts = {rank: hosts[0] for rank, hosts in placed.iter_rows()}
    book.known = frozenset(events["host"].drop_nulls().cast(pl.String).unique().to_list())
    return book


# where no parser filled ``peer``: the ranks a message names as the ones at fault, in NCCL's own wording
# ("Duplicate GPU detected : rank 0 and rank 1 both on CUDA device 2000", "Mismatched collective detected,
# please check your collective calls at and around rank 39")
_NAMED_RANKS = lazy_regex.compile(r"\brank (\d+) and rank (\d+)\b|\baround rank (\d+)\b")


# the node a message names: Ray's memory monitor by address ("... at node (ID: 4f.., IP: 10.0.167.26)",
# "Memory on the node (IP: 10.20.49.141, ID: ...) where the task ... was running"), its autoscaler by instance
# ("Instance k-1a5e56fa0001 (node IP: 10.1.140.199) will be terminated soon")
# its version check by the node it refused ("This process on node 10.0.0.5 was started with:"); a launcher's wait by
# the store or the first endpoint it waits for (Paddle's "Retry to connect to 10.0.0.5:51920 while the server is not
# yet listening.", "not ready endpoints:['10.0.0.5:6070', ...]")
_NAMED_NODE = lazy_regex.compile(r"\bnode \((?:ID: \w+, )?IP: (?P<ip>[0-9A-Fa-f.:]+[0-9A-Fa-f])[,)]"
                                 r"|\bInstance (?P<instance>[\w.-]+) \(node IP: [0-9A-Fa-f.:]+\)"
                                 r"|\bThis process on node (?P<node>[\w.:-]+) was started with"
                                 r"|\bRetry to connect to (?P<store>[\w.-]+):\d+ while the server is not yet listening"
                                 r"|\bnot ready endpoints:\s*\['(?P<endpoint>[\w.-]+):\d+'")


def named_in_message(message: str | None) -> str | None:
    """``ranks a, b`` for the ranks a message names in NCCL's wording, the address of the node it names
    in Ray's, or None."""
    node = _NAMED_NODE.search(message or "")
    if node:
        return node["ip"] or node["instance"] or node["node"] or node["store"] or node["endpoint"]
    m = _NAMED_RANKS.search(message or "")
    if not m:
        return None
    found = [g for g in m.groups() if g is not None]
    return f"rank{'s' if len(found) > 1 else ''} {', '.join(found)}"


def peer_culprits(events: pl.DataFrame, book: AddressBook | None) -> tuple[list[int], list[str]] | None:
    """The ranks and hosts the matched ``events`` name as their peer (None: they name none); events with
    no ``peer`` value name the ranks their message names (``named_in_message``)."""
    if "peer" not in events.columns:
        return None
    ranks: set[int] = set()
    hosts: set[str] = set()
    addresses, known = (book.hosts, book.known) if book else ({}, frozenset())
    peers = set(events["peer"].drop_nulls().unique().to_list())
    if "message" in events.columns:
        peers |= {named_in_message(m) for m in events.filter(pl.col("peer").is_null())["message"].to_list()} - {None}
    for peer in sorted(peers):
        target = target_of(peer, addresses, known)
        if target is None:
            continue
        ranks.update(target.ranks)
        hosts.update(target.hosts)
    if not ranks and not hosts:
        return None
    if book and ranks and not hosts:  # a peer rank's host, where the logs place it on one host
        placed = {book.rank_hosts.get(r) for r in ranks}
        if None not in placed:
            hosts.update(h for h in placed if h)
    return sorted(ranks), sorted(hosts)
