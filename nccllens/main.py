"""The installed ``nccllens`` script: ``nccllens analyze`` without loading the CLI framework.

Typer, click, rich and pydantic cost ~0.15 s before the first byte is read, on every run. The common
command line, ``nccllens analyze PATHS [options]``, is parsed here with the same options and meanings as
``nccllens.cli.analyze`` and handed to ``commands.analyze``; anything else (another command, ``--help``,
an option spelled in a way this parser does not take, a bad value) goes to the typer application, which
gives the usual help and error messages.
"""

from __future__ import annotations

import sys

from nccllens.shutdown import exit_now

_CHOICES = {"--format": ("text", "json", "html", "md"), "--lang": ("en", "zh"),
            "--fail-on": ("critical", "error", "warning", "info")}
_VALUE = {"--format": "fmt", "-f": "fmt", "--output": "output", "-o": "output", "--lang": "lang", "--host": "host",
          "--rank": "rank", "--fail-on": "fail_on"}
_REPEATED = {"--rules": "rules", "--select": "select", "--ignore": "ignore"}
_FLAGS = {"--exit-zero": "exit_zero", "--quiet": "quiet", "-q": "quiet", "--verbose": "verbose", "-v": "verbose"}


def parse_analyze(args: list[str]) -> dict | None:
    """The keyword arguments of ``commands.analyze`` for ``args`` (after ``analyze``), or None when the typer
    application should handle them (help, errors, spellings this parser does not take)."""
    out: dict = {"paths": [], "fmt": None, "output": None, "lang": None, "rules": [], "select": [], "ignore": [],
                 "host": None, "rank": None, "fail_on": None, "exit_zero": False, "quiet": False, "verbose": False}
    i = 0
    while i < len(args):
        arg = args[i]
        i += 1
        if arg == "-" or not arg.startswith("-"):
            out["paths"].append(arg)
            continue
        if arg in _FLAGS:
            out[_FLAGS[arg]] = True
            continue
        name, eq, value = arg.partition("=")
        if name not in _VALUE and name not in _REPEATED or (eq and not name.startswith("--")):
            return None  # --help, --, -fjson, an unknown option: typer says what it says
        if not eq:
            if i >= len(args):
                return None
            value = args[i]
            i += 1
        long_name = "--format" if name == "-f" else name
        if value not in _CHOICES.get(long_name, (value,)):
            return None
        if name in _REPEATED:
            out[_REPEATED[name]].append(value)
        elif name == "--rank":
            try:
                out["rank"] = int(value)
            except ValueError:
                return None
        else:
            out[_VALUE[name]] = value
    return out if out["paths"] else None


def main() -> None:  # pragma: no cover - the console script; tests run parse_analyze and the typer app
    args = sys.argv[1:]
    options = parse_analyze(args[1:]) if args[:1] == ["analyze"] else None
    if options is None:
        from nccllens.cli import main as typer_main

        typer_main()
        return
    from nccllens import allocator

    allocator.for_main_process()  # before anything imports polars
    from pathlib import Path

    from nccllens import commands
    from nccllens.invocation import command_line

    if options["output"] is not None:
        options["output"] = Path(options["output"])
    code = commands.analyze(options.pop("paths"), **options, command=command_line())
    exit_now(code)
    sys.exit(code)


if __name__ == "__main__":  # pragma: no cover
    main()
