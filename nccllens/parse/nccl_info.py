"""Bodies of NCCL INFO/TRACE lines that carry forensic facts (shared/reference/nccl_logs.md §2).

Each entry of ``BODIES`` is ``(kind, pattern, fields)``: the pattern is matched at the start of the
body (after ``NCCL INFO `` / ``NCCL TRACE ``), and ``fields(match)`` returns the typed columns.
The same patterns, with their group names removed, form this family's prefilter, so every body
this module parses is one the prefilter keeps. Patterns compile in both Python ``re`` and Rust
``regex``: no look-around, no back-references.

Left out on purpose (per-channel or per-operation chatter): ring/tree dumps, ``Channel`` transport
lines, COLL ``opCount`` lines (all summarised per process instead: ``parse.dense``), topology dumps.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from nccllens import lazy_regex

Fields = Callable[[re.Match], dict]

_ADDR = r"[^\s<>]+<\d+>"  # ncclSocketToString: host<port>, IPv6 may carry %iface


def _int(text: str | None) -> int | None:
    try:
        return int(text) if text is not None else None
    except ValueError:
        return None


def _init(m: re.Match) -> dict:
    detail = f"comm {m['comm']} rank {m['rank']} nranks {m['nranks']} cudaDev {m['cudaDev']}"
    if m["parent"]:
        detail += f" parent {m['parent']} color {m['color']} key {m['splitkey']}"
    return {
        "comm_rank": _int(m["rank"]),
        "nranks": _int(m["nranks"]),
        "comm_id": f"0x{m['commId']}" if m["commId"] else None,
        "key": m["busId"],
        "value": m["fn"],
        "detail": detail,
    }


def _teardown(m: re.Match) -> dict:
    return {"comm_rank": _int(m["rank"]), "nranks": _int(m["nranks"]), "key": m["busId"],
            "value": f"{m['what']} {m['phase']}"}


def _topology(m: re.Match) -> dict:
    return {"comm_rank": _int(m["rank"]), "nranks": _int(m["nranks"]), "key": "nNodes", "value": m["nnodes"]}


def _bootstrap(m: re.Match) -> dict:
    return {"iface": m["iface"], "peer": m["addr"], "value": m["rest"].strip()}


def _ib_using(m: re.Match) -> dict:
    devices = re.findall(r"\[\d+\](\S+)", m["devs"])
    return {"value": " ".join(devices), "iface": m["oob"]}


def _socket_using(m: re.Match) -> dict:
    # "[0]eth0:10.0.0.1<0>"; a paste may redact the address ("[0]ib0.<ip>", "[0]ib0:<redacted>")
    found = re.findall(r"\[\d+\]([^:\s<]+?)\.?(?::|(?=<))(\S+)", m["devs"])
    addr = found[0][1] if found else None
    return {"value": " ".join(f"{i}:{a}" for i, a in found), "iface": found[0][0] if found else None,
            "peer": None if addr is None or addr.startswith("<") else addr}


def _old_socket_using(m: re.Match) -> dict:
    iface, _, addr = m["devs"].partition(":")
    return {"value": m["devs"], "iface": iface, "peer": addr}


def _version(m: re.Match) -> dict:
    return {"version": f"nccl {m['ver']}"}


def _backtrace(m: re.Match) -> dict:
    return {"key": f"{m['file']}:{m['line']}", "error_code": _int(m["code"]), "value": m["thread"],
            "detail": m["errno"]}


def _ras(m: re.Match) -> dict:
    return {"peer": m["peer"] or m["peer2"]}


def _retry(m: re.Match) -> dict:
    # "retrying (N/M)" (NCCL 2.12+): the attempt and the most NCCL makes; N = M is its last try
    return {"peer": m["peer"], "value": "retrying",
            "detail": f"{m['attempt']}/{m['most']}" if m["attempt"] else None}


def _env(m: re.Match) -> dict:
    return {"key": m["var"], "value": m["val"]}


def _network(m: re.Match) -> dict:
    return {"value": m["net"]}


def _connected(m: re.Match) -> dict:
    return {"value": m["what"]}


def _nothing(m: re.Match) -> dict:
    return {}


def _key_value(key: str) -> Fields:
    return lambda m: {"key": key, "value": m["v"]}


BODIES: list[tuple[str, str, Fields]] = [
    ("nccl.version", r"NCCL version (?P<ver>\d+\.\d+\.\d+\S*?(?:\+cuda\d+\.\d+)?)(?:\s|$)", _version),
    ("nccl.info", r"NCCL git version (?P<v>.+)", _key_value("git")),
    ("nccl.init", r"(?:\[Rank (?P<r0>\d+)\] )?(?:(?P<fn>ncclComm\w+|\w+) )?comm (?P<comm>0x[0-9a-f]+|\(nil\)) "
     r"rank (?P<rank>\d+) nranks (?P<nranks>\d+) cudaDev (?P<cudaDev>-?\d+)(?: nvmlDev -?\d+)? busId (?P<busId>[0-9a-f]+)"
     r"(?: parent (?P<parent>\S+)(?: (?:splitCount|childCount) \d+)? color (?P<color>-?\d+) key (?P<splitkey>-?\d+))?"
     r"(?: commId 0x(?P<commId>[0-9a-f]+))? ?- Init (?P<phase>START|COMPLETE)", _init),
    ("nccl.teardown", r"(?:\w+ )?comm (?P<comm>0x[0-9a-f]+|\(nil\)) rank (?P<rank>\d+) n[Rr]anks (?P<nranks>\d+) "
     r"cudaDev -?\d+ (?:nvmlDev -?\d+ )?busId (?P<busId>[0-9a-f]+).*?- (?P<what>Abort|Destroy|Revoke|Finalize) "
     r"(?P<phase>START|COMPLETE)", _teardown),
    ("nccl.info", r"comm (?:0x[0-9a-f]+|\(nil\)) rank (?P<rank>\d+) nRanks (?P<nranks>\d+) nNodes (?P<nnodes>\d+) "
     r"localRanks \d+ localRank \d+", _topology),
    ("nccl.bootstrap", r"Bootstrap ?: Using (?P<rest>(?:\[\d+\])?(?P<iface>[^\s:\[]+):(?P<addr>\S+).*)", _bootstrap),
    ("nccl.net_ib_none", r"NET/IB ?: No device found", _nothing),
    ("nccl.net_ib", r"NET/IB ?: Using (?P<devs>(?:\[\d+\]\S+ ?)+)[^;]*(?:; OOB (?P<oob>[^\s:]+):\S+)?", _ib_using),
    ("nccl.net_socket", r"NET/Socket ?: Using (?P<devs>(?:\[\d+\]\S+ ?)+)", _socket_using),
    ("nccl.net_socket", r"NET : Using interface (?P<devs>[^\s:]+:\S+)", _old_socket_using),  # NCCL 2.0-2.2
    ("nccl.using_network", r"Using (?:network|internal Network) (?P<net>\S.*)", _network),
    ("nccl.env", r"(?P<var>NCCL_[A-Z0-9_]+) set (?:by environment )?to (?P<val>.*?)\.?\s*$", _env),
    ("nccl.connected", r"Connected (?P<what>all rings|all trees|NVLS tree|CollNet\w*|all \w+)", _connected),
    ("nccl.backtrace", r"(?P<file>[^\s:]+):(?P<line>\d+)(?: \((?P<func>[^)]*)\))? -> (?P<code>-?\d+)"
     r"(?: \((?P<errno>[^)]*)\))?(?: \[(?P<thread>[^\]]+)\])?\s*$", _backtrace),
    ("nccl.ras", r"RAS (?:declaring peer (?P<peer>\S+) as DEAD|keep-alive timeout \w+ \(\d+s\) on socket connection "
     r"with (?P<peer2>\S+)|\S)", _ras),
    ("nccl.info", r"Init timings(?P<v>.*)", _key_value("init_timings")),
    ("nccl.info", r"Bootstrap timings (?P<v>.*)", _key_value("bootstrap_timings")),
    ("nccl.info", r"cudaDriverVersion (?P<v>\d+)", _key_value("cudaDriverVersion")),
    ("nccl.info", r"(?P<v>NET/Plugin ?:.*|Initialized NET plugin .*|Assigned NET plugin .*|Using non-device net plugin.*"
                  r"|Plugin Path : \S*libnccl-net\S*)",
     _key_value("net_plugin")),
    ("nccl.info", r"\[Service thread\] Connection closed by localRank (?P<v>\d+)", _key_value("closed_by_local_rank")),
    ("nccl.info", r"(?:\w+: )?(?:connect to (?P<peer>" + _ADDR + r") returned|(?:Call to )?connect returned) .*retrying"
     r"(?: \((?P<attempt>\d+)/(?P<most>\d+)\))?", _retry),
    ("nccl.info", r"(?P<v>HINT:.*)", _key_value("hint")),
    ("nccl.info", r"(?P<v>(?:[^\s:]+:\d+ )?Cuda failure.*|Failed to open libibverbs.*|Count not open .*)",
     _key_value("failure")),
]

_COMPILED = [(kind, lazy_regex.compile(p), fields) for kind, p, fields in BODIES]


def _without_groups(pattern: str) -> str:
    return re.sub(r"\(\?P<\w+>", "(?:", pattern)


PREFILTER_BODIES = "|".join(_without_groups(p) for _, p, _ in BODIES)


def classify(body: str) -> tuple[str, dict] | None:
    """Kind and typed fields for a kept INFO/TRACE body, or None when it is chatter."""
    for kind, rx, fields in _COMPILED:
        m = rx.match(body)
        if m:
            out = fields(m)
            if kind == "nccl.init":
                kind = "nccl.init_start" if m["phase"] == "START" else "nccl.init_complete"
            return kind, out
    return None
