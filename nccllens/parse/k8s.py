"""Kubernetes text collected with pod logs (family ``k8s``): ``kubectl describe``, events, ``get pods``.

``k8s.killed`` for a container or pod that Kubernetes killed or evicted (``value`` = the reason:
``OOMKilled``, ``Evicted``, ``Preempted``, ``Killing``, ``ExitCode``), ``k8s.backoff`` for
``Back-off restarting failed container`` (the container keeps dying).
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from nccllens import lazy_regex
from nccllens.parse.base import FileContext, Line, events_per_line

FAMILY = "k8s"

PREFILTER = (
    r"OOMKilled|\bEvicted\b|The node was low on resource|The node had condition"
    r"|Preempted by |Killing container with id|Back-off restarting failed container"
    r"|Exit Code:\s+1(?:3[4579]|43)\b"
)

_EXIT_SIGNALS = {134: "SIGABRT", 135: "SIGBUS", 137: "SIGKILL", 139: "SIGSEGV", 143: "SIGTERM"}

_POD = lazy_regex.compile(r"\bpod/(?P<pod>[\w.-]+)")
_LOW = lazy_regex.compile(r"The node was low on resource: (?P<res>[\w-]+)\.(?: .*?Container (?P<ctr>\S+) was using)?")
_CONDITION = lazy_regex.compile(r"The node had condition: \[(?P<cond>\w+)\]")
_PREEMPT = lazy_regex.compile(r"Preempted by (?P<by>.+?) on node (?P<node>[\w.-]+)")
_KILLING = lazy_regex.compile(r"Killing container with id (?P<id>(?:\w+://)?[^\s:]+)(?::(?P<why>.*))?$")
_EXIT = lazy_regex.compile(r"Exit Code:\s+(?P<code>1(?:3[4579]|43))\b")  # the same codes the PREFILTER keeps
_REASON = lazy_regex.compile(r"^\s*Reason:\s+(?P<reason>OOMKilled|Evicted)\s*$")
_GET_PODS = lazy_regex.compile(r"^(?P<pod>[a-z0-9][\w.-]*)\s+\d+/\d+\s+(?P<reason>OOMKilled|Evicted)\s")


def _event_for(body: str) -> dict | None:
    if "Back-off restarting failed container" in body:
        event = {"kind": "k8s.backoff", "value": "BackOff", "level": "warning"}
    elif m := _LOW.search(body):
        event = {"kind": "k8s.killed", "value": "Evicted", "key": m["ctr"], "detail": f"low on {m['res']}"}
    elif m := _CONDITION.search(body):
        event = {"kind": "k8s.killed", "value": "Evicted", "detail": m["cond"]}
    elif m := _PREEMPT.search(body):
        event = {"kind": "k8s.killed", "value": "Preempted", "host": m["node"], "detail": f"by {m['by']}"}
    elif m := _KILLING.search(body):
        event = {"kind": "k8s.killed", "value": "Killing", "key": m["id"], "detail": (m["why"] or "").strip()}
    elif m := _EXIT.search(body):
        code = int(m["code"])
        if code not in _EXIT_SIGNALS:
            return None
        event = {"kind": "k8s.killed", "value": "ExitCode", "exit_code": code, "signal": _EXIT_SIGNALS[code]}
    elif m := (_REASON.match(body) or _GET_PODS.match(body)):
        event = {"kind": "k8s.killed", "value": m["reason"]}
        if "pod" in m.groupdict():
            event["key"] = m["pod"]
    elif "OOMKilled" in body:
        event = {"kind": "k8s.killed", "value": "OOMKilled"}
    elif re.search(r"\bEvicted\b", body):
        event = {"kind": "k8s.killed", "value": "Evicted"}
    else:
        return None
    if event["value"] == "OOMKilled":
        event["signal"] = "SIGKILL"
    pod = _POD.search(body)
    if pod and not event.get("key"):
        event["key"] = pod["pod"]
    event.setdefault("level", "error")
    return event


def parse(lines: list[Line], ctx: FileContext) -> Iterator[dict]:
    return events_per_line(lines, _event_for, FAMILY)
