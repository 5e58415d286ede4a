"""Stage 2 of extraction: one source of bytes → its event rows, inventory entry and dense summaries.

A pure function of its input. Per newline-aligned block (``parse.lines.blocks``): the plan's scan
(``parse.pieces``, the compiled engine or the plain path's keys) picks the pieces read as lines, the
survivors are chosen (``parse.survivors.kept_rows``) and only those reach the family parsers in Python.
Structured inputs (JSON, Parquet shards) are read by ``nccllens.structured``.
"""

from __future__ import annotations

import os
from datetime import datetime

import polars as pl

from nccllens import events as ev
from nccllens import summaries as sm
from nccllens.extract import engine
from nccllens.extract.plan import as_plan, rule_groups
from nccllens.ingest.layout import PathHints, hints_for
from nccllens.ingest.sniff import classify, skip_leading_nuls
from nccllens.ingest.sources import ArchiveLimit, MemberUnreadable, Source
from nccllens.parse.base import FileContext
from nccllens.parse.dense import empty_partial, merge, owned
from nccllens.parse.dense_rows import describe
from nccllens.parse.facts_frame import stated_host_of
from nccllens.parse.guard import cut_note
from nccllens.parse.lines import ReadStats, blocks, frame
from nccllens.parse.pastes import WRAPPED_PIECE
from nccllens.parse.pieces import candidate_lines
from nccllens.parse.survivors import fill_path_hints, parse_block
from nccllens.prefilter import Plan
from nccllens.regex_groups import Patterns
from nccllens.repeats import collapse
from nccllens.report.model import InputFile
from nccllens.structured import STRUCTURED, OverBound, read_structured


def summarised_hosts(summary_rows: list[dict]) -> dict[str, set[str]]:
    """Per file, the hosts its summarised NCCL lines name (their ``host:pid:tid`` prefix): stated by the log."""
    hosts: dict[str, set[str]] = {}
    for r in summary_rows:
        if r.get("host") and str(r.get("family") or "").startswith("nccl."):
            hosts.setdefault(r["file"], set()).add(str(r["host"]))
    return hosts


def file_end_event(path: str, line_no: int, raw: str, hints: PathHints) -> dict:
    """Where a log file stops: lets the analyses see a node whose log ends without any error."""
    raw = raw.replace(WRAPPED_PIECE, "")  # a last row that was a piece of the line above it (``rejoin_wrapped``)
    return {"file": path, "line": line_no, "raw": raw[:2000], "kind": "other.file_end", "family": "other",
            "level": "debug", "message": f"end of file after {line_no} lines", "host": hints.host,
            "rank": hints.rank, "local_rank": hints.local_rank, "attempt": hints.attempt}


def year_for(source: Source) -> int:
    try:
        if "!" not in source.path and os.path.exists(source.path):
            return datetime.fromtimestamp(os.path.getmtime(source.path)).year
    except (OSError, ValueError, OverflowError):
        pass
    return datetime.now().year


def extract_source(source: Source, pattern: Plan, rule_pattern: Patterns = (),
                   host: str | None = None, rank: int | None = None) -> tuple[pl.DataFrame, InputFile]:
    """Read one source and return its events and its inventory entry. Never raises on bad input.

    ``pattern`` is ``combined_prefilter(rule_patterns)``; ``rule_pattern`` the rules' patterns (a list,
    or already grouped by ``pattern_groups``). ``extract_source_tables`` also gives the dense summaries."""
    events, info, _ = extract_source_tables(source, pattern, rule_pattern, host, rank)
    return events, info


def extract_source_tables(source: Source, pattern: Plan, rule_pattern: Patterns = (), host: str | None = None,
                          rank: int | None = None) -> tuple[pl.DataFrame, InputFile, pl.DataFrame]:
    """``extract_source`` with the source's summary table (``nccllens.summaries``) as a third item."""
    pattern = as_plan(pattern)
    rule_pattern = rule_groups(rule_pattern)
    info = InputFile(path=source.path, skipped=source.skipped, notes=list(source.notes))
    if source.skipped:
        return ev.empty(), info, sm.empty()
    path_hints = hints_for(source.scoped)
    hints = PathHints(host or path_hints.host, rank if rank is not None else path_hints.rank,
                      path_hints.local_rank, path_hints.attempt)
    info.host, info.rank = hints.host, hints.rank
    stats = ReadStats()
    rows: list[dict] = []
    head: pl.Series | None = None  # the first block's (candidate) lines: where a file states its host
    regular: list[pl.DataFrame] = []  # events of the regular NCCL lines, parsed as tables (``parse.nccl_frame``)
    dense = empty_partial()  # the dense families' groups so far, folded block by block (``merge``)
    summary = sm.empty()
    summary_rows: list[dict] = []
    chunks = source.chunks()
    try:
        first, nuls = skip_leading_nuls(next(chunks, b""), chunks)
        if nuls:
            stats.note(f"{nuls} NUL bytes at the start skipped (a file truncated while written)")
        kind, skip = classify(source.path, first[:65536])
        info.kind = kind
        if skip:
            info.skipped = skip
            return ev.empty(), info, summary
        if kind in STRUCTURED:
            try:
                table, summary = read_structured(kind, first, chunks, source.path, hints)
            except OverBound as exc:
                info.skipped = f"not read: {exc}"
                return ev.empty(), info, sm.empty()
            info.events = table.height
            return table, info, summary
        ctx = FileContext(path=source.path, host=hints.host, rank=hints.rank, local_rank=hints.local_rank,
                          attempt=hints.attempt, year=year_for(source))

        def all_chunks():
            if first:
                yield first
            yield from chunks

        last: tuple[int, str] | None = None
        for line_no, block in blocks(all_chunks(), stats):
            cand = None if pattern.unfiltered else candidate_lines(block, line_no, pattern.keys, stats, pattern.dense,
                                                                   pattern.engine)
            if cand is None:
                df = frame(block, line_no, stats)
                block_last = df.row(df.height - 1) if df.height else None
                hits = engine.frame_hits(pattern.engine, df) if pattern.engine is not None else None
            else:
                df, block_last, hits = cand.frame, cand.last, cand.hits
            block_rows, partial, table = parse_block(df, pattern, rule_pattern, ctx, hints, hits)
            if head is None:
                head = df["raw"]
            rows.extend(block_rows)
            if table.height:
                regular.append(table)
            dense = owned(merge([dense, partial]))  # held per group, not per block, and not the blocks' text
            last = block_last or last
        if last is not None:
            rows.append(file_end_event(source.path, last[0], last[1], hints))
        summary_rows = describe(dense, source.path, hints)
        summary = sm.from_rows(summary_rows)
        if ctx.cut_for_matching:
            stats.note(cut_note(ctx.cut_for_matching))
    except ArchiveLimit as exc:
        stats.note(str(exc))
    except MemberUnreadable as exc:
        info.skipped, info.notes = str(exc), info.notes + stats.notes
        return ev.empty(), info, sm.empty()
    except OSError as exc:
        info.skipped = f"unreadable ({exc.strerror or exc})"
    info.lines = stats.lines
    info.notes.extend(stats.notes)
    stated = {h for t in regular for h in t["host"].unique().to_list() if h}
    stated = stated.union(*summarised_hosts(summary_rows).values())  # one file: every host its NCCL lines name
    if head is not None and not regular and all(r["kind"] == "other.file_end" for r in rows):
        stated.update(filter(None, [stated_host_of(head)]))  # no line became an event: the host a line states
    events = ev.from_rows(fill_path_hints(rows, hints, stated))
    events = collapse(ev.concat([events, *regular]) if regular else events)  # repeated events counted, not stored
    info.events = events.height
    return events, info, summary


