"""The command line that is running, as the HTML footer states it."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path


def command_line() -> str | None:
    """``nccllens ARGS…`` for the running program; None when nccllens is not the program (a test runner
    calling the application)."""
    if not sys.argv or Path(sys.argv[0]).name not in ("nccllens", "cli.py"):
        return None
    return "nccllens " + " ".join(shlex.quote(a) for a in sys.argv[1:])
