"""Ray's reports of workers that died under a job (family ``ray``): Ray Train, verl, OpenRLHF, vLLM on Ray.

``ray.worker_died`` for a worker or actor process that went away without an exception of its own:
``value`` = Ray's exit type (``SYSTEM_ERROR``, ``NODE_OUT_OF_MEMORY``...), ``key`` = what the exit detail
says (``process_died``: the process vanished, Ray's own first guess being the kernel's OOM killer),
``pid`` and ``peer`` = the worker's IP address where the line states them (``Worker IP address: 10.0.7.57``,
``Owner Ip address: …``). ``ray.node_dead`` for a node Ray gave up on (its node-lost report, ``peer`` = the node's
IP when stated), and for a worker whose exit detail says its node or its owner's node crashed (``key`` =
``node_died``). ``ray.memory_kill`` for a worker Ray's memory monitor killed: ``peer`` = the node's IP when the
report names it (``Memory on the node (IP: 10.20.49.141, …``).
"""

from __future__ import annotations

from collections.abc import Iterator

from nccllens import lazy_regex
from nccllens.parse.base import FileContext, Line, events_per_line

FAMILY = "ray"

PREFILTER = (
    r"Worker exit type: [A-Z_]+|exit type: [A-Z_]+ Worker exit detail"
    r"|killed due to memory pressure \(OOM\)|Memory on the node \(IP: "
    r"|The node with (?:node id: \w+ and (?:ip|address): \S+|client ID \w+)[^\n]* has been marked dead"
)

_EXIT = lazy_regex.compile(r"(?:Worker|Owner worker) exit type: (?P<type>[A-Z_]+)(?: Worker exit detail: (?P<detail>.*))?")
_IP = lazy_regex.compile(r"(?:Worker IP address|Owner Ip address): (?P<ip>[\w.:-]+)")
_PID = lazy_regex.compile(r"Worker PID: (?P<pid>\d{1,9})\b")
_MEMORY = lazy_regex.compile(r"Memory on the node \(IP: (?P<ip>[\w.:-]+)|killed due to memory pressure \(OOM\)")
# exit details of a process that vanished (killed, crashed) rather than one that raised or was stopped
_VANISHED = lazy_regex.compile(r"connection error code 2|exits with an exit code None|killed by SIGKILL|SIGSEGV")
# every Ray generation's words: "node id: … and ip: 10.1.2.3" (2.x), "… and address: 10.1.2.3 and node name: …" (2.4x),
# "The node with client ID 1ead… has been marked dead because the monitor has missed too many heartbeats" (<= 0.8)
_NODE_DEAD = lazy_regex.compile(r"The node with (?:node id: \w+ and (?:ip|address): (?P<ip>[\w.:-]+?),?(?: and node name: \S+)?"
                                r"|client ID \w+) has been marked dead")
_NODE = lazy_regex.compile(r"node has crashed|node (?:was|is) (?:dead|terminated|removed)|The node .* died")
DETAIL_CHARS = 200


def _event_for(body: str) -> dict | None:
    m = _EXIT.search(body)
    if m:
        detail = (m["detail"] or "").strip()
        node_died = bool(_NODE.search(detail))  # the process went with its node (or its owner's): a node that died
        event = {"kind": "ray.node_dead" if node_died else "ray.worker_died", "level": "error", "value": m["type"],
                 "detail": detail[:DETAIL_CHARS] or None,
                 "key": "node_died" if node_died else "process_died" if _VANISHED.search(detail) else None}
        ip, pid = _IP.search(body), _PID.search(body)
        if ip:
            event["peer"] = ip["ip"]
        if pid:
            event["pid"] = int(pid["pid"])
        return event
    m = _NODE_DEAD.search(body)
    if m:
        return {"kind": "ray.node_dead", "level": "error", "peer": m["ip"]}
    m = _MEMORY.search(body)
    if m:
        return {"kind": "ray.memory_kill", "level": "error", "peer": m["ip"]}
    return None


def parse(lines: list[Line], ctx: FileContext) -> Iterator[dict]:
    return events_per_line(lines, _event_for, FAMILY)
