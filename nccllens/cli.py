"""Command line: each command parses its options and calls the package; nothing more."""

from __future__ import annotations

import sys
from enum import Enum
from pathlib import Path

import typer
from typer.core import TyperCommand

from nccllens import allocator
from nccllens.invocation import command_line

allocator.for_main_process()  # before anything imports polars

from nccllens import commands, commands_tables  # noqa: E402
from nccllens.cli_help import ANALYZE_EXAMPLES, FLAG, Command, Group  # noqa: E402
from nccllens.shutdown import exit_now  # noqa: E402

app = typer.Typer(
    name="nccllens",
    help="Find the quiet first cause of a failed distributed training job in its logs.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)

app.info.cls = Group  # the top-level help too


def _version(value: bool) -> None:
    if value:
        from nccllens import __version__

        typer.echo(f"nccllens {__version__}")
        raise typer.Exit(0)


@app.callback()
def _main(version: bool = typer.Option(False, "--version", "-V", metavar=FLAG, callback=_version, is_eager=True,
                                       help="Print the version and exit.")) -> None:
    """Find the quiet first cause of a failed distributed training job in its logs."""



class Format(str, Enum):
    text = "text"
    json = "json"
    html = "html"
    md = "md"


class Lang(str, Enum):
    en = "en"
    zh = "zh"


class RanksFormat(str, Enum):
    text = "text"
    json = "json"


class Severity(str, Enum):
    critical = "critical"
    error = "error"
    warning = "warning"
    info = "info"


def _complete_rule(incomplete: str) -> list[str]:
    """Rule ids and aliases, and analysis ids, for the shell's completion of ``nccllens explain``."""
    from nccllens.engine import load_rules
    from nccllens.selection import completions

    return completions(load_rules([]), incomplete)


def _complete_selector(incomplete: str) -> list[str]:
    """What ``--select`` / ``--ignore`` take: rule ids, analysis ids and categories."""
    from nccllens.engine import load_rules
    from nccllens.selection import completions

    return completions(load_rules([]), incomplete, categories=True)


PathsArg = typer.Argument(..., metavar="PATH...", help="Log files, folders, archives (.gz .zip .tar .tgz), or - for stdin.")


@app.command(cls=Command, help=ANALYZE_EXAMPLES)
def analyze(
    paths: list[str] = PathsArg,
    format: Format | None = typer.Option(None, "--format", "-f", metavar="FORMAT", help="text, json, html or md (default: from -o's extension, else text)."),
    output: Path | None = typer.Option(None, "--output", "-o", metavar="FILE", help="Write the report to this file (.txt .json .html .md)."),
    lang: Lang | None = typer.Option(None, "--lang", metavar="en|zh", help="Report language (default: from LANGUAGE/LC_ALL/LC_MESSAGES/LANG)."),
    rules: list[str] = typer.Option([], "--rules", metavar="DIR", help="Extra rule folder (repeatable)."),
    config: Path | None = typer.Option(None, "--config", metavar="FILE",
                                       help="Read this nccllens.toml or pyproject.toml ([tool.nccllens]) instead of "
                                            "the one in the working directory."),
    select: list[str] = typer.Option([], "--select", metavar="ID", autocompletion=_complete_selector,
                                     help="Only these rule ids, analysis ids (AN-...) or categories (repeatable)."),
    ignore: list[str] = typer.Option([], "--ignore", metavar="ID", autocompletion=_complete_selector,
                                     help="Skip these rule ids, analysis ids (AN-...) or categories (repeatable)."),
    host: str | None = typer.Option(None, "--host", metavar="HOST", help="Host name for input without one (stdin)."),
    rank: int | None = typer.Option(None, "--rank", metavar="RANK", help="Global rank for input without one (stdin)."),
    fail_on: Severity | None = typer.Option(None, "--fail-on", metavar="LEVEL", help="Exit 1 when a finding is at least this severe: critical, error (default), warning, info."),
    exit_zero: bool = typer.Option(False, "--exit-zero", metavar=FLAG, help="Exit 0 even when findings are reported."),
    verbose: bool = typer.Option(False, "--verbose", "-v", metavar=FLAG, help="List every input file (text report)."),
    quiet: bool = typer.Option(False, "--quiet", "-q", metavar=FLAG, help="Print the verdict and the summary line only (text report)."),
) -> None:
    code = commands.analyze(
        paths, fmt=format.value if format else None, output=output, lang=lang.value if lang else None,
        rules=rules, select=select, ignore=ignore, host=host, rank=rank, fail_on=fail_on.value if fail_on else None,
        exit_zero=exit_zero, verbose=verbose, quiet=quiet, command=command_line(), config=config,
    )
    raise typer.Exit(code)


@app.command(cls=Command)
def events(
    paths: list[str] = PathsArg,
    kind: list[str] = typer.Option([], "--kind", "-k", metavar="KIND", help="Only events of this kind (or family.*), repeatable."),
    rank: list[int] = typer.Option([], "--rank", "-r", metavar="RANK", help="Only events of this global rank, repeatable."),
    output: str | None = typer.Option(None, "--output", "-o", metavar="FILE", help="Write .parquet, .csv or .jsonl; a folder/ gets Parquet shards."),
    host: list[str] = typer.Option([], "--host", metavar="HOST", help="Only events of this host, repeatable."),
    stdin_host: str | None = typer.Option(None, "--stdin-host", metavar="HOST", help="Host name for input without one (stdin)."),
    verbose: bool = typer.Option(False, "--verbose", "-v", metavar=FLAG,
                                 help="Show every cell whole in a terminal too (piped output always is)."),
) -> None:
    """Show the normalized event table, or write it as Parquet, CSV or JSON lines."""
    raise typer.Exit(commands_tables.events(paths, kinds=kind, ranks=rank, output=output, host=stdin_host, hosts=host,
                                            full=verbose))


@app.command(cls=Command)
def ranks(
    paths: list[str] = PathsArg,
    lang: Lang | None = typer.Option(None, "--lang", metavar="en|zh", help="Language of the table headings."),
    format: RanksFormat = typer.Option(RanksFormat.text, "--format", "-f", metavar="FORMAT", help="text or json."),
    verbose: bool = typer.Option(False, "--verbose", "-v", metavar=FLAG,
                                 help="Show every cell whole in a terminal too (piped output always is)."),
) -> None:
    """Per-rank status: state, culprit, exit, last collective, last seen, first error."""
    raise typer.Exit(commands_tables.ranks(paths, lang=lang.value if lang else None, fmt=format.value,
                                           full=verbose))


@app.command(cls=Command)
def explain(rule_id: str = typer.Argument(..., metavar="RULE", help="A rule id or alias, or an analysis id (AN-...).",
                                          autocompletion=_complete_rule),
            lang: Lang | None = typer.Option(None, "--lang", metavar="en|zh")) -> None:
    """Show the page of a rule or an analysis: what it detects, why it matters, examples, fix."""
    raise typer.Exit(commands.explain(rule_id, lang.value if lang else None))


try:
    from nccllens.cli_rules import app as rules_app

    for info in rules_app.registered_commands:
        if info.cls in (None, TyperCommand):
            info.cls = Command
    app.add_typer(rules_app, name="rules", cls=Group, help="List, show and check rules.")
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
