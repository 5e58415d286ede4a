"""The inner error of a store / rendezvous / transport wrapper, as a class.

Wrappers (c10d ``TCPStore`` calls, ``DistStoreError``/``DistNetworkError``, ``Rendezvous*Error`` with "See
inner exception", the ncclUniqueId fetch's ``store->get(...) got error: …``, Gloo ``connectFullMesh failed
with …``, Horovod's Gloo store) say *where* a failure surfaced; the error they wrap says *what* it was:

- ``closed``: the other end went away (``Connection reset by peer``, ``Broken pipe``, ``Connection closed by
  peer``, ``Failed to recv, got 0 bytes``, ``EOF``) → peer_exited;
- ``refused``: nobody could be reached (``Connection refused``, ``No route to host``, ``Network is
  unreachable``, a name that does not resolve) → network_unreachable;
- ``timeout``: a wait or a connect that timed out → rendezvous_timeout for a store wait, network_unreachable
  for a connect.
"""

from __future__ import annotations

from nccllens import lazy_regex

_CLOSED = lazy_regex.compile(r"(?i)reset by peer|broken pipe|closed by peer|got 0 bytes|connection was likely closed"
                     r"|\bEOF\b|end of file|connection closed|ECONNRESET|EPIPE")
_REFUSED = lazy_regex.compile(r"(?i)connection refused|no route to host|network is unreachable|name or service not known"
                      r"|gai error|cannot be retrieved|temporary failure in name resolution|ECONNREFUSED|EHOSTUNREACH")
_TIMEOUT = lazy_regex.compile(r"(?i)timed? ?out|timeout|ETIMEDOUT")
_CONNECT = lazy_regex.compile(r"(?i)connect")

# the text a one-line wrapper carries after its own words
_EMBEDDED = (
    lazy_regex.compile(r"store->get\('[^']*'\) got error: (?P<inner>.+)$"),
    lazy_regex.compile(r"connectFullMesh failed with (?:\[[^\]]*\] ?)?(?P<inner>.+)$"),
    lazy_regex.compile(r"(?i)gloo.*?store.*?(?:error|failed)[^:]*: (?P<inner>.+)$"),
)


def inner_text(message: str) -> str | None:
    """The inner error a one-line wrapper message carries, or None."""
    for rx in _EMBEDDED:
        m = rx.search(message or "")
        if m:
            return m["inner"].strip()
    return None


def inner_class(text: str | None) -> str | None:
    """``closed``, ``refused``, ``timeout`` or None for an inner error text."""
    if not text:
        return None
    for name, rx in (("closed", _CLOSED), ("refused", _REFUSED), ("timeout", _TIMEOUT)):
        if rx.search(text):
            return name
    return None


def inner_category(cls: str | None, wrapper: str) -> str | None:
    """The taxonomy category an inner error class gives a wrapper (``wrapper``: its own message)."""
    if cls == "closed":
        return "peer_exited"
    if cls == "refused":
        return "network_unreachable"
    if cls == "timeout":
        return "network_unreachable" if _CONNECT.search(wrapper or "") else "rendezvous_timeout"
    return None
