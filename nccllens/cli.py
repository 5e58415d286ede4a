"""Command line: each command parses its options and calls the package; nothing more."""

from __future__ import annotations

import sys
from enum import Enum
from pathlib import Path

import typer

from nccllens import allocator

allocator.for_main_process()  # before anything imports polars

from nccllens import commands  # noqa: E402
from nccllens.shutdown import exit_now  # noqa: E402

app = typer.Typer(
    name="nccllens",
    help="Find the quiet first cause of a failed distributed training job in its logs.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
)


class Format(str, Enum):
    text = "text"
    json = "json"
    html = "html"
    md = "md"


class Lang(str, Enum):
    en = "en"
    zh = "zh"


class Severity(str, Enum):
    critical = "critical"
    error = "error"
    warning = "warning"
    info = "info"


PathsArg = typer.Argument(..., help="Log files, folders, archives (.gz .zip .tar .tgz), or - for stdin.")


@app.command()
def analyze(
    paths: list[str] = PathsArg,
    format: Format | None = typer.Option(None, "--format", "-f", help="text, json, html or md (default: from -o, else text)."),
    output: Path | None = typer.Option(None, "--output", "-o", help="Write the report to this file."),
    lang: Lang | None = typer.Option(None, "--lang", help="Report language (default: from LANGUAGE/LC_ALL/LC_MESSAGES/LANG)."),
    rules: list[str] = typer.Option([], "--rules", help="Extra rule folder (repeatable)."),
    select: list[str] = typer.Option([], "--select", help="Only these rule ids or categories (repeatable)."),
    ignore: list[str] = typer.Option([], "--ignore", help="Skip these rule ids or categories (repeatable)."),
    host: str | None = typer.Option(None, "--host", help="Host name for input without one (stdin)."),
    rank: int | None = typer.Option(None, "--rank", help="Global rank for input without one (stdin)."),
    fail_on: Severity | None = typer.Option(None, "--fail-on", help="Exit 1 when a finding is at least this severe (default: error)."),
    exit_zero: bool = typer.Option(False, "--exit-zero", help="Exit 0 even when findings are reported."),
) -> None:
    """Analyze the logs of a failed job and report the root cause."""
    code = commands.analyze(
        paths, fmt=format.value if format else None, output=output, lang=lang.value if lang else None,
        rules=rules, select=select, ignore=ignore, host=host, rank=rank, fail_on=fail_on.value if fail_on else None,
        exit_zero=exit_zero,
    )
    raise typer.Exit(code)


@app.command()
def events(
    paths: list[str] = PathsArg,
    kind: list[str] = typer.Option([], "--kind", "-k", help="Only events of this kind (or family.*), repeatable."),
    rank: list[int] = typer.Option([], "--rank", "-r", help="Only events of this global rank, repeatable."),
    output: str | None = typer.Option(None, "--output", "-o", help="Write .parquet, .csv or .jsonl; a folder/ gets Parquet shards."),
    host: str | None = typer.Option(None, "--host", help="Host name for input without one (stdin)."),
) -> None:
    """Show the normalized event table, or write it as Parquet, CSV or JSON lines."""
    raise typer.Exit(commands.events(paths, kinds=kind, ranks=rank, output=output, host=host))


@app.command()
def ranks(
    paths: list[str] = PathsArg,
    lang: Lang | None = typer.Option(None, "--lang", help="Language of the table headings."),
) -> None:
    """Per-rank status: state, exit, last collective, first error."""
    raise typer.Exit(commands.ranks(paths, lang=lang.value if lang else None))


@app.command()
def explain(rule_id: str = typer.Argument(..., help="A rule id or alias."),
            lang: Lang | None = typer.Option(None, "--lang")) -> None:
    """Show a rule's page: what it detects, why it matters, examples, fix."""
    raise typer.Exit(commands.explain(rule_id, lang.value if lang else None))


try:
    from nccllens.cli_rules import app as rules_app

    app.add_typer(rules_app, name="rules", help="List, show and check rules.")
except ImportError:  # pragma: no cover - only while the engine is being written
    pass


def main() -> None:  # pragma: no cover
    try:
        app(prog_name="nccllens")
    except SystemExit as done:
        exit_now(done.code)
        raise


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
