"""What ``nccllens events`` and ``nccllens ranks`` do, as plain functions returning an exit code."""

from __future__ import annotations

from nccllens import cli_io
from nccllens.commands import language
from nccllens.extract import workers
from nccllens.parse import EVENT_FAMILIES


def _unknown_kinds(kinds: list[str]) -> list[str]:
    """The ``--kind`` values that name no family of docs/events.md (``torch.*``, ``nccl.warn``...)."""
    return [k for k in kinds if k.split(".", 1)[0].rstrip("*") not in EVENT_FAMILIES]


def events(paths: list[str], *, kinds: list[str], ranks: list[int], output: str | None, host: str | None,
           hosts: list[str] = (), full: bool = False) -> int:
    """The event table on stdout (``full``: no cell shortened, as when piped), or written to ``output``."""
    cli_io.streams()
    if not cli_io.check_paths(paths):
        return 2
    bad = _unknown_kinds(kinds)
    if bad:
        cli_io.err(f"unknown event kind {', '.join(map(repr, bad))}: a kind is family.name or family.*, with family one of "
             f"{', '.join(EVENT_FAMILIES)} (docs/events.md)")
        return 2
    paths = cli_io.unique_paths(paths)
    with workers.early(paths):  # before anything loads polars
        return _events(paths, kinds=kinds, ranks=ranks, output=output, host=host, hosts=list(hosts), full=full)


def _events(paths: list[str], *, kinds: list[str], ranks: list[int], output: str | None, host: str | None,
            hosts: list[str], full: bool = False) -> int:
    import polars as pl

    from nccllens.analysis import Options, load_rules
    from nccllens.event_io import filter_events, write_events
    from nccllens.extract import extract_tables

    # the rules' patterns too: lines only a rule keeps must reach the table (and its Parquet shards), and
    # the lines that show a job finished (analyze's "No failure found" needs them)
    from nccllens.report.outcome import FINISHED_PATTERNS
    from nccllens.text_tables import events_table, piped

    patterns = [r.match.pattern for r in load_rules(Options()) if r.match.pattern] + list(FINISHED_PATTERNS)
    table, _, summaries = extract_tables(paths, patterns, host=host)
    table = filter_events(table, kinds, ranks)
    if ranks:
        summaries = summaries.filter(summaries["rank"].is_in(ranks))
    if hosts:
        table = table.filter(pl.col("host").cast(pl.String).is_in(hosts))
    if output is None:
        return 0 if cli_io.to_stdout([events_table(table, full=full or piped())]) else 2
    try:
        write_events(table, output, summaries)
    except (OSError, ValueError) as exc:
        cli_io.err(str(exc))
        return 2
    cli_io.err(f"wrote {table.height} events to {output}")
    return 0


def ranks(paths: list[str], *, lang: str | None, fmt: str = "text", full: bool = False) -> int:
    cli_io.streams()
    if not cli_io.check_paths(paths):
        return 2
    paths = cli_io.unique_paths(paths)
    with workers.early(paths):  # before anything loads polars
        from nccllens.analysis import run_analysis
        from nccllens.report.outcome import nothing_read
        from nccllens.report.rank_table import ranks_json, render_ranks
        from nccllens.terminal import safe_report
        from nccllens.text_tables import piped

        report = run_analysis(paths, lang=language(lang))
    empty = nothing_read(paths, report.inputs)
    if empty:
        cli_io.err(empty)
        return 2
    return 0 if cli_io.to_stdout([ranks_json(report) if fmt == "json" else render_ranks(safe_report(report), full=full or piped())]) else 2
