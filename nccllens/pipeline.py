"""Extraction: one source of bytes → event rows. A pure function of its input, file by file.

Per newline-aligned block: polars reads the lines, ONE combined regex (all families' PREFILTERs
OR the rules' patterns) keeps the survivors, and only those reach Python: prefixes are stripped,
each family parser gets the survivors its own PREFILTER matches, and survivors no parser claims but
a rule pattern matches become ``other.text`` events.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Sequence
from datetime import datetime

import polars as pl

from nccllens import events as ev
from nccllens.ingest.layout import PathHints, hints_for
from nccllens.ingest.sniff import classify
from nccllens.ingest.sources import ArchiveLimit, Source, iter_sources
from nccllens.parse import load_families
from nccllens.parse.base import FileContext, Line
from nccllens.parse.lines import ReadStats, blocks, frame
from nccllens.parse.prefixes import split_glued, strip
from nccllens.prefilter import Plan, plan, search_any, survivors
from nccllens.report.model import InputFile

_LINE_DEFAULTS = ("file", "line", "raw", "host", "rank", "local_rank", "attempt", "ts", "ts_kind", "ts_rel")


def unanchor(pattern: str) -> str:
    """Drop start-of-line anchors (``^`` outside character classes).

    The combined prefilter runs on raw lines, before launcher prefixes are stripped, so a pattern
    written for the message (``^\\s*KeyError``) must not insist on the line's first column there. The
    result matches a superset of lines; the exact pattern is applied to the message afterwards.
    """
    out, i, in_class = [], 0, False
    while i < len(pattern):
        ch = pattern[i]
        if ch == "\\":
            out.append(pattern[i:i + 2])
            i += 2
            continue
        if in_class:
            in_class = ch != "]" or (out and out[-1] in ("[", "[^"))
        elif ch == "[":
            in_class = True
            if pattern[i + 1:i + 2] == "^":
                out.append("[^")
                i += 2
                continue
        elif ch == "^":
            i += 1
            continue
        out.append(ch)
        i += 1
    return "".join(out)


GROUP_SIZE = 24  # patterns per regex: one alternation of hundreds outgrows the regex engine's DFA cache
Patterns = tuple[str, ...]


def _as_list(patterns: str | Sequence[str] | None) -> list[str]:
    if not patterns:
        return []
    return [patterns] if isinstance(patterns, str) else [p for p in patterns if p]


def pattern_groups(patterns: str | Sequence[str] | None) -> Patterns:
    """Patterns ORed in groups: a few regexes of moderate size scan far faster than one huge one
    (measured: 150 rule patterns in one alternation ran 86 s on 12 MB; in groups of 24, 0.3 s)."""
    pats = [_scoped_flags(p) for p in _as_list(patterns)]
    return tuple("|".join(f"(?:{p})" for p in pats[i:i + GROUP_SIZE]) for i in range(0, len(pats), GROUP_SIZE))


_LEADING_FLAGS = re.compile(r"^\(\?([a-zA-Z]+)\)")


def _scoped_flags(pattern: str) -> str:
    """``(?i)abc`` → ``(?i:abc)``: the same pattern, safe to OR with others in both regex engines."""
    m = _LEADING_FLAGS.match(pattern)
    return f"(?{m[1]}:{pattern[m.end():]})" if m else pattern


def matches(expr: pl.Expr, groups: Patterns) -> pl.Expr:
    """True where any group matches (one vectorised pass per group)."""
    if not groups:
        return pl.lit(False)
    if len(groups) == 1:
        return expr.str.contains(groups[0])
    return pl.any_horizontal([expr.str.contains(g) for g in groups])


def combined_prefilter(extra: str | Sequence[str] | None = None) -> Plan:
    """Every family's PREFILTER and the rules' patterns, unanchored: literal pass, then regex groups."""
    pats = [unanchor(f.prefilter) for f in load_families()] + [unanchor(p) for p in _as_list(extra)]
    return plan(pats, pattern_groups)


def _as_plan(pattern) -> Plan:
    if isinstance(pattern, Plan):
        return pattern
    return Plan((), (), (), (pattern,) if isinstance(pattern, str) else tuple(pattern))


def _make_line(path: str, line_no: int, row: int, raw: str, hints: PathHints) -> Line:
    p = strip(raw)
    return Line(
        file=path, line=line_no, raw=raw, message=p.message,
        host=p.host or hints.host, rank=p.rank if p.rank is not None else hints.rank,
        local_rank=p.local_rank if p.local_rank is not None else hints.local_rank,
        attempt=hints.attempt, ts=p.ts, ts_kind="absolute" if p.ts else None,
        stream=p.stream, row=row,
    )


def _lines_of(path: str, line_no: int, row: int, raw: str, hints: PathHints) -> list[Line]:
    return [_make_line(path, line_no, row, part, hints) for part in split_glued(raw)]


def _follower(df: pl.DataFrame, path: str, hints: PathHints, shift: int = 0, end: int | None = None):
    """``ctx.following`` for one file's rows of ``df`` (rows before ``end``; line numbers minus ``shift``):
    windows are read in slices, each row's prefixes stripped once."""
    seen: dict[int, list[Line]] = {}  # consecutive records ask for overlapping windows
    end = df.height if end is None else end

    def rows_from(start: int, count: int):
        window = df.slice(start, max(0, min(count, end - start)))
        for row, line_no, raw in zip(window["row"], window["line"], window["raw"], strict=True):
            cands = seen.get(row)
            if cands is None:
                cands = seen[row] = _lines_of(path, line_no - shift, row, raw, hints)
            yield cands

    def following(line: Line, n: int) -> list[Line]:
        out: list[Line] = []
        start, step = line.row + 1, min(n, 32) + 8
        while len(out) < n and start < end and start <= line.row + n * 4 + 16:
            for cands in rows_from(start, step):
                out.extend(c for c in cands if c.stream == line.stream)
                if len(out) >= n:
                    break
            start += step
            step *= 2
        return out[:n]

    return following


class _Tracked:
    """The survivors handed to a parser, remembering which one it took last.

    An event that comes back without a ``line`` belongs to the line the parser was reading when
    it yielded the event (parsers walk their lines in order).
    """

    def __init__(self, lines: list[Line]):
        self._lines = lines
        self.current: Line | None = lines[0] if lines else None

    def __iter__(self):
        for line in self._lines:
            self.current = line
            yield line

    def __len__(self) -> int:
        return len(self._lines)

    def __getitem__(self, index):
        item = self._lines[index]
        if isinstance(item, Line):
            self.current = item
        return item


def _fill_defaults(event: dict, line: Line | None) -> dict:
    if line is not None:
        for key in _LINE_DEFAULTS:
            if event.get(key) is None:
                event[key] = getattr(line, key)
    event.setdefault("level", "info")
    return event


def _parse_block(df: pl.DataFrame, pattern: Plan, rule_pattern: Patterns, ctx: FileContext,
                 hints: PathHints) -> list[dict]:
    df = df.with_row_index("row")
    return parse_survivors(df, survivors(df, pattern, matches), rule_pattern, ctx, hints)


def survivor_lines(survivors: pl.DataFrame, path: str, hints: PathHints, shift: int = 0) -> list[Line]:
    """Surviving rows as Line objects (prefixes stripped, glued lines split)."""
    lines: list[Line] = []
    for row, line_no, raw in zip(survivors["row"], survivors["line"], survivors["raw"], strict=True):
        lines.extend(_lines_of(path, line_no - shift, row, raw, hints))
    return lines


def line_masks(lines: list[Line], rule_pattern: Patterns) -> dict[str, list[bool]]:
    """Which family prefilter (and whether a rule pattern) matches each surviving line's message.

    Survivors are few, so patterns compiled once per process (Python's engine) beat polars, which
    compiles on every call; a pattern only polars can compile falls back to polars."""
    messages = [ln.message for ln in lines]
    out: dict[str, list[bool]] = {}
    for fam in load_families():
        found = search_any(messages, (fam.prefilter,))
        out[fam.name] = found if found is not None else \
            pl.Series(messages, dtype=pl.String).str.contains(fam.prefilter).to_list()
    found = search_any(messages, rule_pattern)
    if found is None:
        frame = pl.DataFrame({"m": messages}, schema={"m": pl.String})
        found = frame.select(matches(pl.col("m"), rule_pattern).alias("m"))["m"].to_list()
    out["_rules"] = found
    return out


def parse_survivors(df: pl.DataFrame, survivors: pl.DataFrame, rule_pattern: Patterns, ctx: FileContext,
                    hints: PathHints) -> list[dict]:
    """Hand the surviving lines of one file (``df`` has its lines with a ``row`` index) to the parsers."""
    if not survivors.height:
        return []
    lines = survivor_lines(survivors, ctx.path, hints)
    ctx._following = _follower(df, ctx.path, hints)
    return parse_lines(lines, line_masks(lines, rule_pattern), ctx)


def parse_lines(lines: list[Line], masks: dict[str, list[bool]], ctx: FileContext) -> list[dict]:
    """Run the family parsers on one file's survivors; unclaimed lines a rule pattern matches become
    ``other.text``."""
    by_line: dict[int, Line] = {}
    for ln in lines:
        by_line.setdefault(ln.line, ln)
    claimed: set[int] = set()
    out: list[dict] = []
    for fam in load_families():
        mine = [ln for ln, hit in zip(lines, masks[fam.name], strict=True) if hit and ln.line not in claimed]
        if not mine:
            continue
        tracked = _Tracked(mine)
        produced: list[tuple[dict, Line | None]] = []
        try:
            for event in fam.parse(tracked, ctx):
                produced.append((event, tracked.current))
        except Exception as exc:  # a parser bug loses the rest of this block for that family, not the run
            ctx_note = f"parser {fam.name} failed on this file: {type(exc).__name__}: {exc}"
            out.append({"kind": "other.parser_error", "family": "other", "level": "warning",
                        "message": ctx_note, "file": ctx.path, "line": mine[0].line, "raw": ""})
        for event, current in produced:
            event.setdefault("family", fam.name)
            source_line = by_line.get(event.get("line")) if event.get("line") is not None else current
            out.append(_fill_defaults(event, source_line))
            if event.get("line") is not None:
                claimed.add(event["line"])
            last = event.pop("_last_line", None)
            first = event.pop("_first_line", None)
            anchor = source_line or current
            if first is not None:
                claimed.add(first)
            if last is not None and anchor is not None:
                # the record's continuation lines (traceback frames, table fields) are part of this event
                start = first if first is not None else (event.get("line") or anchor.line)
                claimed.update(ln.line for ln in lines if start < ln.line <= last and ln.stream == anchor.stream)
    for ln, hit in zip(lines, masks["_rules"], strict=True):
        if hit and ln.line not in claimed:
            out.append(_fill_defaults({"family": "other", "kind": "other.text", "message": ln.message,
                                       "level": "info"}, ln))
    return out


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
    or already grouped by ``pattern_groups``)."""
    pattern = _as_plan(pattern)
    if not (isinstance(rule_pattern, tuple) and all("(?:" in g for g in rule_pattern)):
        rule_pattern = pattern_groups(rule_pattern)
    info = InputFile(path=source.path, skipped=source.skipped, notes=list(source.notes))
    if source.skipped:
        return ev.empty(), info
    path_hints = hints_for(source.path)
    hints = PathHints(host or path_hints.host, rank if rank is not None else path_hints.rank,
                      path_hints.local_rank, path_hints.attempt)
    info.host, info.rank = hints.host, hints.rank
    stats = ReadStats()
    rows: list[dict] = []
    chunks = source.chunks()
    try:
        first = next(chunks, b"")
        kind, skip = classify(source.path, first[:65536])
        info.kind = kind
        if skip:
            info.skipped = skip
            return ev.empty(), info
        if kind == "events_parquet":
            try:
                events = _read_shard(first + b"".join(chunks))
            except (pl.exceptions.PolarsError, OSError, ValueError) as exc:
                info.skipped = f"not a readable event shard ({str(exc).splitlines()[0][:120]})"
                return ev.empty(), info
            info.events = events.height
            return events, info
        if kind in ("error_json", "flight_json", "flight_pickle"):
            rows = _special(kind, first, chunks, source.path, hints)
            info.events = len(rows)
            return ev.from_rows(rows), info
        ctx = FileContext(path=source.path, host=hints.host, rank=hints.rank, local_rank=hints.local_rank,
                          attempt=hints.attempt, year=_year_for(source))

        def all_chunks():
            if first:
                yield first
            yield from chunks

        last: tuple[int, str] | None = None
        for line_no, block in blocks(all_chunks(), stats):
            df = frame(block, line_no, stats)
            rows.extend(_parse_block(df, pattern, rule_pattern, ctx, hints))
            if df.height:
                last = df.row(df.height - 1)
        if last is not None:
            rows.append(file_end_event(source.path, last[0], last[1], hints))
    except ArchiveLimit as exc:
        stats.note(str(exc))
    except OSError as exc:
        info.skipped = f"unreadable ({exc.strerror or exc})"
    info.lines = stats.lines
    info.notes.extend(stats.notes)
    events = ev.from_rows(rows)
    info.events = events.height
    return events, info


def _read_shard(data: bytes) -> pl.DataFrame:
    """An event shard written by ``nccllens events -o DIR/`` (so extraction can run elsewhere)."""
    import io

    meta = pl.read_parquet_metadata(io.BytesIO(data))
    version = meta.get("nccllens.events_schema_version")
    if version is not None and version != str(ev.EVENTS_SCHEMA_VERSION):
        raise ValueError(f"event shard of schema version {version}; this nccllens reads version "
                         f"{ev.EVENTS_SCHEMA_VERSION}")
    table = pl.read_parquet(io.BytesIO(data))
    missing = [c for c in ev.COLUMNS if c not in table.columns]
    if missing:
        raise ValueError(f"not an nccllens event shard (missing columns: {', '.join(missing[:5])})")
    return table.select(ev.COLUMNS).cast(ev.SCHEMA)


def _special(kind: str, first: bytes, rest: Iterable[bytes], path: str, hints: PathHints) -> list[dict]:
    data = first + b"".join(rest)
    rows: list[dict] = []
    try:
        if kind == "error_json":
            from nccllens.parse.error_json import parse_error_json

            rows = parse_error_json(data, path)
        else:
            from nccllens.parse.flight import parse_flight

            rows = parse_flight(data, path, kind)
    except Exception as exc:  # noqa: BLE001 - report, never crash
        return [{"kind": "other.parser_error", "family": "other", "level": "warning", "file": path, "line": 1,
                 "message": f"could not read {kind.replace('_', ' ')}: {type(exc).__name__}: {exc}", "raw": ""}]
    for r in rows:
        r.setdefault("file", path)
        r.setdefault("line", 1)
        if r.get("host") is None:
            r["host"] = hints.host
        if r.get("rank") is None:
            r["rank"] = hints.rank
        if r.get("local_rank") is None:
            r["local_rank"] = hints.local_rank
        if r.get("attempt") is None:
            r["attempt"] = hints.attempt
    return rows


PARALLEL_MIN_BYTES = 64 << 20  # below this (and PARALLEL_MIN_FILES), starting workers costs more than it saves
PARALLEL_MIN_FILES = 2000


def _extract_job(args: tuple) -> list[tuple[pl.DataFrame, InputFile]]:
    """Worker entry point: a batch of files on disk (picklable arguments only)."""
    from pathlib import Path

    from nccllens.ingest.sources import _file_sources
    from nccllens.pipeline_batch import extract_small

    files, pattern, rule_pattern = args
    sources = [next(_file_sources(Path(fs), display)) for display, fs in files]
    if len(sources) == 1:
        return [extract_source(sources[0], pattern, rule_pattern)]
    return extract_small(sources, pattern, rule_pattern, _year_for)


def _jobs(sources: list[Source], indices: list[int]) -> list[list[int]]:
    """Group sources into jobs: each large file alone, small plain files in batches."""
    from nccllens.pipeline_batch import SMALL

    jobs, batch, batch_bytes = [], [], 0
    for i in indices:
        s = sources[i]
        small = (s.size or 0) <= SMALL and not s.path.lower().endswith(".gz")
        if not small:
            jobs.append([i])
            continue
        batch.append(i)
        batch_bytes += s.size or 0
        if len(batch) >= 256 or batch_bytes >= (16 << 20):
            jobs.append(batch)
            batch, batch_bytes = [], 0
    if batch:
        jobs.append(batch)
    return jobs


def _reporting(outputs, jobs, sources, total: int, progress) -> list:
    """Collect job outputs in order, telling ``progress(done_bytes, total_bytes)`` as they finish."""
    done, collected = 0, []
    for job, output in zip(jobs, outputs, strict=True):
        collected.append(output)
        done += sum(sources[i].size or 0 for i in job)
        if progress is not None:
            progress(done, total)
    return collected


def _workers() -> int:
    try:
        return max(1, min(len(os.sched_getaffinity(0)), 8))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, min(os.cpu_count() or 1, 8))


def extract(paths: list[str], rule_pattern: str | Sequence[str] | None = None, host: str | None = None,
            rank: int | None = None, workers: int | None = None,
            progress=None) -> tuple[pl.DataFrame, list[InputFile]]:
    """Extract events from every source under ``paths``; files are spread over worker processes."""
    from nccllens.attribution import attribute

    pattern = combined_prefilter(rule_pattern)
    rule_pattern = pattern_groups(rule_pattern)
    sources = list(iter_sources(paths))
    results: list[tuple[pl.DataFrame, InputFile] | None] = [None] * len(sources)
    on_disk = [i for i, s in enumerate(sources) if s.fs_path is not None and not s.skipped]
    total = sum(sources[i].size or 0 for i in on_disk)
    jobs = _jobs(sources, on_disk)
    args = [([(sources[i].path, sources[i].fs_path) for i in job], pattern, rule_pattern) for job in jobs]
    workers = _workers() if workers is None else workers
    if workers > 1 and len(jobs) > 1 and (total >= PARALLEL_MIN_BYTES or len(on_disk) >= PARALLEL_MIN_FILES):
        import multiprocessing as mp
        from concurrent.futures import ProcessPoolExecutor

        with ProcessPoolExecutor(workers, mp_context=mp.get_context("spawn")) as pool:
            outputs = _reporting(pool.map(_extract_job, args), jobs, sources, total, progress)
    else:
        outputs = _reporting((_extract_job(a) for a in args), jobs, sources, total, progress)
    for job, output in zip(jobs, outputs, strict=True):
        for i, result in zip(job, output, strict=True):
            results[i] = result
    for i, source in enumerate(sources):
        if results[i] is None:
            # --host/--rank describe standard input, which has no path to learn them from
            stdin = source.path == "<stdin>"
            results[i] = extract_source(source, pattern, rule_pattern, host if stdin else None,
                                        rank if stdin else None)
    frames = [r[0] for r in results]
    infos = [r[1] for r in results]
    return ev.sort(attribute(ev.concat(frames))), infos


def events_from_text(text: str, name: str = "<example>",
                     rule_pattern: str | Sequence[str] | None = None) -> pl.DataFrame:
    """Run the real extraction on an in-memory text (rule examples, tests, the API)."""
    data = text.encode("utf-8", errors="replace")
    source = Source(name, lambda: iter([data]), len(data))
    from nccllens.attribution import attribute

    events, _ = extract_source(source, combined_prefilter(rule_pattern), pattern_groups(rule_pattern))
    return attribute(events)
