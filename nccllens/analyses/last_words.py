"""What a log ends on: a process whose last lines are connection retries never got connected.

A client that retries its connection to the store or a peer and then goes on to train leaves many lines
after the retries; one whose log ends while it still retries (or gave up) never reached its peer,
whatever the log level of the retry line. Judged per file, from the end-of-file marker.
"""

from __future__ import annotations

import polars as pl

from nccllens.analyses.common import make_finding
from nccllens.engine.peers import address_book, named_in_message, target_of
from nccllens.repeats import last_line
from nccllens.report.model import Finding

TAIL_LINES = 3  # the retry is among the last lines of its file
# errno of a connection that did not come up: refused, timed out, host or network unreachable
NOT_CONNECTED = (110, 111, 113, 101, 104)
# (also a launcher's own waiting for endpoints or its store that are not up: "server not ready, wait 3 sec to retry",
# "not ready endpoints:[...]", "Retry to connect to <host>:<port> while the server is not yet listening")
RETRY_WORDS = (r"(?i)retrying|retry to connect|wait \d+ ?s(?:ec)?\w* to retry|not ready endpoints|failed to connect"
               r"|connect(?:ion)? (?:refused|timed out)|no route to host")


def ends_connecting(events: pl.DataFrame, lang: str) -> list[Finding]:
    ends = events.filter(pl.col("kind") == "other.file_end").group_by("file").agg(pl.col("line").max().alias("_end"))
    if not ends.height:
        return []
    message = pl.col("message").cast(pl.String).fill_null("")
    retry = (pl.col("kind").cast(pl.String).is_in(["torch.store_error", "nccl.info", "nccl.warn", "other.text"])
             & (pl.col("error_code").is_in(NOT_CONNECTED) | message.str.contains(RETRY_WORDS)))
    tails = (events.filter(retry).join(ends, on="file")
             .filter(pl.col("_end") - last_line().cast(pl.Int64) < TAIL_LINES))
    if not tails.height:
        return []
    # what the retries at the ends of the files try to reach: their parsed peer, else the store or endpoint their
    # words name (a launcher's wait alternates a line that names nothing with one that lists the endpoints)
    peers = sorted({str(p) for p in tails["peer"].drop_nulls().to_list()}
                   | {named_in_message(m) for m in tails.filter(pl.col("peer").is_null())["message"].to_list()} - {None})
    tails = tails.sort(["file", "line"]).group_by("file", maintain_order=True).last().sort(["file"])
    ranks = tails["rank"].drop_nulls().unique().to_list()
    hosts = tails["host"].drop_nulls().cast(pl.String).unique().to_list()
    # the target that could not be reached is the culprit, where the retries name one off their own hosts
    book = address_book(events) if peers else None
    targets = [t for t in (target_of(p, book.hosts, book.known) for p in peers) if t is not None] if book else []
    if targets:
        ranks = sorted({r for t in targets for r in t.ranks})
        hosts = sorted({h for t in targets for h in t.hosts})
    target = ", ".join(peers[:4]) if peers else ("它要连接的对端" if lang == "zh" else "its peer")
    return [make_finding("AN-ENDS-CONNECTING", lang, tails.drop("_end"), ranks=ranks, hosts=hosts,
                         target=target, files=tails.height)]
