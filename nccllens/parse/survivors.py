"""Surviving lines → family parsers → event rows (the Python side of extraction, survivors only)."""

from __future__ import annotations

from bisect import bisect_right

import polars as pl

from nccllens import events as ev
from nccllens.extract.engine import ANY
from nccllens.ingest.layout import PathHints
from nccllens.parse import load_families, nccl_frame
from nccllens.parse.base import FileContext, Line
from nccllens.parse.dense import FAMILIES, empty_partial, split
from nccllens.parse.facts_frame import with_file_facts
from nccllens.parse.following import attach_window, lines_of
from nccllens.parse.guard import MATCH_MAX
from nccllens.parse.headers import split_header
from nccllens.parse.masks import masks
from nccllens.parse.record_wraps import SECTION_LINES, WRAP_MIN, rank_sections, unwrap
from nccllens.prefilter import Plan, survivors
from nccllens.regex_groups import Patterns, matches
from nccllens.repeats import thin, weigh

_LINE_DEFAULTS = ("file", "line", "raw", "host", "rank", "local_rank", "attempt", "ts", "ts_kind", "ts_rel")

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


class _Widest:
    """The length of the longest of ``frame``'s rows from ``start`` to ``end``, computed when first asked."""

    def __init__(self, frame: pl.DataFrame | None, start: int, end: int | None) -> None:
        self.frame, self.start, self.end, self.value = frame, start, end, None

    def get(self) -> int:
        if self.value is None:
            if self.frame is None:
                self.value = 1 << 30
            else:
                end = self.frame.height if self.end is None else min(self.end, self.frame.height)
                self.value = self.frame["raw"].slice(self.start, max(0, end - self.start)).str.len_chars().max() or 0
        return self.value


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
    widest = _Widest(frame, start, end)
    for row, line_no, raw in zip(survivors["row"], survivors["line"], survivors["raw"], strict=True):
        if row in taken:
            continue
        # a line cut in a file that shows no wrap width: only the file's widest line can be one (no line of a
        # terminal's output is wider than the terminal), and never a plain NCCL INFO line (the frame path's, which
        # takes such lines whole)
        lone_ok = hints.wrap is None and len(raw) >= WRAP_MIN and len(raw) >= widest.get() \
            and not nccl_frame.PLAIN_INFO.match(raw)
        raw, more = unwrap(raw, row, line_no, frame, end, hints.wrap, lone=lone_ok)
        taken.update(more)
        made = lines_of(path, line_no - shift, row, raw, hints)
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
