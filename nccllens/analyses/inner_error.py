"""Inner error over wrapper: a store / rendezvous / transport wrapper takes its category from the error it
wraps (``nccllens.parse.inner_error``). A ``RendezvousConnectionError`` whose inner exception is
``Connection reset by peer`` is a peer (the store's host) that went away, not an unreachable network; an
ncclUniqueId fetch whose ``store->get`` got ``Broken pipe`` is rank 0 gone, not a rendezvous timeout; Gloo
``connectFullMesh failed with … Connect timeout`` is a peer that could not be reached.

The wrapper and its inner error come from one line (``… got error: <inner>``) or from one chained
traceback (the outer exception names a store or rendezvous; the chain's first exception is the inner one).
The culprit is the peer the wrapper names (the rank that publishes the unique id, the store address),
never the reporters (they only lost the connection). Only closed connections make a finding here: a wrapped
timeout or refused connect is what the wrapper's own rule, or the unclaimed-failure fallback, already says.
"""

from __future__ import annotations

import polars as pl

from nccllens import lazy_regex
from nccllens.analyses.common import make_finding
from nccllens.analyses.reads import reads
from nccllens.engine.peers import address_book, target_of
from nccllens.parse.inner_error import inner_category, inner_class, inner_text
from nccllens.report.model import Finding

_WRAPPER = lazy_regex.compile(r"Rendezvous\w*Error|DistStoreError|DistNetworkError|C10d store|TCPStore|c10d key-value store"
                      r"|See inner exception|connectFullMesh|store->get")
_FIRST = lazy_regex.compile(r"(?m)^first: (?P<inner>.+)$")
_KINDS = ("python.traceback", "python.exception", "torch.store_error", "torch.store_timeout", "torch.gloo_error",
          "torch.nccl_error", "torchrun.rendezvous_error", "other.text")


def _inner(message: str, detail: str | None, kind: str) -> str | None:
    text = inner_text(message)
    if text is not None:
        return text
    if kind == "python.traceback" and detail and _WRAPPER.search(message):
        m = _FIRST.search(detail)
        if m and m["inner"].strip() != message.strip():
            return m["inner"]
    return None


@reads(*_KINDS)
def inner_over_wrapper(events: pl.DataFrame, lang: str) -> list[Finding]:
    cand = events.filter(pl.col("kind").cast(pl.String).is_in(_KINDS) & pl.col("message").is_not_null()
                         & pl.col("message").str.contains(_WRAPPER.pattern))
    if not cand.height:
        return []
    groups: dict[tuple[str, str], list[int]] = {}
    said: dict[tuple[str, str], str] = {}
    for i, (message, detail, kind) in enumerate(cand.select("message", "detail", pl.col("kind").cast(pl.String))
                                                .iter_rows()):
        inner = _inner(message, detail, kind)
        category = inner_category(inner_class(inner), message)
        # a timeout or a refused connect is what the wrapper's own rule (or the unclaimed-failure fallback)
        # already says; a closed connection is what it gets wrong
        if category == "peer_exited":
            key = (category, inner_class(inner) or "")
            groups.setdefault(key, []).append(i)
            said.setdefault(key, " ".join(inner.split())[:160])
    if not groups:
        return []
    book = address_book(events)
    out = []
    for (category, cls), rows in sorted(groups.items()):
        hits = cand[rows]
        ranks: set[int] = set()
        hosts: set[str] = set()
        for peer in hits["peer"].drop_nulls().unique().to_list():
            target = target_of(peer, book.hosts, book.known)
            if target is not None:
                ranks.update(target.ranks)
                hosts.update(target.hosts)
        if ranks and not hosts and all(r in book.rank_hosts for r in ranks):
            hosts = {book.rank_hosts[r] for r in ranks}
        if not ranks and not hosts and cls != "closed":  # could not reach: the reporters, as far as known
            ranks = set(hits["rank"].drop_nulls().to_list())
            hosts = {str(h) for h in hits["host"].drop_nulls().to_list()}
        out.append(make_finding("AN-INNER-ERROR", lang, hits, ranks=ranks, hosts=hosts, category=category,
                                inner=said[(category, cls)]))
    return out
