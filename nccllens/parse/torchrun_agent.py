"""One-line messages of the torchrun / torch.distributed.elastic agent.

Each matcher takes the message body (log header already removed) and returns the event fields
it learns, or None. The multi-line records (launch config block, rendezvous result, failure
table) live in ``torchrun_records``.
"""

from __future__ import annotations

from collections.abc import Callable

from nccllens import lazy_regex

SIGNAL_BY_NUMBER = {
    1: "SIGHUP", 2: "SIGINT", 3: "SIGQUIT", 4: "SIGILL", 5: "SIGTRAP", 6: "SIGABRT", 7: "SIGBUS", 8: "SIGFPE",
    9: "SIGKILL", 10: "SIGUSR1", 11: "SIGSEGV", 12: "SIGUSR2", 13: "SIGPIPE", 14: "SIGALRM", 15: "SIGTERM",
}


def signal_for_exit(code: int | None) -> str | None:
    """torchrun reports death by signal N as exit code -N."""
    if code is None or code >= 0:
        return None
    return SIGNAL_BY_NUMBER.get(-code)


def signal_name(text: str) -> str:
    """``Signals.SIGTERM`` / ``SIGTERM`` / ``15`` -> ``SIGTERM``."""
    text = text.strip().removeprefix("Signals.")
    if text.isdigit():
        return SIGNAL_BY_NUMBER.get(int(text), text)
    return text


_SIG = r"(?:Signals\.)?SIG[A-Z0-9]+"

_WORKER_FAILED = lazy_regex.compile(
    r"failed \(exitcode: (?P<code>-?\d+)\) local_rank: (?P<lr>\d+) \(pid: (?P<pid>\d+)\) "
    r"of (?:binary|fn):(?: (?P<what>.*))?"  # a paste may lose the trailing blank when the binary wrapped
)
# a ChildFailedError table row whose line breaks and padding a paste lost (a web page joined the ``rank``,
# ``exitcode`` and ``error_file`` rows, Markdown ate the underscores): ``rank2 (local rank: 2)exitcode: -9
# (pid: 36071)error file: <N/A>``
FLAT_ROW = lazy_regex.compile(
    r"\brank\s*:?\s*(?P<rank>\d+)\s*\(local[_ ]rank:\s*(?P<lr>\d+)\)\s*,?\s*exitcode\s*:?\s*(?P<code>-?\d+)"
    r"\s*\(pid:\s*(?P<pid>\d+)\)"
)
_SENDING = lazy_regex.compile(rf"Sending process (?P<pid>\d+) closing signal (?P<sig>{_SIG})")
_CLOSING = lazy_regex.compile(rf"Closing process (?P<pid>\d+) via signal (?P<sig>{_SIG})")
_FORCED = lazy_regex.compile(rf"Unable to shutdown process (?P<pid>\d+) via (?P<sig>{_SIG}), forcefully exiting via (?P<kill>{_SIG})")
_DEATH = lazy_regex.compile(rf"Received (?P<sig>\d+|{_SIG}) death signal, shutting down workers")  # 15, SIGTERM, Signals.SIGTERM
_GOT_TERM = lazy_regex.compile(rf"Got termination signal: (?P<sig>{_SIG})")
_SIGNAL_EXC = lazy_regex.compile(r"(?:SignalException: )?Process (?P<pid>\d+) got signal: (?P<sig>\S+)")
_NPROC = lazy_regex.compile(r"Using nproc_per_node=(?P<value>[^\s.]+(?:\.\d+)?)\.?\s*$")
_RESTART = lazy_regex.compile(
    r"\[(?P<role>[^\]]+)\] Worker group (?P<state>[A-Z]+)\. (?P<left>\d+)/(?P<max>\d+) attempts left; "
    r"will restart worker group"
)
_STATE = lazy_regex.compile(
    r"\[(?P<role>[^\]]+)\] (?P<what>Starting worker group|Stopping worker group"
    r"|worker group successfully finished|Detected \d+ new nodes from group_rank=\d+)"
    r"|(?P<local>Local worker group finished \((?:WorkerState\.)?(?P<state>\w+)\))"
    r"|(?P<failed>[Ww]orker group (?:FAILED|UNHEALTHY|failed)\b)"
)
_DSTATE = lazy_regex.compile(r"Worker pid=(?P<pid>\d+) stuck in uninterruptible sleep")
_NO_EXIT = lazy_regex.compile(rf"Process (?P<pid>\d+) did not exit after (?P<sig>{_SIG})")
_RDZV_WAIT = lazy_regex.compile(r"\[(?P<role>[^\]]+)\] Rendezvous'ing worker group")
_RDZV_ERROR = lazy_regex.compile(
    r"^(?P<type>(?:[A-Za-z_]\w*\.)*(?P<short>Rendezvous\w*Error))(?::\s*(?P<text>.*))?$"
)
_NODE = lazy_regex.compile(r"The node '(?P<node>[^']*)' (?P<what>has failed to .*|has joined round .*|attempts to join .*)")
_JOINED = lazy_regex.compile(r"as rank (?P<rank>\d+) in a world of size (?P<size>\d+)")
_DEAD = lazy_regex.compile(r"Detected dead node '(?P<node>[^']*)'|(?P<removed>have been removed from the rendezvous)")


def _worker_failed(body: str) -> dict | None:
    m = _WORKER_FAILED.search(body)
    if not m:
        return None
    code = int(m["code"])
    return {
        "kind": "torchrun.worker_failed", "exit_code": code, "local_rank": int(m["lr"]), "pid": int(m["pid"]),
        "signal": signal_for_exit(code), "value": (m["what"] or "").strip() or None,
    }


# DeepSpeed's launcher (launch.py sigkill_handler) reports the first non-zero exit code among its workers with a
# command line: "[..., 'main.py', '--local_rank=1', ...] exits with return code = -9". That command is the
# last one the launcher spawned (a loop variable), not the failed worker's: its --local_rank names the failed
# worker only when it is 0 (the launcher ran one worker).
_LAUNCHER_EXIT = lazy_regex.compile(r"\bexits with return code = (?P<code>-?\d+)")
_ONLY_WORKER_ARG = lazy_regex.compile(r"'--local[_-]rank[= ]0'")


def _launcher_exit(body: str) -> dict | None:
    m = _LAUNCHER_EXIT.search(body)
    if not m or m["code"] == "0":
        return None
    code = int(m["code"])
    event = {"kind": "torchrun.worker_failed", "level": "error", "exit_code": code, "signal": signal_for_exit(code),
             "key": "deepspeed"}
    if _ONLY_WORKER_ARG.search(body):
        event["local_rank"] = 0
    return event


# torch.multiprocessing.spawn (mp.spawn, detectron2's launch, ...) names the failed child by its process
# index, which is the local rank it was given: "process 3 terminated with signal SIGKILL",
# "process 0 terminated with exit code 1"
_SPAWN_EXIT = lazy_regex.compile(
    rf"\b[Pp]rocess (?P<lr>\d{{1,5}}) terminated with (?:signal (?P<sig>{_SIG})|exit code (?P<code>-?\d+))")


def _spawn_exit(body: str) -> dict | None:
    m = _SPAWN_EXIT.search(body)
    if not m or m["code"] == "0":
        return None
    sig = signal_name(m["sig"]) if m["sig"] else None
    code = int(m["code"]) if m["code"] else None
    return {"kind": "torchrun.worker_failed", "level": "error", "local_rank": int(m["lr"]), "exit_code": code,
            "signal": sig, "key": "spawn"}


def _flat_row(body: str) -> dict | None:
    m = FLAT_ROW.search(body)
    if not m:
        return None
    code = int(m["code"])
    return {"kind": "torchrun.worker_failed", "level": "error", "rank": int(m["rank"]), "local_rank": int(m["lr"]),
            "exit_code": code, "pid": int(m["pid"]), "signal": signal_for_exit(code)}


def _signals(body: str) -> dict | None:
    for pattern in (_SENDING, _CLOSING):
        m = pattern.search(body)
        if m:
            return {"kind": "torchrun.sigterm_sent", "pid": int(m["pid"]), "signal": signal_name(m["sig"])}
    m = _FORCED.search(body)
    if m:
        return {"kind": "torchrun.sigterm_sent", "pid": int(m["pid"]), "signal": signal_name(m["kill"]),
                "value": "forced"}
    for pattern in (_DEATH, _GOT_TERM):
        m = pattern.search(body)
        if m:
            return {"kind": "torchrun.signal_received", "signal": signal_name(m["sig"])}
    m = _SIGNAL_EXC.search(body)
    if m and not body[:1].isspace():
        return {"kind": "torchrun.signal_received", "pid": int(m["pid"]), "signal": signal_name(m["sig"]),
                "exc_type": "SignalException" if "SignalException" in body else None}
    return None


def _group_state(body: str) -> dict | None:
    m = _RESTART.search(body)
    if m:
        left, most = int(m["left"]), int(m["max"])
        return {"kind": "torchrun.restart", "attempt": most - left + 1, "value": m["state"], "key": m["role"]}
    m = _RDZV_WAIT.search(body)
    if m:
        return {"kind": "torchrun.rendezvous", "value": "waiting", "key": m["role"]}
    m = _STATE.search(body)
    if m:
        if m["local"]:
            return {"kind": "torchrun.state", "value": m["state"]}
        if m["failed"]:
            return {"kind": "torchrun.state", "value": "FAILED"}
        return {"kind": "torchrun.state", "value": m["what"], "key": m["role"]}
    m = _DSTATE.search(body) or _NO_EXIT.search(body)
    if m:
        return {"kind": "torchrun.state", "pid": int(m["pid"]), "value": "stuck"}
    m = _NPROC.search(body)
    if m:
        return {"kind": "torchrun.config", "key": "nproc_per_node", "value": m["value"]}
    return None


def _rendezvous(body: str) -> dict | None:
    if not body[:1].isspace():
        m = _RDZV_ERROR.match(body.strip())
        if m:
            return {"kind": "torchrun.rendezvous_error", "exc_type": m["type"], "value": m["short"],
                    "level": "error"}
    m = _NODE.search(body)
    if m:
        if m["what"].startswith("has failed"):
            return {"kind": "torchrun.rendezvous_error", "key": m["node"], "value": "node failed"}
        event = {"kind": "torchrun.rendezvous", "key": m["node"], "value": "joined"}
        joined = _JOINED.search(body)
        if joined:
            event["nranks"] = int(joined["size"])
        elif m["what"].startswith("attempts"):
            event["value"] = "joining"
        return event
    m = _DEAD.search(body)
    if m:
        return {"kind": "torchrun.rendezvous_error", "key": m["node"], "value": "dead node"}
    return None


MATCHERS: tuple[Callable[[str], dict | None], ...] = (_worker_failed, _flat_row, _launcher_exit, _spawn_exit, _signals,
                                                      _group_state, _rendezvous)


def match_agent_line(body: str) -> dict | None:
    for matcher in MATCHERS:
        event = matcher(body)
        if event is not None:
            return event
    return None
