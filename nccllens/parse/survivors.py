"""Surviving lines → family parsers → event rows (the Python side of extraction, survivors only)."""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterator

import polars as pl

from nccllens import events as ev
from nccllens.extract.engine import ANY
from nccllens.ingest.layout import PathHints
from nccllens.parse import load_families, nccl_frame
from nccllens.parse.base import FileContext, Line
from nccllens.parse.dense import FAMILIES, empty_partial, split
from nccllens.parse.facts_frame import with_file_facts
from nccllens.parse.file_facts import host_at
from nccllens.parse.following import Following
from nccllens.parse.guard import MATCH_MAX, for_matching
from nccllens.parse.headers import split_header
from nccllens.parse.masks import masks
from nccllens.parse.pastes import WRAPPED_PIECE
from nccllens.parse.prefixes import split_glued, strip
from nccllens.parse.record_wraps import SECTION_LINES, rank_sections, unwrap
from nccllens.prefilter import Plan, survivors
from nccllens.regex_groups import Patterns, matches
from nccllens.repeats import thin, weigh

CHUNK = 256  # rows the follower reads from the frame at once

_LINE_DEFAULTS = ("file", "line", "raw", "host", "rank", "local_rank", "attempt", "ts", "ts_kind", "ts_rel")

def _make_line(path: str, line_no: int, row: int, raw: str, hints: PathHints) -> Line:
    """A surviving line with what its own prefixes state (host, rank, local rank). What the path suggests
    is no part of it: ``fill_path_hints`` adds that to the events that state nothing themselves."""
    p = strip(for_matching(raw), hints.leads)
    return Line(
        file=path, line=line_no, raw=raw, message=p.message,
        host=p.host or hints.line_host or (host_at(hints.host_marks, line_no) if hints.host_marks else None), rank=p.rank if p.rank is not None else hints.line_rank,
        local_rank=p.local_rank,
        attempt=hints.attempt, ts=p.ts, ts_kind="absolute" if p.ts else None,
        stream=p.stream, row=row,
    )


def fill_path_hints(rows: list[dict], hints: PathHints, also_stated: set[str] = frozenset()) -> list[dict]:
    """Give one file's events the rank, local rank and host its path suggests where they state none.

    The log beats the path: a value an event states is kept, and when any of the file's events names a
    host, the path's host is not added as a second one: events without one take the file's named host
    when it names one only, else stay without (attribution may still place them). ``also_stated``: the
    hosts the file's events that are not in ``rows`` name."""
    stated = {r["host"] for r in rows if r.get("host") and r.get("kind") != "other.file_end"} | also_stated
    if hints.line_host:  # the host the file's prompts or header name: stated by the log, whatever events it has
        stated.add(hints.line_host)
    for r in rows:
        if r.get("rank") is None and hints.rank is not None:
            r["rank"] = hints.rank
        if r.get("local_rank") is None and hints.local_rank is not None:
            r["local_rank"] = hints.local_rank
        if stated:
            if r.get("host") is None or (r.get("kind") == "other.file_end" and r["host"] not in stated):
                r["host"] = next(iter(stated)) if len(stated) == 1 else None
        elif r.get("host") is None and hints.host is not None:
            r["host"] = hints.host
    return rows


def _lines_of(path: str, line_no: int, row: int, raw: str, hints: PathHints) -> list[Line]:
    return [_make_line(path, line_no, row, part, hints) for part in split_glued(raw)]


def attach_window(ctx: FileContext, df: pl.DataFrame, hints: PathHints, shift: int = 0, end: int | None = None,
                  begin: int = 0) -> None:
    """Give ``ctx`` its ``following`` and ``preceding`` over one file's rows of ``df`` (``begin`` to ``end``)."""
    following, preceding = follower(df, ctx.path, hints, shift, end, begin)
    ctx.attach(following, preceding)


def follower(df: pl.DataFrame, path: str, hints: PathHints, shift: int = 0, end: int | None = None, begin: int = 0):
    """(``ctx.following``, ``ctx.preceding``) for one file's rows of ``df`` (rows from ``begin`` before ``end``; line
    numbers minus ``shift``): windows are read in slices, each row's prefixes stripped once. ``df`` may hold only
    some pieces of the file (``candidate_lines``): a window stops where line numbers jump."""
    seen: dict[int, list[Line]] = {}  # consecutive records ask for overlapping windows
    end = df.height if end is None else end
    chunks: dict[int, tuple[list, list, list]] = {}  # the last few CHUNK-row slices, as lists

    def chunk(k: int) -> tuple[list, list, list]:
        got = chunks.get(k)
        if got is None:
            # as lists: iterating polars Series value by value cost more than the parsing, and slicing
            # the frame for every record's window (most records ask for one line) cost nearly as much
            window = df.slice(k * CHUNK, max(0, min(CHUNK, end - k * CHUNK)))
            got = chunks[k] = (window["row"].to_list(), window["line"].to_list(), window["raw"].to_list())
            if len(chunks) > 4:
                del chunks[next(iter(chunks))]
        return got

    def rows_from(start: int, count: int):
        stop = min(start + count, end)
        while start < stop:
            k = start // CHUNK
            rows, numbers, raws = chunk(k)
            upto = min(stop - k * CHUNK, len(rows))
            for i in range(start - k * CHUNK, upto):
                row = rows[i]
                cands = seen.get(row)
                if cands is None:
                    cands = seen[row] = ([] if raws[i] == WRAPPED_PIECE
                                         else _lines_of(path, numbers[i] - shift, row, raws[i], hints))
                yield numbers[i], cands
            if upto < CHUNK:
                return
            start = (k + 1) * CHUNK

    def lines_after(line: Line, n: int) -> Iterator[Line]:
        # lazily: a reader that stops at the first line not part of its record (a table, a dump) makes no
        # more Lines than it reads (each costs a prefix strip; a record's window may be ~100 rows of others)
        count = 0
        start, step = line.row + 1, min(n, 32) + min(n, 8)  # a few more: other streams' lines are skipped
        prev = line.line + shift
        while count < n and start < end and start <= line.row + n * 4 + 16:
            for line_no, cands in rows_from(start, step):
                if line_no > prev + 1:  # the next lines were not read (a piece without any key)
                    return
                prev = line_no
                for c in cands:
                    if c.stream == line.stream:
                        yield c
                        count += 1
                        if count >= n:
                            return
            start += step
            step *= 2

    def following(line: Line, n: int) -> Following:
        return Following(lines_after(line, n))

    def preceding(line: Line, n: int) -> list[Line]:
        out: list[Line] = []
        row, nearest = line.row - 1, line.line + shift
        while row >= begin and len(out) < n and row >= line.row - (n * 4 + 16):
            line_no, cands = next(rows_from(row, 1), (None, None))
            if line_no is None or line_no < nearest - 1:  # the lines above were not read (a piece without a key)
                break
            nearest = line_no
            out.extend(c for c in reversed(cands) if c.stream == line.stream)
            row -= 1
        return out[:n][::-1]

    return following, preceding


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


def _hit(rows: pl.DataFrame, hits: pl.DataFrame, bit: int | pl.Expr) -> pl.DataFrame:
    """The rows whose line the engine's hits mark with ``bit``."""
    marked = hits.filter((pl.col("bits") & bit) != 0).select("line")
    return rows.join(marked, on="line", how="semi", maintain_order="left")


def kept_rows(df: pl.DataFrame, pattern: Plan, by: tuple[str, ...] = (),
              hits: pl.DataFrame | None = None) -> tuple[pl.DataFrame, pl.DataFrame]:
    """(surviving rows, partial dense summaries) of ``df`` (with ``row``): dense rows are summarised and
    reach the parsers only where a pattern watching their family matches them (``parse.dense``). With
    ``hits`` (the compiled engine's: line, bits) the survivors are the lines it marked."""
    if hits is not None:
        rest, dense, partial = split(df, {}, by, keep_dense=True)
        kept = _hit(rest, hits, ANY)
        if dense.height:
            fam_bit = pl.col("fam").replace_strict(list(FAMILIES), [1 << k for k in range(len(FAMILIES))],
                                                   return_dtype=pl.UInt32)
            wanted = dense.join(hits, on="line", how="inner", maintain_order="left").filter(
                (pl.col("bits") & fam_bit) != 0).select(df.columns)
            if wanted.height:
                kept = pl.concat([kept, wanted]).sort("row")
        return kept, partial
    if pattern.dense is None:  # a plan not built by ``combined_prefilter``: no dense family is summarised
        return survivors(df, pattern, matches), empty_partial({b: df.schema[b] for b in by})
    rest, wanted, partial = split(df, dict(pattern.watch), by)
    kept = survivors(rest, pattern, matches)
    if wanted.height:
        kept = pl.concat([kept, wanted]).unique("row", keep="first").sort("row")
    return kept, partial


def parse_block(df: pl.DataFrame, pattern: Plan, rule_pattern: Patterns, ctx: FileContext, hints: PathHints,
                hits: pl.DataFrame | None = None) -> tuple[list[dict], pl.DataFrame, pl.DataFrame]:
    """Event rows, partial dense summaries and the events of the regular NCCL lines (``parse.nccl_frame``:
    a table) of one block of a file (``hits``: see ``kept_rows``)."""
    df = df.with_row_index("row")
    kept, partial = kept_rows(df, pattern, hits=hits)
    kept, repeated = thin(kept)  # a cycle of lines printed again and again reaches the parsers twice
    if not kept.height:
        return [], partial, ev.empty()
    facts = with_file_facts(hints, df["raw"])
    # the lines a repetition is counted on stay with the parsers (``weigh``)
    one = pl.lit(0, pl.UInt32).alias("_file")
    plain = kept.filter(~pl.col("line").is_in(list(repeated))).with_columns(one) if repeated else kept.with_columns(one)
    wraps = pl.DataFrame({"_file": [0] * (facts.wrap is not None), "wrap": [facts.wrap] * (facts.wrap is not None)},
                         schema={"_file": pl.UInt32, "wrap": pl.UInt32})
    _, regular = nccl_frame.split(plain, "_file", wraps, df.with_columns(one))
    table = ev.empty()
    if regular.height:
        kept = kept.join(regular.select("row"), on="row", how="anti", maintain_order="left")
        files = pl.DataFrame([(0, ctx.path, 0, facts.line_rank, hints.rank, hints.local_rank, hints.attempt)],
                             schema={"_file": pl.UInt32, "file": pl.String, "shift": pl.Int64, "line_rank": pl.Int64,
                                     "rank": pl.Int64, "local_rank": pl.Int64, "attempt": pl.Int64}, orient="row")
        table = nccl_frame.events(regular, files, "_file")
    return weigh(parse_survivors(df, kept, rule_pattern, ctx, facts), repeated), partial, table


def survivor_lines(survivors: pl.DataFrame, path: str, hints: PathHints, shift: int = 0,
                   frame: pl.DataFrame | None = None, end: int | None = None, start: int = 0) -> list[Line]:
    """Surviving rows as Line objects (prefixes stripped, glued lines split; when ``frame``, the file's
    rows from ``start`` to ``end``, is given: hard-wrapped records rejoined, and lines under a section
    header that names a rank given that rank when they state none)."""
    lines: list[Line] = []
    taken: set[int] = set()
    # the sections hold tracebacks: a file without an unprefixed one needs no pass over all its lines
    heads, head_ranks = rank_sections(frame, start, end) if any(
        raw.startswith("Traceback") for raw in survivors["raw"]) else ([], [])
    for row, line_no, raw in zip(survivors["row"], survivors["line"], survivors["raw"], strict=True):
        if row in taken:
            continue
        raw, more = unwrap(raw, row, line_no, frame, end, hints.wrap)
        taken.update(more)
        made = _lines_of(path, line_no - shift, row, raw, hints)
        if heads:
            k = bisect_right(heads, row) - 1
            if k >= 0 and row - heads[k] <= SECTION_LINES:
                for ln in made:
                    if ln.rank is None:
                        ln.rank = head_ranks[k]
        lines.extend(made)
    return lines


def mask_targets(rule_pattern: Patterns) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """(name, patterns) of each family's PREFILTER and of the rules (``_rules``), for ``parse.masks``."""
    return tuple((fam.name, (fam.prefilter,)) for fam in load_families()) + (("_rules", tuple(rule_pattern)),)


def line_masks(lines: list[Line], rule_pattern: Patterns) -> dict[str, list[bool]]:
    """Which family prefilter (and whether a rule pattern) matches each surviving line's message.

    Only the pattern branches whose literals a message holds are tried (``parse.masks``); a pattern
    only polars can compile sends the lot to polars."""
    messages = [ln.message for ln in lines]
    found = masks(messages, mask_targets(rule_pattern))
    if found is not None:
        return found
    out: dict[str, list[bool]] = {}
    series = pl.Series(messages, dtype=pl.String)
    for fam in load_families():
        out[fam.name] = series.str.contains(fam.prefilter).to_list()
    frame = pl.DataFrame({"m": messages}, schema={"m": pl.String})
    out["_rules"] = frame.select(matches(pl.col("m"), rule_pattern).alias("m"))["m"].to_list()
    return out


def parse_survivors(df: pl.DataFrame, survivors: pl.DataFrame, rule_pattern: Patterns, ctx: FileContext,
                    hints: PathHints) -> list[dict]:
    """Hand the surviving lines of one file (``df`` has its lines with a ``row`` index; ``hints`` with the
    file's facts) to the parsers."""
    if not survivors.height:
        return []
    lines = survivor_lines(survivors, ctx.path, hints, frame=df)
    attach_window(ctx, df, hints)
    return parse_lines(lines, line_masks(lines, rule_pattern), ctx)


def parse_lines(lines: list[Line], masks: dict[str, list[bool]], ctx: FileContext) -> list[dict]:
    """Run the family parsers on one file's survivors; unclaimed lines a rule pattern matches become
    ``other.text``."""
    by_line: dict[int, Line] = {}
    for ln in lines:
        by_line.setdefault(ln.line, ln)
        if len(ln.raw) > MATCH_MAX:
            ctx.cut_for_matching += 1
    numbers = [ln.line for ln in lines]
    in_order = all(a <= b for a, b in zip(numbers, numbers[1:], strict=False))  # survivors come in file order
    # claims are per line and writer: a line two writers' output was glued into (a bar, then another rank's
    # message) holds a record of each, and each is offered to every family
    claimed: set[tuple[int, str]] = set()
    out: list[dict] = []
    for fam in load_families():
        mine = [ln for ln, hit in zip(lines, masks[fam.name], strict=True) if hit and (ln.line, ln.stream) not in claimed]
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
            at = event.get("line")
            # the line the parser was reading, unless the event names another (a glued line's parts share a number)
            source_line = current if at is None or (current is not None and current.line == at) else by_line.get(at)
            out.append(_fill_defaults(event, source_line))  # an event without a line gets its source line's
            anchor = source_line or current
            stream = anchor.stream if anchor is not None else ""
            if event.get("line") is not None:
                claimed.add((event["line"], stream))
            last = event.pop("_last_line", None)
            first = event.pop("_first_line", None)
            if first is not None:
                claimed.add((first, stream))
            if last is not None and anchor is not None:
                # the record's continuation lines (traceback frames, table fields) are part of this event
                start = first if first is not None else (event.get("line") or anchor.line)
                # only the lines between ``start`` and ``last``: scanning every survivor for every
                # record made a file of many short tracebacks quadratic (2,000 of them: 2.6 s)
                span = lines[bisect_right(numbers, start):bisect_right(numbers, last)] if in_order else lines
                claimed.update((ln.line, ln.stream) for ln in span if start < ln.line <= last and ln.stream == stream)
    for ln, hit in zip(lines, masks["_rules"], strict=True):
        if hit and (ln.line, ln.stream) not in claimed:
            header, _ = split_header(ln.message, ctx.year)  # a line no parser knows keeps its header's level
            event = {"family": "other", "kind": "other.text", "message": ln.message,
                     "level": header.level if header else "info"}
            if header and header.ts and ln.ts is None:
                event.update(ts=header.ts, ts_kind=header.ts_kind)
            out.append(_fill_defaults(event, ln))
    return out
