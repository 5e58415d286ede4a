"""TCPStore / c10d socket / gloo transport messages -> ``torch.store_error``, ``torch.store_timeout``,
``torch.gloo_error`` fields. Formats: shared/reference/pytorch_c10d.md §2.10, §3, §4.

Each ``classify_*`` returns a dict of event fields (``kind`` included) or ``None``.
"""

from __future__ import annotations

import re

from nccllens import lazy_regex
from nccllens.parse.torch_patterns import duration_ms

_COMM_ID = lazy_regex.compile(
    r"\[(?P<me>\d+)\] is setting up NCCL communicator and retr\w+ ncclUniqueId from \[(?P<root>\d+)\]"
    r"(?: via c10d key-value store by key '(?P<key>[^']*)')?(?:, but store->get\('[^']*'\) got error: (?P<err>.*))?",
    re.IGNORECASE,  # ≤1.13 spelled it "retreiving NcclUniqueId"
)
_WAIT_KEYS = lazy_regex.compile(r"wait timeout after (?P<ms>\d+)ms(?:, keys: (?P<keys>.+?))?\s*$")
_FILESTORE = lazy_regex.compile(r"Timeout waiting for key: (?P<key>\S+) after (?P<ms>\d+) ms")
_CLIENTS = lazy_regex.compile(r"Timed out after (?P<s>\d+) seconds waiting for clients\. (?P<n>\d+)/(?P<w>\d+) clients joined")
_BARRIER = lazy_regex.compile(
    r"Timed out initializing process group in store based barrier on rank:? (?P<r>\d+), for key: (?P<key>\S+) "
    r"\(world_size=(?P<w>\d+), (?:worker_count|num_workers_joined)=(?P<n>\d+), timeout=(?P<t>[^)]*)\)"
)
# PyTorch ≤ 2.0 prints this every 10 s while init_process_group waits for the others, then "Completed"
_BARRIER_WAIT = lazy_regex.compile(
    r"Waiting in store based barrier to initialize process group for rank: (?P<r>\d+), key: (?P<key>\S+) "
    r"\(world_size=(?P<w>\d+), worker_count=(?P<n>\d+), timeout=(?P<t>[^)]*)\)"
)
_BARRIER_DONE = lazy_regex.compile(r"(?:Rank (?P<r>\d+): )?Completed store-based barrier for key:\s*(?P<key>\S+) with (?P<w>\d+) nodes")
_WAIT_INPUT = lazy_regex.compile(r"waitForInput: socket SocketImpl\([^)]*remote=(?P<peer>[^)\s]+)\) timed out after (?P<ms>\d+)ms")
_CLIENT_TIMEOUT = lazy_regex.compile(
    r"The client socket has timed out after (?P<n>\d+)(?P<unit>ms|s) while trying to connect to "
    r"\((?P<host>[^,]+), (?P<port>\d+)\)"
)
_CLIENT_RETRY = lazy_regex.compile(
    r"TCP client failed to connect/validate to host (?P<peer>\S+) - (?P<what>retrying|timed out) "
    r"\(try=\d+, timeout=(?P<ms>\d+)ms"
)
# the same client giving up for another reason: "... to host slinky-0:29400 - Name or service not known"
_CLIENT_FAILED = lazy_regex.compile(r"TCP client failed to connect/validate to host (?P<peer>\S+) - (?P<what>[^(]+?)\s*(?:\(|$)")
_CLIENT_ERRNO = lazy_regex.compile(
    r"The client socket has failed to connect to (?P<peer>\S+?) \((?:errno|system error): (?P<code>-?\d+) - "
    r"(?P<text>[^)]*)\)"
)
# after every address of the name failed: the name as given (MASTER_ADDR), e.g. "(6841231, 47389)"
_CLIENT_ANY = lazy_regex.compile(r"The client socket has failed to connect to any network address of "
                         r"\((?P<host>[^,()]+), (?P<port>\d+)\)")
_SERVER_BIND = lazy_regex.compile(r"The server socket has failed to bind to (?P<peer>\S+?) \(errno: (?P<code>\d+) - (?P<text>[^)]*)\)")
_SERVER_LIBUV = lazy_regex.compile(r"failed to listen on any local network address\. port: (?P<port>\d+).*?code: (?P<code>-?\d+), "
                           r"name: (?P<name>\w+)(?:, message: (?P<text>.*))?")
_SERVER_ANY = lazy_regex.compile(r"The server (?:socket has failed to listen on any local network address|could not be "
                         r"initialized on any address for port=(?P<port>\d+))")
_GAI = lazy_regex.compile(r"The IPv[46] network addresses of \((?P<host>[^,]+), (?P<port>\d+)\) cannot be retrieved "
                  r"\(gai error: (?P<code>-?\d+) - (?P<text>[^)]*)\)")
_SOCKET_IO = lazy_regex.compile(r"(?P<fn>recvValue\w*|recvBytes|sendBytes|doWait\w*) failed on SocketImpl\([^)]*?"
                        r"(?:remote=(?P<peer>[^)\s]+))?\): (?P<text>.*)$")
_SHOULD_DUMP = lazy_regex.compile(r'Failed to check the "should dump" flag on TCPStore.*?(?:with error: (?P<text>.*))?$')
_STORE_MISC = lazy_regex.compile(r"(?:DistNetworkError|RuntimeError): (?P<text>Connection reset by peer|Broken pipe|"
                         r"Failed to recv, got 0 bytes.*|failed to recv, got 0 bytes.*|connect\(\) timed out.*)|"
                         r"TCPStoreMasterDaemon::run\(\) failed with exception: (?P<daemon>.*)")
_GLOO_TIMEOUT = lazy_regex.compile(r"Timed out waiting (?P<ms>\d+)ms for (?P<op>recv|send) operation to complete")
_GLOO_PEER = lazy_regex.compile(r"(?:Connection closed by peer|Read error) (?P<peer>\[[^\]]*\]:\d+)")
_GLOO_SIZE = lazy_regex.compile(r"(?P<a>\d+) vs (?P<b>\d+)\. Received data size doesn't match expected size")
_TIMEOUT_WORDS = ("timeout", "timed out")


def missing_rank_from_key(key: str) -> int | None:
    """The rank whose write a waiter was missing, when the key names it (PyTorch/gloo key shapes).

    gloo full-mesh connect: ``.../cpu//<device>/<rank>`` (each rank writes its own address under its rank);
    explicit ``rank_<N>`` keys; NCCL p2p ``<low>:<high>`` (the lower rank writes the ncclUniqueId).
    """
    key = key.strip().rstrip(".,")
    m = re.search(r"//cpu//\d+/(\d+)$", key) or re.search(r"(?:^|/)rank_(\d+)$", key)
    if m:
        return int(m[1])
    m = re.search(r"//cuda//(\d+):(\d+)$", key)
    if m:
        return min(int(m[1]), int(m[2]))
    return None


def classify_store(body: str) -> dict | None:
    m = _COMM_ID.search(body)
    if m:
        err = m["err"] or ""
        timeout = any(w in err.lower() for w in _TIMEOUT_WORDS) or "Socket Timeout" in err
        out = {"kind": "torch.store_timeout" if timeout else "torch.store_error",
               "key": m["key"], "peer": f"rank {m['root']}", "value": f"waiting rank {m['me']}"}
        if timeout:
            out["_missing_rank"] = int(m["root"])
        w = _WAIT_KEYS.search(err)
        if w:
            out["timeout_ms"] = int(w["ms"])
        return out
    m = _BARRIER.search(body)
    if m:
        return {"kind": "torch.store_timeout", "key": m["key"], "nranks": int(m["w"]),
                "value": f"{m['n']}/{m['w']} joined", "timeout_ms": duration_ms(m["t"]), "_self_rank": int(m["r"])}
    m = _BARRIER_WAIT.search(body)
    if m:
        return {"kind": "torch.store_barrier_wait", "key": m["key"], "nranks": int(m["w"]), "level": "info",
                "value": f"{m['n']}/{m['w']} joined", "timeout_ms": duration_ms(m["t"]), "_self_rank": int(m["r"])}
    m = _BARRIER_DONE.search(body)
    if m:
        out = {"kind": "torch.store_barrier_done", "key": m["key"], "nranks": int(m["w"]), "level": "info"}
        if m["r"]:  # a prefix reader may have taken "Rank 0: " as the line's rank already
            out["_self_rank"] = int(m["r"])
        return out
    m = _WAIT_KEYS.search(body)
    if m:
        out = {"kind": "torch.store_timeout", "timeout_ms": int(m["ms"]), "key": m["keys"]}
        missing = missing_rank_from_key(m["keys"].split(",")[0]) if m["keys"] else None
        if missing is not None:
            out["_missing_rank"] = missing
        return out
    m = _FILESTORE.search(body)
    if m:
        out = {"kind": "torch.store_timeout", "key": m["key"], "timeout_ms": int(m["ms"])}
        missing = missing_rank_from_key(m["key"])
        if missing is not None:
            out["_missing_rank"] = missing
        return out
    m = _CLIENTS.search(body)
    if m:
        return {"kind": "torch.store_timeout", "timeout_ms": int(m["s"]) * 1000, "nranks": int(m["w"]),
                "value": f"{m['n']}/{m['w']} joined"}
    m = _WAIT_INPUT.search(body)
    if m:
        return {"kind": "torch.store_timeout", "timeout_ms": int(m["ms"]), "peer": m["peer"]}
    if "Socket Timeout" in body or "Stop_waiting response is expected" in body:
        return {"kind": "torch.store_timeout"}
    return _classify_socket(body)


def _classify_socket(body: str) -> dict | None:
    m = _CLIENT_RETRY.search(body)
    if m:
        return {"kind": "torch.store_error", "peer": m["peer"], "timeout_ms": int(m["ms"]), "value": m["what"]}
    m = _CLIENT_FAILED.search(body)
    if m:
        return {"kind": "torch.store_error", "peer": m["peer"], "value": m["what"]}
    m = _CLIENT_TIMEOUT.search(body)
    if m:
        ms = int(m["n"]) * (1 if m["unit"] == "ms" else 1000)
        return {"kind": "torch.store_error", "peer": f"{m['host']}:{m['port']}", "timeout_ms": ms}
    m, named = _CLIENT_ERRNO.search(body), _CLIENT_ANY.search(body)
    # the message names the host as given (MASTER_ADDR) before the address it resolved to: that name is the peer
    given = f"{named['host']}:{named['port']}" if named else None
    if m:
        return {"kind": "torch.store_error", "peer": given or m["peer"], "error_code": int(m["code"]), "value": m["text"]}
    if given:
        return {"kind": "torch.store_error", "peer": given, "value": "no address reachable"}
    m = _SERVER_BIND.search(body)
    if m:
        return {"kind": "torch.store_error", "peer": m["peer"], "error_code": int(m["code"]), "value": m["text"]}
    m = _SERVER_LIBUV.search(body)
    if m:
        return {"kind": "torch.store_error", "peer": f":{m['port']}", "error_code": abs(int(m["code"])),
                "value": m["name"]}
    m = _GAI.search(body)
    if m:
        return {"kind": "torch.store_error", "peer": f"{m['host']}:{m['port']}", "error_code": int(m["code"]),
                "value": m["text"]}
    m = _SHOULD_DUMP.search(body)
    if m:
        return {"kind": "torch.store_error", "key": "should_dump", "value": (m["text"] or "").strip() or None}
    m = _SOCKET_IO.search(body)
    if m:
        return {"kind": "torch.store_error", "peer": m["peer"], "key": m["fn"], "value": m["text"].strip()}
    m = _SERVER_ANY.search(body)
    if m:
        return {"kind": "torch.store_error", "peer": f":{m['port']}" if m["port"] else None}
    m = _STORE_MISC.search(body)
    if m:
        return {"kind": "torch.store_error", "value": (m["text"] or m["daemon"] or "").strip()}
    return None


def classify_gloo(body: str) -> dict | None:
    m = _GLOO_TIMEOUT.search(body)
    if m:
        return {"kind": "torch.gloo_error", "timeout_ms": int(m["ms"]), "value": f"{m['op']} timeout"}
    m = _GLOO_PEER.search(body)
    if m:
        what = "connection closed by peer" if "closed by peer" in body else "read error"
        return {"kind": "torch.gloo_error", "peer": m["peer"], "value": what}
    m = _GLOO_SIZE.search(body)
    if m:
        return {"kind": "torch.gloo_error", "value": "size mismatch", "detail": f"received {m['a']} vs {m['b']} bytes"}
    return None
