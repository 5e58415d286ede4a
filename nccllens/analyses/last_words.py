"""What a log ends on: a process whose last lines are connection retries never got connected.

A client that retries its connection to the store or a peer and then goes on to train leaves many lines
after the retries; one whose log ends while it still retries (or gave up) never reached its peer,
whatever the log level of the retry line. Judged per file, from the end-of-file marker.
"""

from __future__ import annotations

import polars as pl

from nccllens.analyses.common import make_finding
from nccllens.repeats import last_line
from nccllens.report.model import Finding

TAIL_LINES = 3  # the retry is among the last lines of its file
# errno of a connection that did not come up: refused, timed out, host or network unreachable
NOT_CONNECTED = (110, 111, 113, 101, 104)
RETRY_WORDS = r"(?i)retrying|failed to connect|connect(?:ion)? (?:refused|timed out)|no route to host"


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
    tails = tails.sort(["file", "line"]).group_by("file", maintain_order=True).last().sort(["file"])
    peers = sorted({str(p) for p in tails["peer"].drop_nulls().to_list()})
    ranks = tails["rank"].drop_nulls().unique().to_list()
    hosts = tails["host"].drop_nulls().cast(pl.String).unique().to_list()
    target = ", ".join(peers[:4]) if peers else ("它要连接的对端" if lang == "zh" else "its peer")
    return [make_finding("AN-ENDS-CONNECTING", lang, tails.drop("_end"), ranks=ranks, hosts=hosts,
                         target=target, files=tails.height)]
