"""Extraction: one source of bytes → event rows. A pure function of its input, file by file.

Per newline-aligned block: polars reads the lines, the prefilter (``nccllens.prefilter``: one literal
pass, then regex groups from ``nccllens.regex_groups``) keeps the survivors, and only those reach
Python (``nccllens.parse.survivors``): prefixes are stripped, each family parser gets the survivors its
own PREFILTER matches, and survivors no parser claims but a rule pattern matches become ``other.text``.
Small files are read in batches (``pipeline_batch``); files are spread over processes (``parallel``).
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
from collections.abc import Sequence
from datetime import datetime

import polars as pl

from nccllens import events as ev
from nccllens import plan_cache
from nccllens import summaries as sm
from nccllens import workers as workers_mod
from nccllens.ingest.layout import PathHints, hints_for
from nccllens.ingest.sniff import classify, skip_leading_nuls
from nccllens.ingest.sources import ArchiveLimit, MemberUnreadable, Source, iter_sources
from nccllens.parallel import _extract_job, _jobs, _reporting
from nccllens.parse import load_families
from nccllens.parse.base import FileContext
from nccllens.parse.dense import KEY_REGEX, merge
from nccllens.parse.dense_rows import describe, watch_patterns
from nccllens.parse.guard import cut_note
from nccllens.parse.lines import ReadStats, blocks, frame
from nccllens.parse.masks import index
from nccllens.parse.pieces import candidate_lines
from nccllens.parse.survivors import (  # noqa: F401 - re-exported for the batch reader and tests
    _fill_defaults,
    _follower,
    _lines_of,
    _make_line,
    _Tracked,
    fill_path_hints,
    kept_rows,
    line_masks,
    mask_targets,
    parse_block,
    parse_lines,
    parse_survivors,
    survivor_lines,
)
from nccllens.pipeline_batch import extract_small
from nccllens.prefilter import Plan, known_literals, plan
from nccllens.regex_groups import (  # noqa: F401 - re-exported
    GROUP_SIZE,
    Patterns,
    _as_list,
    matches,
    pattern_groups,
    unanchor,
)
from nccllens.repeats import collapse
from nccllens.report.model import InputFile
from nccllens.structured import STRUCTURED, OverBound, read_structured


def combined_prefilter(extra: str | Sequence[str] | None = None) -> Plan:
    """Every family's PREFILTER and the rules' patterns, unanchored: literal pass, then regex groups;
    dense families' lines (``parse.dense``) summarised, and tried only with the patterns that watch them."""
    pats = [unanchor(f.prefilter) for f in load_families()] + [unanchor(p) for p in _as_list(extra)]
    watch = tuple(sorted(watch_patterns(pats).items()))
    return dataclasses.replace(plan(pats, pattern_groups), dense=KEY_REGEX, watch=watch)


def _as_plan(pattern) -> Plan:
    if isinstance(pattern, Plan):
        return pattern
    return Plan((), (), (pattern,) if isinstance(pattern, str) else tuple(pattern))


def file_end_event(path: str, line_no: int, raw: str, hints: PathHints) -> dict:
    """Where a log file stops: lets the analyses see a node whose log ends without any error."""
    return {"file": path, "line": line_no, "raw": raw[:2000], "kind": "other.file_end", "family": "other",
            "level": "debug", "message": f"end of file after {line_no} lines", "host": hints.host,
            "rank": hints.rank, "local_rank": hints.local_rank, "attempt": hints.attempt}


def _year_for(source: Source) -> int:
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
    pattern = _as_plan(pattern)
    if not (isinstance(rule_pattern, tuple) and all("(?:" in g for g in rule_pattern)):
        rule_pattern = pattern_groups(rule_pattern)
    info = InputFile(path=source.path, skipped=source.skipped, notes=list(source.notes))
    if source.skipped:
        return ev.empty(), info, sm.empty()
    path_hints = hints_for(source.path)
    hints = PathHints(host or path_hints.host, rank if rank is not None else path_hints.rank,
                      path_hints.local_rank, path_hints.attempt)
    info.host, info.rank = hints.host, hints.rank
    stats = ReadStats()
    rows: list[dict] = []
    partials: list[pl.DataFrame] = []
    summary = sm.empty()
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
                          attempt=hints.attempt, year=_year_for(source))

        def all_chunks():
            if first:
                yield first
            yield from chunks

        last: tuple[int, str] | None = None
        for line_no, block in blocks(all_chunks(), stats):
            cand = None if pattern.unfiltered else candidate_lines(block, line_no, pattern.keys, stats, pattern.dense)
            if cand is None:
                df = frame(block, line_no, stats)
                block_last = df.row(df.height - 1) if df.height else None
            else:
                df, block_last = cand.frame, cand.last
            block_rows, partial = parse_block(df, pattern, rule_pattern, ctx, hints)
            rows.extend(block_rows)
            partials.append(partial)
            last = block_last or last
        if last is not None:
            rows.append(file_end_event(source.path, last[0], last[1], hints))
        summary = sm.from_rows(describe(merge(partials), source.path, hints))
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
    events = collapse(ev.from_rows(fill_path_hints(rows, hints)))  # repeated events counted, not stored
    info.events = events.height
    return events, info, summary


@contextlib.contextmanager
def _pool(workers: int):
    """A pool of ``workers`` processes, already importing the extraction modules (None: 0 workers)."""
    if workers < 1:
        workers_mod.stop_early()  # started for an input that turned out to need none
        yield None
        return
    with workers_mod.pool(workers) as pool:
        yield pool


def extract(paths: list[str], rule_pattern: str | Sequence[str] | None = None, host: str | None = None,
            rank: int | None = None, workers: int | None = None,
            progress=None) -> tuple[pl.DataFrame, list[InputFile]]:
    """Extract events from every source under ``paths``; files are spread over worker processes."""
    events, infos, _ = extract_tables(paths, rule_pattern, host, rank, workers, progress)
    return events, infos


def extract_tables(paths: list[str], rule_pattern: str | Sequence[str] | None = None, host: str | None = None,
                   rank: int | None = None, workers: int | None = None,
                   progress=None) -> tuple[pl.DataFrame, list[InputFile], pl.DataFrame]:
    """``extract`` with the summary table of the dense families (``nccllens.summaries``) as a third item."""
    from nccllens.attribution import attribute

    sources = list(iter_sources(paths))
    on_disk = [i for i, s in enumerate(sources) if s.fs_path is not None and not s.skipped]
    total = sum(sources[i].size or 0 for i in on_disk)
    jobs = _jobs(sources, on_disk)
    workers = workers_mod.count() if workers is None else workers
    parallel = workers > 1 and len(jobs) > 1 and workers_mod.enough(total, len(on_disk))
    with _pool(workers if parallel else 0) as pool:  # workers start now, and import while the plan is built
        plan_cache.load()
        pattern = combined_prefilter(rule_pattern)
        rule_pattern = pattern_groups(rule_pattern)
        index(mask_targets(rule_pattern))  # every pattern branch's literals, found once here
        plan_cache.save()
        known = known_literals() if pool else None  # for the workers; the first jobs reach each of them
        args = [([(sources[i].path, sources[i].fs_path, sources[i].size) for i in job], pattern, rule_pattern,
                 known if k < 4 * workers else None) for k, job in enumerate(jobs)]
        outputs = pool.map(_extract_job, args) if pool else map(_extract_job, args)
        frames, done, ordered, summaries = _reporting(outputs, jobs, sources, total, progress)
    infos: list[InputFile] = []
    for batch in _main_process_batches(sources, done):
        if len(batch) > 1:  # small archive members: one frame and one prefilter pass for many of them
            results = extract_small([sources[i] for i in batch], pattern, rule_pattern, _year_for)
        else:
            # --host/--rank describe standard input, which has no path to learn them from
            stdin = sources[batch[0]].path == "<stdin>"
            results = [extract_source_tables(sources[batch[0]], pattern, rule_pattern, host if stdin else None,
                                             rank if stdin else None)]
        for i, (table, info, summary) in zip(batch, results, strict=True):
            frames.append(table)
            summaries.append(summary)
            ordered = ordered and not table.height
            done[i] = info
    infos = [done[i] for i in range(len(sources))]
    summary = sm.concat(summaries)
    # one contiguous copy here, not one in every later analysis
    events = attribute(ev.assemble(frames), sm.channel_ranks(summary))
    events = events if ordered else ev.sort(events)
    return events, infos, sm.attribute(summary, events)


def _main_process_batches(sources: list[Source], done: dict) -> list[list[int]]:
    """The sources no worker read, in order: runs of small archive members together (reading 20,000
    members one by one took 260 s, a frame each), anything else alone."""
    from nccllens.pipeline_batch import SMALL

    out: list[list[int]] = []
    for i, s in enumerate(sources):
        if i in done:
            continue
        small = "!" in s.path and not s.skipped and (s.size or 0) <= SMALL and len(out) and len(out[-1]) < 256
        if small and "!" in sources[out[-1][-1]].path and not sources[out[-1][-1]].skipped:
            out[-1].append(i)
        else:
            out.append([i])
    return out


def events_from_text(text: str, name: str = "<example>",
                     rule_pattern: str | Sequence[str] | None = None) -> pl.DataFrame:
    """Run the real extraction on an in-memory text (rule examples, tests, the API)."""
    data = text.encode("utf-8", errors="replace")
    source = Source(name, lambda: iter([data]), len(data))
    from nccllens.attribution import attribute

    events, _ = extract_source(source, combined_prefilter(rule_pattern), pattern_groups(rule_pattern))
    return attribute(events)
