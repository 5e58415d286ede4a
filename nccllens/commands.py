"""What the CLI commands do, as plain functions returning an exit code (testable without typer)."""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterable
from pathlib import Path

from nccllens import workers
from nccllens.report import EXTENSIONS

_RANK = {"info": 0, "warning": 1, "error": 2, "critical": 3}


def _err(msg: str) -> None:
    with contextlib.suppress(OSError, ValueError, AttributeError):  # stderr closed or full: say nothing
        print(f"nccllens: {msg}", file=sys.stderr)


def _streams() -> None:
    """A closed standard output or error (``>&-``) reads as an empty sink, never as a traceback; SIGTERM and
    SIGHUP end the run and its workers (``interrupts``)."""
    from nccllens import interrupts

    interrupts.install()
    if sys.stdout is None:
        sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - for the life of the process
    if sys.stderr is None:
        sys.stderr = open(os.devnull, "w")  # noqa: SIM115


def _to_stdout(pieces: Iterable[str]) -> bool:
    """Write to standard output; False (said on stderr) when it fails (``/dev/full``, a closed pipe)."""
    try:
        for piece in pieces:
            sys.stdout.write(piece)
        sys.stdout.flush()
        return True
    except (OSError, ValueError) as exc:
        _err(f"cannot write to standard output: {getattr(exc, 'strerror', None) or exc}")
        with contextlib.suppress(OSError, ValueError):  # what is still buffered goes nowhere at exit
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return False


def unique_paths(paths: list[str]) -> list[str]:
    """``paths`` with a path given twice (``logs`` and ``logs/``, ``./a.log`` and ``a.log``) kept once, as
    first written."""
    import os

    seen: dict[str, str] = {}
    for p in paths:
        seen.setdefault(p if p == "-" else os.path.normpath(p), p)
    return list(seen.values())


def _check_paths(paths: list[str]) -> bool:
    from nccllens.ingest.sources import missing_paths

    missing = missing_paths(paths)
    for p in missing:
        _err(f"{p}: no such file or folder")
    if sum(p == "-" for p in paths) > 1:
        _err("standard input (-) can be given only once")
        return False
    return not missing


PROGRESS_MIN_BYTES = 64 << 20  # smaller inputs finish before a bar would help


@contextlib.contextmanager
def _progress_bar():
    """A transient progress bar on stderr, only when stderr is a terminal; nothing on stdout."""
    if not sys.stderr.isatty():
        yield None
        return
    from rich.console import Console
    from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TimeRemainingColumn

    bar = Progress(TextColumn("reading logs"), BarColumn(), DownloadColumn(), TimeRemainingColumn(),
                   console=Console(stderr=True), transient=True)
    task = None

    def update(done: int, total: int) -> None:
        nonlocal task
        if total < PROGRESS_MIN_BYTES:
            return
        if task is None:
            bar.start()
            task = bar.add_task("read", total=total)
        bar.update(task, completed=done)

    try:
        yield update
    finally:
        bar.stop()


def _lang(lang: str | None) -> str:
    from nccllens.config import load_settings
    from nccllens.i18n import choose_language

    return choose_language(lang, load_settings().lang)


def _write(pieces: Iterable[str], output: Path | None) -> bool:
    """Write the report's text as it is rendered, piece by piece (to standard output or ``output``)."""
    if output is None:
        return _to_stdout(pieces)
    from nccllens.interrupts import atomic_output

    try:  # under a temporary name until complete: an interrupted run leaves no report looking whole
        with atomic_output(output) as tmp, tmp.open("w", encoding="utf-8") as out:
            for piece in pieces:
                out.write(piece)
    except OSError as exc:
        _err(f"cannot write {output}: {exc.strerror or exc}")
        return False
    return True


def analyze(paths: list[str], *, fmt: str | None, output: Path | None, lang: str | None, rules: list[str],
            select: list[str], ignore: list[str], host: str | None, rank: int | None, fail_on: str | None,
            exit_zero: bool, verbose: bool = False, quiet: bool = False, command: str | None = None) -> int:
    """Run the analysis and write the report; 0 clean, 1 findings at/above fail-on, 2 usage/input error.
    ``command``: the command line, for the HTML footer."""
    _streams()
    if not _check_paths(paths):
        return 2
    if fmt is None and output is not None and output.suffix.lower() not in EXTENSIONS:
        _err(f"{output}: unknown report extension {output.suffix or '(none)'!r}: use "
             f"{', '.join(sorted(EXTENSIONS))}, or give --format")
        return 2
    paths = unique_paths(paths)
    with workers.early(paths):  # before anything loads polars
        return _analyze(paths, fmt=fmt, output=output, lang=lang, rules=rules, select=select, ignore=ignore,
                        host=host, rank=rank, fail_on=fail_on, exit_zero=exit_zero, verbose=verbose, quiet=quiet,
                        command=command)


def _analyze(paths: list[str], *, fmt: str | None, output: Path | None, lang: str | None, rules: list[str],
             select: list[str], ignore: list[str], host: str | None, rank: int | None, fail_on: str | None,
             exit_zero: bool, verbose: bool, quiet: bool, command: str | None = None) -> int:
    from nccllens.analysis import run_analysis
    from nccllens.config import ConfigError, resolve
    from nccllens.engine import RuleError
    from nccllens.i18n import choose_language
    from nccllens.report import render_pieces
    from nccllens.report.outcome import nothing_read

    if fmt is None:
        fmt = EXTENSIONS.get(output.suffix.lower(), "text") if output else "text"
    try:
        # configuration from the working directory only, never from the folders being analysed (issue 19)
        settings = resolve(rules=rules, select=select, ignore=ignore, lang=lang, fail_on=fail_on, analysed=paths)
        if settings.ignored:
            _err(f"{settings.ignored}: not read as configuration: it lies in a folder being analysed")
        language = choose_language(lang, settings.lang)
        with _progress_bar() as progress:
            report = run_analysis(paths, lang=language, rules_dirs=[str(r) for r in settings.rules],
                                  select=settings.select, ignore=settings.ignore, host=host, rank=rank,
                                  progress=progress, config=str(settings.source) if settings.source else None)
    except (ConfigError, RuleError, ValueError, OSError) as exc:
        _err(str(exc))
        return 2
    empty = nothing_read(paths, report.inputs)
    if empty:  # like pytest's "no tests ran": an input problem, not a healthy job
        _err(empty)
        return 2
    fail_on = settings.fail_on or "error"
    if fail_on not in _RANK:
        _err(f"unknown --fail-on level {fail_on!r}: use critical, error, warning or info")
        return 2
    if not _write(render_pieces(report, fmt, verbose=verbose, quiet=quiet, command=command), output):
        return 2
    if output is not None:
        _err(f"wrote the {fmt} report to {output}")
    if exit_zero:
        return 0
    worst = max((_RANK.get(f.severity, 0) for f in report.findings), default=-1)
    return 1 if worst >= _RANK[fail_on] else 0


EVENT_FAMILIES = ("cpp", "flight", "horovod", "k8s", "kernel", "lightning", "nccl", "openmpi", "other", "progress", "python", "slurm", "torch",
                  "torchrun")


def _unknown_kinds(kinds: list[str]) -> list[str]:
    """The ``--kind`` values that name no family of docs/events.md (``torch.*``, ``nccl.warn``...)."""
    return [k for k in kinds if k.split(".", 1)[0].rstrip("*") not in EVENT_FAMILIES]


def events(paths: list[str], *, kinds: list[str], ranks: list[int], output: str | None, host: str | None,
           hosts: list[str] = ()) -> int:
    _streams()
    if not _check_paths(paths):
        return 2
    bad = _unknown_kinds(kinds)
    if bad:
        _err(f"unknown event kind {', '.join(map(repr, bad))}: a kind is family.name or family.*, with family one of "
             f"{', '.join(EVENT_FAMILIES)} (docs/events.md)")
        return 2
    paths = unique_paths(paths)
    with workers.early(paths):  # before anything loads polars
        return _events(paths, kinds=kinds, ranks=ranks, output=output, host=host, hosts=list(hosts))


def _events(paths: list[str], *, kinds: list[str], ranks: list[int], output: str | None, host: str | None,
            hosts: list[str]) -> int:
    import polars as pl

    from nccllens.analysis import Options, load_rules
    from nccllens.event_io import filter_events, show, write_events
    from nccllens.pipeline import extract_tables

    # the rules' patterns too: lines only a rule keeps must reach the table (and its Parquet shards), and
    # the lines that show a job finished (analyze's "No failure found" needs them)
    from nccllens.report.outcome import FINISHED_PATTERNS

    patterns = [r.match.pattern for r in load_rules(Options()) if r.match.pattern] + list(FINISHED_PATTERNS)
    table, _, summaries = extract_tables(paths, patterns, host=host)
    table = filter_events(table, kinds, ranks)
    if ranks:
        summaries = summaries.filter(summaries["rank"].is_in(ranks))
    if hosts:
        table = table.filter(pl.col("host").cast(pl.String).is_in(hosts))
    if output is None:
        return 0 if _to_stdout([show(table)]) else 2
    try:
        write_events(table, output, summaries)
    except (OSError, ValueError) as exc:
        _err(str(exc))
        return 2
    _err(f"wrote {table.height} events to {output}")
    return 0


def ranks(paths: list[str], *, lang: str | None, fmt: str = "text") -> int:
    _streams()
    if not _check_paths(paths):
        return 2
    paths = unique_paths(paths)
    with workers.early(paths):  # before anything loads polars
        from nccllens.analysis import run_analysis
        from nccllens.report.outcome import nothing_read
        from nccllens.report.rank_table import ranks_json, render_ranks
        from nccllens.terminal import safe_report

        report = run_analysis(paths, lang=_lang(lang))
    empty = nothing_read(paths, report.inputs)
    if empty:
        _err(empty)
        return 2
    return 0 if _to_stdout([ranks_json(report) if fmt == "json" else render_ranks(safe_report(report))]) else 2


def explain(rule_id: str, lang: str | None) -> int:
    from nccllens.cli_rules import explain as _explain

    return _explain(rule_id, _lang(lang)) or 0
