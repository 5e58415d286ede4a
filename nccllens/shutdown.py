"""Ending the process without the interpreter's teardown, once the output is out."""

from __future__ import annotations

import os
import sys


def exit_now(code: object) -> None:
    """End the process at once with ``code`` once its output is out: the interpreter's own teardown
    (freeing every module, polars and the event table) took 0.09-0.17 s of a 2.5 s run. Returns, leaving the
    normal exit to it, when there is something that teardown must do: a message as exit status,
    output that cannot be flushed (a closed pipe), or child processes still running."""
    code = 0 if code is None else code
    if not isinstance(code, int):
        return
    children = sys.modules.get("multiprocessing.process")
    if children is not None and children.active_children():
        return
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):
        return
    os._exit(code)
