"""The torchrun / torch.distributed.elastic agent (family ``torchrun``).

Every header generation is accepted (``nccllens.parse.headers.split_header``): ≤2.0
``LEVEL:logger:msg``, ≈2.1–2.2 ``[date,ms] logger: [LEVEL] msg``, ≈2.3+ ``W1122 … file.py:N] msg``,
and no header at all (``python -m torch.distributed.run`` in 2.13).

One-line messages are matched in ``torchrun_agent``; the launch config block, the rendezvous
result and the ChildFailedError table are read forward from their first line in
``torchrun_records`` (so the PREFILTER needs only those first lines).
"""

from __future__ import annotations

from collections.abc import Iterator

from nccllens.parse.base import FileContext, Line
from nccllens.parse.headers import split_header
from nccllens.parse.torchrun_agent import match_agent_line
from nccllens.parse.torchrun_records import (
    CONFIG_START,
    ORPHAN_FIELD,
    RESULT_START,
    SECTION,
    config_events,
    orphan_entry_events,
    result_event,
    table_events,
)

FAMILY = "torchrun"

PREFILTER = (
    r"Starting elastic_operator with launch configs|Using nproc_per_node="
    r"|Rendezvous'ing worker group|Rendezvous complete for workers|[Ww]orker group (?:FAILED|UNHEALTHY|failed)"
    r"|(?:Starting|Stopping) worker group|worker group successfully finished|Local worker group finished"
    r"|new nodes from group_rank="
    r"|failed \(exitcode: -?\d+\) local_rank: |\(local[_ ]rank: ?\d+\)\s*,?\s*exitcode|exits with return code = -?\d+"
    r"|[Pp]rocess \d+ terminated with (?:signal|exit code)"
    r"|Sending process \d+ closing signal|Closing process \d+ via signal|Unable to shutdown process \d+ via"
    r"|death signal, shutting down workers|Got termination signal|Process \d+ got signal: "
    r"|stuck in uninterruptible sleep|did not exit after"
    r"|Rendezvous\w*Error|The node '[^']*' (?:has failed to|has joined round|attempts to join)"
    r"|Detected dead node|have been removed from the rendezvous"
    r"|^\s*(?:Root Cause \(first observed failure\)|Root Cause|Failures|Other Failures):\s*$"
    # an entry pasted without its head starts at its time row, padded to torchrun's fixed key width (not
    # indented where the paste was: a block indented as a whole is read dedented)
    r"|^\s{0,4}time      : \d{4}-\d\d-\d\d_\d\d:\d\d:\d\d\s*$"
)


def _events_for(line: Line, ctx: FileContext) -> list[dict]:
    header, body = split_header(line.message, ctx.year)
    section = SECTION.match(body)
    if section:
        return table_events(line, section["name"], ctx)
    if ORPHAN_FIELD.match(body):
        return orphan_entry_events(line, ctx)
    if CONFIG_START.search(body):
        events = config_events(line, ctx)
    else:
        m = RESULT_START.search(body)
        if m:
            events = [result_event(line, m, ctx)]
        else:
            event = match_agent_line(body)
            events = [event] if event is not None else []
    base = {"message": body.strip(), "level": header.level if header else "info"}
    if header is not None:
        if header.ts is not None:
            base["ts"], base["ts_kind"] = header.ts, header.ts_kind
        if header.pid is not None:
            base["pid"] = header.pid
    return [{**base, **{k: v for k, v in e.items() if v is not None or k not in base}} for e in events]


def parse(lines: list[Line], ctx: FileContext) -> Iterator[dict]:
    read_until = 0  # the last line of the failure table read so far: its rows are not read again
    for line in lines:
        if line.line <= read_until:
            continue
        try:
            events = _events_for(line, ctx)
        except Exception:  # noqa: BLE001 - one odd line must not cost the file its events
            continue
        for event in events:
            event["family"] = FAMILY
            if event.get("kind") in ("torchrun.failure", "torchrun.root_cause"):
                read_until = max(read_until, event.get("_last_line") or 0)
            yield event
