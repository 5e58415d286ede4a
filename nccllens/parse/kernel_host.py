"""Host-side kernel (and syslog) messages that explain a dead rank (shared/reference/dmesg_xid.md §2.4–2.8).

``HOST_MESSAGES`` lists ``(kind, pattern, fields)`` like ``kernel_gpu.GPU_MESSAGES``: patterns are
searched in the message after the prefix and compile in Python ``re`` and Rust ``regex``.

OOM events carry ``key`` = which OOM line it is: ``invoked`` (the allocating task, not the victim), ``selected`` (pre-4.x "Kill process ... or sacrifice child"),
``constraint`` (``oom-kill:`` summary, kernel ≥ 5.0), ``killed`` (the victim), ``reaped``.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from nccllens.parse.kernel_gpu import pci

Fields = Callable[[re.Match], dict]

_BDF = r"[0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]"


def _edac(m: re.Match) -> dict:
    ue = m["sev"] == "UE"
    return {"value": m["sev"], "key": m["mc"], "level": "critical" if ue else "warning"}


def _mce(m: re.Match) -> dict:
    return {"value": "mce", "level": "critical"}


def _aer_source(m: re.Match) -> dict:
    sev = m["sev"]
    fatal = m["fatal"] == "Fatal"
    corrected = sev.startswith("Correct")
    level = "critical" if fatal else "warning" if corrected else "error"
    return {"pci": pci(m["src"]), "value": f"{sev} ({m['fatal']})" if m["fatal"] else sev, "level": level,
            "key": pci(m["port"])}


def _aer_bus(m: re.Match) -> dict:
    sev = m["sev"].strip()
    level = "warning" if sev.startswith("Correct") else "critical" if "Fatal)" in sev and "Non" not in sev else "error"
    return {"pci": pci(m["dev"]), "value": sev, "detail": m["type"], "level": level}


def _dpc(m: re.Match) -> dict:
    return {"pci": pci(m["port"]), "value": "DPC containment", "level": "critical"}


def _oom_killed(m: re.Match) -> dict:
    return {"pid": int(m["pid"]), "value": m["comm"], "key": "killed", "detail": m["ctx"]}


def _oom_legacy(m: re.Match) -> dict:  # pre-4.x: the task chosen; 'Killed process' names the victim
    return {"pid": int(m["pid"]), "value": m["comm"], "key": "selected", "detail": m["ctx"]}


def _oom_constraint(m: re.Match) -> dict:
    out = {"key": "constraint", "detail": m["constraint"]}
    if m["task"]:
        out["value"] = m["task"]
    if m["pid"]:
        out["pid"] = int(m["pid"])
    return out


def _oom_invoked(m: re.Match) -> dict:
    return {"key": "invoked", "value": m["comm"], "level": "warning"}


def _oom_reaped(m: re.Match) -> dict:
    return {"key": "reaped", "pid": int(m["pid"]), "value": m["comm"], "level": "info"}


def _segfault(m: re.Match) -> dict:
    return {"pid": int(m["pid"]), "value": m["comm"], "detail": m["obj"]}


def _trap(m: re.Match) -> dict:
    return {"pid": int(m["pid"]), "value": m["comm"], "detail": m["what"]}


def _hung(m: re.Match) -> dict:
    return {"pid": int(m["pid"]), "value": m["comm"], "timeout_ms": int(m["secs"]) * 1000}


def _soft_lockup(m: re.Match) -> dict:
    return {"pid": int(m["pid"]), "value": m["comm"], "elapsed_ms": int(m["secs"]) * 1000, "key": "soft_lockup"}


def _mlx5_link(m: re.Match) -> dict:
    down = m["state"] == "down"
    return {"pci": pci(m["dev"]), "iface": m["ifname"], "value": m["state"],
            "level": "warning" if down else "info"}


def _carrier(m: re.Match) -> dict:
    lost = m["state"] == "Lost"
    return {"iface": m["ifname"], "value": "down" if lost else "up", "level": "warning" if lost else "info"}


def _boot(m: re.Match) -> dict:
    return {"version": f"kernel {m['ver']}"}


HOST_MESSAGES: list[tuple[str, str, Fields]] = [
    ("kernel.ecc", r"EDAC (?P<mc>[\w ]*MC\d+): \d+ (?P<sev>CE|UE) ", _edac),
    ("kernel.ecc", r"mce: \[Hardware Error\]", _mce),
    ("kernel.aer", r"(?P<port>" + _BDF + r"): AER: (?:Multiple )?(?P<sev>Corrected|Correctable|Uncorrected|Uncorrectable)"
     r"(?: \((?P<fatal>Non-Fatal|Fatal)\))? error (?:message )?received(?: from|:) (?P<src>" + _BDF + r")", _aer_source),
    ("kernel.aer", r"(?P<dev>" + _BDF + r"): (?:AER: )?(?:PCIe|CXL) Bus Error: severity=(?P<sev>[^,]+), "
     r"type=(?P<type>[^,]+)", _aer_bus),
    ("kernel.aer", r"(?P<port>" + _BDF + r"): DPC: containment event", _dpc),
    ("kernel.oom_kill", r"(?:(?P<ctx>Out of memory|Memory cgroup out of memory): )?Killed process (?P<pid>\d+) "
     r"\((?P<comm>[^)]*)\)", _oom_killed),
    ("kernel.oom_kill", r"(?P<ctx>Out of memory|Memory cgroup out of memory): Kill process (?P<pid>\d+) "
     r"\((?P<comm>[^)]*)\)", _oom_legacy),
    ("kernel.oom_kill", r"oom-kill:constraint=(?P<constraint>[A-Z_]+)[^\n]*?(?:,task=(?P<task>[^,]*))?(?:,pid=(?P<pid>\d+))?"
     r"(?:,uid=\d+)?\s*$", _oom_constraint),
    ("kernel.oom_kill", r"(?:^|\s)(?P<comm>\S+) invoked oom-killer", _oom_invoked),
    ("kernel.oom_kill", r"oom_reaper: reaped process (?P<pid>\d+) \((?P<comm>[^)]*)\)", _oom_reaped),
    ("kernel.segfault", r"(?:^|[\s\[])(?P<comm>[^\s\[]+)\[(?P<pid>\d+)\]: segfault at [0-9a-f]+ ip [0-9a-f]+ sp [0-9a-f]+ error [0-9a-f]+"
     r"(?: in (?P<obj>[^\[\s]+))?", _segfault),
    ("kernel.segfault", r"traps: (?P<comm>[^\s\[]+)\[(?P<pid>\d+)\] (?P<what>general protection fault|trap [a-z ]+?) ip:",
     _trap),
    ("kernel.hung_task", r"task (?P<comm>.+?):(?P<pid>\d+) blocked for more than (?P<secs>\d+) seconds", _hung),
    ("kernel.hung_task", r"BUG: soft lockup - CPU#\d+ stuck for (?P<secs>\d+)s! \[(?P<comm>.+?):(?P<pid>\d+)\]",
     _soft_lockup),
    ("kernel.ib_link", r"mlx5_core (?P<dev>" + _BDF + r") (?P<ifname>\S+): Link (?P<state>up|down)", _mlx5_link),
    ("kernel.ib_link", r"(?:^|[^\w.\-])(?P<ifname>[\w.\-]+): (?P<state>Lost|Gained) carrier", _carrier),
    ("kernel.boot", r"Linux version (?P<ver>\d+\.\d+\S*)", _boot),
]
