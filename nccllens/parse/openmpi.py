"""Open MPI's launcher messages (family ``openmpi``): mpirun/orterun/prterun saying which process failed.

- ``mpirun noticed that process rank 7 with PID 0 on node HOSTNAME exited on signal 9 (Killed).`` →
  ``openmpi.process_exit`` with the rank, the node (as ``host``), ``pid`` and ``signal``;
- ``mpirun detected that one or more processes exited with non-zero status, thus causing`` … ``The first
  process to do so was:`` / ``Process name: [[28465,1],3]`` / ``Exit code: 1`` (the lines that follow) →
  ``openmpi.process_exit`` with that rank and ``exit_code``;
- ``A process or daemon was unable to complete a TCP connection`` / ``to another process:`` /
  ``Local host: a`` / ``Remote host: b`` → ``openmpi.tcp_unreachable`` on host ``a`` with ``peer`` ``b``;
- ``ORTE has lost communication with a remote daemon.`` (``PRTE`` in Open MPI 5) / ``HNP daemon : [..] on node a``
  / ``Remote daemon: [..] on node b``, and Open MPI 3's ``ORTE has lost communication with its daemon located on
  node:`` / ``hostname:  b`` → ``openmpi.lost_daemon`` with ``peer`` ``b`` (the node whose daemon went away);
- ``An MPI communication peer process has unexpectedly disconnected.`` … ``Local host: a`` / ``Peer host: b`` (the
  TCP transport's report of a peer that hung up) → ``openmpi.peer_disconnected`` on host ``a`` with ``peer`` ``b``.

The launcher's own name comes first (``mpirun``, ``mpirun.real``, ``orterun``, ``prterun``, ``mpiexec``).
"""

from __future__ import annotations

from collections.abc import Iterator

from nccllens import lazy_regex
from nccllens.parse.base import FileContext, Line, event_for

FAMILY = "openmpi"

PREFILTER = (r"noticed that process rank \d+ with PID \d+ on node "
             r"|detected that one or more processes exited with non-zero status"
             r"|unable to complete a TCP connection|[OP]RTE has lost communication with (?:a remote|its) daemon"
             r"|MPI communication peer process has unexpectedly disconnected")

SIGNALS = {1: "SIGHUP", 2: "SIGINT", 4: "SIGILL", 6: "SIGABRT", 7: "SIGBUS", 8: "SIGFPE", 9: "SIGKILL",
           11: "SIGSEGV", 13: "SIGPIPE", 15: "SIGTERM"}
_NOTICED = lazy_regex.compile(r"noticed that process rank (?P<rank>\d{1,7}) with PID (?P<pid>\d+) on node (?P<node>\S*) ?"
                      r"exited on signal (?P<sig>\d+)")
_PROCESS = lazy_regex.compile(r"Process name:\s*\[\[\d+,\d+\],(?P<rank>\d{1,7})\]")
_EXIT = lazy_regex.compile(r"Exit code:\s*(?P<code>-?\d+)")
_LOCAL = lazy_regex.compile(r"Local host:\s*(?P<h>\S+)")
_REMOTE = lazy_regex.compile(r"Remote host:\s*(?P<h>\S+)")
_LOST_PEER = lazy_regex.compile(r"Remote daemon\s*:.*? on node (?P<h>\S+)|^\s*hostname:\s*(?P<h2>\S+)")
_LOST_HNP = lazy_regex.compile(r"HNP daemon\s*:.*? on node (?P<h>\S+)")
_PEER_HOST = lazy_regex.compile(r"Peer host:\s*(?P<h>\S+)")


def _after(line: Line, ctx: FileContext, n: int) -> list[str]:
    return [f.message for f in ctx.following(line, n)]


def _noticed(line: Line, body: str) -> dict | None:
    m = _NOTICED.search(body)
    if not m:
        return None
    sig = int(m["sig"])
    event = event_for(line, "openmpi.process_exit", rank=int(m["rank"]), pid=int(m["pid"]) or None,
                      signal=SIGNALS.get(sig, f"signal {sig}"), level="error", message=body)
    node = m["node"].strip()
    if node and node.upper() not in ("HOSTNAME", "XXXXXXXX") and not set(node) <= {"x", "X", "*", "."}:
        event["host"] = node
    return event


def _first_failed(line: Line, ctx: FileContext, body: str) -> dict:
    event = event_for(line, "openmpi.process_exit", level="error", message=body)
    for text in _after(line, ctx, 8):
        p, e = _PROCESS.search(text), _EXIT.search(text)
        if p:
            event["rank"] = int(p["rank"])
        if e:
            event["exit_code"] = int(e["code"])
            break
    return event


def _tcp(line: Line, ctx: FileContext, body: str) -> dict:
    event = event_for(line, "openmpi.tcp_unreachable", level="error", message=body)
    for text in _after(line, ctx, 6):
        local, remote = _LOCAL.search(text), _REMOTE.search(text)
        if local:
            event["host"] = local["h"]
        if remote:
            event["peer"] = remote["h"]
            break
    return event


def _lost(line: Line, ctx: FileContext, body: str) -> dict:
    event = event_for(line, "openmpi.lost_daemon", level="error", message=body)
    for text in _after(line, ctx, 8):
        hnp, peer = _LOST_HNP.search(text), _LOST_PEER.search(text)
        if hnp and not line.host:
            event["host"] = hnp["h"]
        if peer:
            event["peer"] = peer["h"] or peer["h2"]
            break
    return event


def _hung_up(line: Line, ctx: FileContext, body: str) -> dict:
    event = event_for(line, "openmpi.peer_disconnected", level="error", message=body)
    for text in _after(line, ctx, 16):  # the help text, then the hosts
        local, peer = _LOCAL.search(text), _PEER_HOST.search(text)
        if local and not line.host:
            event["host"] = local["h"]
        if peer:
            event["peer"] = peer["h"]
            break
    return event


def parse(lines: list[Line], ctx: FileContext) -> Iterator[dict]:
    for line in lines:
        body = line.message.strip()
        try:
            if "noticed that process rank" in body:
                event = _noticed(line, body)
            elif "exited with non-zero status" in body:
                event = _first_failed(line, ctx, body)
            elif "unable to complete a TCP connection" in body:
                event = _tcp(line, ctx, body)
            elif "has lost communication with" in body:
                event = _lost(line, ctx, body)
            elif "peer process has unexpectedly disconnected" in body:
                event = _hung_up(line, ctx, body)
            else:
                continue
        except Exception:  # noqa: BLE001 - one odd line must not cost the file its events
            continue
        if event is not None:
            event["family"] = FAMILY
            yield event
