"""Help text conventions of the command line: no typer type column (``<bool>``, ``<list[str]>``) for
flags and arguments, option names as metavars, and the examples of ``analyze --help``."""

from __future__ import annotations

from typer.core import TyperArgument, TyperCommand, TyperGroup

FLAG = ""  # the metavar of an option without a value: nothing, not "<bool>"


def plain_metavars(params: list) -> list:
    """Help without typer's type column for flags and arguments (``<bool>``, ``<list[str]>``): a flag
    takes no value, and an argument's metavar (``PATH...``) says what it takes."""
    for param in params:
        if isinstance(param, TyperArgument) or getattr(param, "is_flag", False):
            param.display_type_rich = no_type  # type: ignore[method-assign]
        elif param.metavar is None:  # "<str>", "<list[Path]>": the option's own name says more
            param.metavar = (param.name or "value").upper()
    return params


class Command(TyperCommand):
    def get_params(self, ctx):
        return plain_metavars(super().get_params(ctx))


class Group(TyperGroup):
    def get_params(self, ctx):
        return plain_metavars(super().get_params(ctx))


def no_type(ctx=None) -> None:
    return None


ANALYZE_EXAMPLES = """Analyze the logs of a failed job and report the root cause.

Examples:

  nccllens analyze logs/                      # every file below logs/, archives too

  nccllens analyze job-1234.tar.gz -o report.html

  kubectl logs trainer-0 | nccllens analyze - --host trainer-0

  nccllens analyze logs/ -f json --select gpu_hardware --fail-on critical

Configuration: nccllens.toml, or [tool.nccllens] in pyproject.toml, is read from the working directory
only: never from its parents and never from a folder being analysed (logs do not configure their own
analysis). --config FILE names one explicitly. The report lists the configuration it used.
"""
