"""What ``nccllens analyze`` and ``explain`` do, as plain functions returning an exit code (testable
without typer); ``events`` and ``ranks`` are in ``commands_tables``."""

from __future__ import annotations

from pathlib import Path

from nccllens import cli_io
from nccllens.extract import workers
from nccllens.report import EXTENSIONS

_RANK = {"info": 0, "warning": 1, "error": 2, "critical": 3}


def language(lang: str | None) -> str:
    from nccllens.config import load_settings
    from nccllens.i18n import choose_language

    return choose_language(lang, load_settings().lang)


def analyze(paths: list[str], *, fmt: str | None, output: Path | None, lang: str | None, rules: list[str],
            select: list[str], ignore: list[str], host: str | None, rank: int | None, fail_on: str | None,
            exit_zero: bool, verbose: bool = False, quiet: bool = False, command: str | None = None,
            config: Path | None = None) -> int:
    """Run the analysis and write the report; 0 clean, 1 findings at/above fail-on, 2 usage/input error.
    ``command``: the command line, for the HTML footer; ``config``: a configuration file named explicitly."""
    cli_io.streams()
    if not cli_io.check_paths(paths):
        return 2
    if config is not None and not config.is_file():
        cli_io.err(f"--config {config}: no such file")
        return 2
    if fmt is None and output is not None and output.suffix.lower() not in EXTENSIONS:
        cli_io.err(f"{output}: unknown report extension {output.suffix or '(none)'!r}: use "
             f"{', '.join(sorted(EXTENSIONS))}, or give --format")
        return 2
    paths = cli_io.unique_paths(paths)
    with workers.early(paths):  # before anything loads polars
        return _analyze(paths, fmt=fmt, output=output, lang=lang, rules=rules, select=select, ignore=ignore,
                        host=host, rank=rank, fail_on=fail_on, exit_zero=exit_zero, verbose=verbose, quiet=quiet,
                        command=command, config=config)


def _analyze(paths: list[str], *, fmt: str | None, output: Path | None, lang: str | None, rules: list[str],
             select: list[str], ignore: list[str], host: str | None, rank: int | None, fail_on: str | None,
             exit_zero: bool, verbose: bool, quiet: bool, command: str | None = None,
             config: Path | None = None) -> int:
    from nccllens.analysis import run_analysis
    from nccllens.config import ConfigError, resolve
    from nccllens.engine import RuleError
    from nccllens.i18n import choose_language
    from nccllens.report import render_pieces
    from nccllens.report.outcome import nothing_read

    if fmt is None:
        fmt = EXTENSIONS.get(output.suffix.lower(), "text") if output else "text"
    try:
        # configuration from --config, else the working directory only, never from the folders being
        # analysed (issue 19)
        settings = resolve(rules=rules, select=select, ignore=ignore, lang=lang, fail_on=fail_on, analysed=paths,
                           config=config)
        if settings.ignored:
            cli_io.err(f"{settings.ignored}: not read as configuration: it lies in a folder being analysed")
        language = choose_language(lang, settings.lang)
        with cli_io.progress_bar() as progress:
            report = run_analysis(paths, lang=language, rules_dirs=[str(r) for r in settings.rules],
                                  select=settings.select, ignore=settings.ignore, host=host, rank=rank,
                                  progress=progress, config=str(settings.source) if settings.source else None)
    except (ConfigError, RuleError, ValueError, OSError) as exc:
        cli_io.err(str(exc))
        return 2
    empty = nothing_read(paths, report.inputs)
    if empty:  # like pytest's "no tests ran": an input problem, not a healthy job
        cli_io.err(empty)
        return 2
    fail_on = settings.fail_on or "error"
    if fail_on not in _RANK:
        cli_io.err(f"unknown --fail-on level {fail_on!r}: use critical, error, warning or info")
        return 2
    if not cli_io.write(render_pieces(report, fmt, verbose=verbose, quiet=quiet, command=command), output):
        return 2
    if output is not None:
        cli_io.err(f"wrote the {fmt} report to {output}")
    if exit_zero:
        return 0
    worst = max((_RANK.get(f.severity, 0) for f in report.findings), default=-1)
    return 1 if worst >= _RANK[fail_on] else 0


def explain(rule_id: str, lang: str | None) -> int:
    from nccllens.cli_rules import explain as _explain

    return _explain(rule_id, language(lang)) or 0
