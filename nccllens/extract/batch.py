"""Many small files at once: one polars frame and one prefilter pass for a whole batch.

Reading a file into polars costs about half a millisecond whatever its size, so a folder of
4,096 per-rank logs is read as a few concatenated batches instead; survivors are then split back
to their files (line numbers, hints and the ``following`` window stay per file).
"""

from __future__ import annotations

import polars as pl

from nccllens import events as ev
from nccllens import summaries as sm
from nccllens.extract.engine import frame_hits
from nccllens.extract.source import extract_source_tables, file_end_event, summarised_hosts
from nccllens.ingest.layout import PathHints, hints_for
from nccllens.ingest.sniff import classify
from nccllens.ingest.sources import ArchiveLimit, MemberUnreadable, Source
from nccllens.parse import nccl_frame
from nccllens.parse.base import FileContext, Line
from nccllens.parse.dense_rows import describe
from nccllens.parse.facts_frame import facts_of_files, stated_host_of, with_facts
from nccllens.parse.following import attach_window
from nccllens.parse.guard import cut_note
from nccllens.parse.lines import ReadStats, frame
from nccllens.parse.pieces import candidate_lines_many
from nccllens.parse.survivors import (
    fill_path_hints,
    kept_rows,
    line_masks,
    parse_lines,
    survivor_lines,
)
from nccllens.prefilter import Plan
from nccllens.repeats import collapse
from nccllens.report.model import InputFile

SMALL = 4 << 20  # files up to this size are batched (per-call regex and automaton set-up is paid per batch)
HEAD_BYTES = 16 << 10  # of each batched file, kept for what its first lines say of it (``file_facts``)


# the texts without one of which no line names the host it ran on (``file_facts``: a shell prompt's "@", a task
# header, a "Hostname:" line): a head holding none of them is not framed at all
_HOST_HINTS = (b"@", b"JobEnvironment(", b"ostname", b"Host name")


def _may_name_host(head: bytes) -> bool:
    return any(hint in head for hint in _HOST_HINTS)


def _quiet_hints(quiet: list[int], heads: list[bytes], hints: list[PathHints]) -> dict[int, PathHints]:
    """The path hints of the files ``quiet`` (none of whose lines survived) with what their first lines say (a
    prompt's or a header's host): each head framed alone (a paste's shape is read per file), their facts read in
    one pass."""
    if not quiet:
        return {}
    frames = [frame(heads[k][:heads[k].rfind(b"\n") + 1] or heads[k], 1, ReadStats())["raw"] for k in quiet]
    ends = [0]
    for rows in frames:
        ends.append(ends[-1] + rows.len())
    facts = facts_of_files(pl.concat(frames), list(zip(ends, ends[1:], strict=False)))
    return {k: with_facts(hints[k], f) for k, f in zip(quiet, facts, strict=True)}


def _clean(data: bytes, info: InputFile) -> bytes:
    if b"\x00" in data:
        info.notes.append("NUL bytes removed")
        data = data.replace(b"\x00", b"")
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        info.notes.append("invalid UTF-8 replaced with U+FFFD")
        data = data.decode("utf-8", errors="replace").encode()
    if data and not data.endswith(b"\n"):
        data += b"\n"
    return data


def extract_small(sources: list[Source], pattern: Plan, rule_pattern: tuple[str, ...],
                  year_for) -> list[tuple[pl.DataFrame, InputFile, pl.DataFrame]]:
    """Extract a batch of small plain files; anything unusual goes through ``extract_source_tables``.
    Each file's result is (events, inventory entry, summaries); the batch's events and summaries are all
    in its first file's result."""
    results: list[tuple[pl.DataFrame, InputFile, pl.DataFrame] | None] = [None] * len(sources)
    batch: list[tuple[int, bytes, InputFile]] = []
    hints_of: dict[int, PathHints] = {}
    for i, src in enumerate(sources):
        try:
            data = b"".join(src.chunks())
        except (OSError, ArchiveLimit, MemberUnreadable):  # extract_source says why
            data = None
        kind, skip = classify(src.path, data[:65536]) if data is not None else ("log", "unreadable")
        if data is None or kind != "log" or skip:
            results[i] = extract_source_tables(src, pattern, rule_pattern)
            continue
        hints = hints_of[i] = hints_for(src.scoped)
        info = InputFile(path=src.path, kind="log", host=hints.host, rank=hints.rank)
        batch.append((i, data, info))
    data = None  # the loop's last file: its text lives on in ``batch`` only, which lets it go below
    if batch:
        # plain UTF-8 files (the usual case) go straight to the coarse pass; otherwise clean them first
        cand = None if pattern.unfiltered else candidate_lines_many([d for _, d, _ in batch], 1, pattern.keys,
                                                                    ReadStats(), pattern.dense, pattern.engine)
        # each file's first lines, kept past its text: a file none of whose lines survives still names its host in
        # a prompt or header, and which lines survive depends on the engine (exact) or the literals (plain path)
        heads = [d[:HEAD_BYTES] for _, d, _ in batch]
        if cand is None:
            batch = [(i, _clean(data, info), info) for i, data, info in batch]
        else:  # the candidates hold all that is needed of the files: let their text go
            batch = [(i, b"", info) for i, _, info in batch]
        starts, line = [], 1
        for k, (_, data, info) in enumerate(batch):
            starts.append(line)
            info.lines = cand.counts[k] if cand is not None else data.count(b"\n")
            line += info.lines
        if cand is None:
            # file by file: how a paste was wrapped (indented, quoted, hard-wrapped by a terminal) is read per
            # file, never off a neighbour's lines
            big = pl.concat([frame(d, start, ReadStats()) for (_, d, _), start in zip(batch, starts, strict=True)])
        else:
            big = cand.frame
        big = big.with_row_index("row")
        start_s = pl.Series(starts, dtype=pl.UInt32)
        row_starts = big["line"].search_sorted(start_s, side="left").to_list() + [big.height]
        big = big.with_columns((start_s.search_sorted(big["line"], side="right") - 1).alias("owner"))
        hits = cand.hits if cand is not None else (
            frame_hits(pattern.engine, big) if pattern.engine is not None else None)
        kept, partial = kept_rows(big, pattern, ("owner",), hits)
        # what the own lines of each file with survivors say of all of them (leading segments, prompts), one pass
        with_survivors = sorted(kept["owner"].unique().to_list())
        facts = facts_of_files(big["raw"], [(row_starts[k], row_starts[k + 1]) for k in with_survivors])
        hints_k = {k: with_facts(hints_of[batch[k][0]], f) for k, f in zip(with_survivors, facts, strict=True)}
        quiet = _quiet_hints([k for k in range(len(batch)) if k not in hints_k and _may_name_host(heads[k])], heads,
                             [hints_of[i] for i, _, _ in batch])
        kept, regular = nccl_frame.split(kept, "owner", pl.DataFrame(
            [(k, h.wrap) for k, h in hints_k.items() if h.wrap is not None], schema={"owner": kept["owner"].dtype,
                                                                                    "wrap": pl.UInt32}, orient="row"),
            big)
        # the regular NCCL lines' events come as a frame; their hosts count as stated by the file's events
        regular_of = {k: (n, set(hosts)) for k, n, hosts in regular.group_by("owner").agg(
            pl.len(), pl.col("host").unique()).iter_rows()} if regular.height else {}
        by_owner = kept.partition_by("owner", as_dict=True, include_key=False)
        per_file: list[tuple[int, list[Line], PathHints]] = []
        for k, (i, _, _) in enumerate(batch):
            mine = by_owner.get((k,))
            hints = hints_k.get(k, quiet.get(k, hints_of[i]))
            lines = survivor_lines(mine, sources[i].path, hints, starts[k] - 1, big,
                                   row_starts[k + 1], row_starts[k]) if mine is not None else []
            per_file.append((k, lines, hints))
        everything = [ln for _, lines, _ in per_file for ln in lines]
        masks = line_masks(everything, rule_pattern) if everything else {}
        files = {k: (sources[i].path, hints_of[i], starts[k] - 1) for k, (i, _, _) in enumerate(batch)}
        summary_rows = describe(partial, "", None, files=files) if partial.height else []
        named_hosts = summarised_hosts(summary_rows)  # the hosts each file's summarised NCCL lines name
        rows: list[dict] = []
        offset = 0
        for k, lines, hints in per_file:
            i, _, info = batch[k]
            before = len(rows)
            if lines:
                file_masks = {name: m[offset:offset + len(lines)] for name, m in masks.items()}
                offset += len(lines)
                ctx = FileContext(path=sources[i].path, host=hints.host, rank=hints.rank,
                                  local_rank=hints.local_rank, attempt=hints.attempt, year=year_for(sources[i]))
                attach_window(ctx, big, hints, starts[k] - 1, row_starts[k + 1], row_starts[k])
                rows.extend(parse_lines(lines, file_masks, ctx))
                if ctx.cut_for_matching:
                    info.notes.append(cut_note(ctx.cut_for_matching))
            r0, r1 = row_starts[k], row_starts[k + 1]
            if cand is not None and cand.lasts[k] is not None:
                line_no, raw = cand.lasts[k]
                rows.append(file_end_event(sources[i].path, line_no - (starts[k] - 1), raw, hints))
            elif cand is None and r1 > r0:
                line_no, raw = big.row(r1 - 1)[1:3]
                rows.append(file_end_event(sources[i].path, line_no - (starts[k] - 1), raw, hints))
            count, hosts = regular_of.get(k, (0, set()))
            if k not in hints_k and not count and r1 > r0:  # no line became an event: the host a line states
                hosts = hosts | set(filter(None, [stated_host_of(big["raw"].slice(r0, r1 - r0))]))
            fill_path_hints(rows[before:], hints, hosts | named_hosts.get(sources[i].path, set()))
            info.events = len(rows) - before + count
            results[i] = (ev.empty(), info, sm.empty())
        if rows or summary_rows or regular.height:  # one table for the batch: a frame per small file costs more
            i0 = batch[0][0]
            if regular.height:
                files_frame = pl.DataFrame(
                    [(k, sources[batch[k][0]].path, starts[k] - 1, h.line_rank, h.rank, h.local_rank, h.attempt)
                     for k, h in hints_k.items() if k in regular_of],
                    schema={"owner": regular["owner"].dtype, "file": pl.String, "shift": pl.Int64,
                            "line_rank": pl.Int64, "rank": pl.Int64, "local_rank": pl.Int64, "attempt": pl.Int64},
                    orient="row")
                table = ev.concat([ev.from_rows(rows), nccl_frame.events(regular, files_frame, "owner")])
            else:
                table = ev.from_rows(rows)
            table = collapse(table)  # repeated events counted, not stored (``nccllens.repeats``)
            if table.height < len(rows) + regular.height:
                kept = dict(table.group_by("file").len().iter_rows())
                for i, _, info in batch:
                    info.events = kept.get(sources[i].path, 0)
            results[i0] = (table, results[i0][1], sm.from_rows(summary_rows))
    return results  # type: ignore[return-value]
