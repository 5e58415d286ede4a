"""What every command does with its input and output: messages on stderr, a closed or full stdout, paths
that are missing or given twice, the progress bar, and writing a report piece by piece."""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterable
from pathlib import Path


def err(msg: str) -> None:
    with contextlib.suppress(OSError, ValueError, AttributeError):  # stderr closed or full: say nothing
        print(f"nccllens: {msg}", file=sys.stderr)


def streams() -> None:
    """A closed standard output or error (``>&-``) reads as an empty sink, never as a traceback; SIGTERM and
    SIGHUP end the run and its workers (``interrupts``)."""
    from nccllens import interrupts

    interrupts.install()
    if sys.stdout is None:
        sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - for the life of the process
    if sys.stderr is None:
        sys.stderr = open(os.devnull, "w")  # noqa: SIM115


def to_stdout(pieces: Iterable[str]) -> bool:
    """Write to standard output; False (said on stderr) when it fails (``/dev/full``, a closed pipe)."""
    try:
        for piece in pieces:
            sys.stdout.write(piece)
        sys.stdout.flush()
        return True
    except (OSError, ValueError) as exc:
        err(f"cannot write to standard output: {getattr(exc, 'strerror', None) or exc}")
        with contextlib.suppress(OSError, ValueError):  # what is still buffered goes nowhere at exit
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return False


def unique_paths(paths: list[str]) -> list[str]:
    """``paths`` with a path given twice (``logs`` and ``logs/``, ``./a.log`` and ``a.log``) kept once, as
    first written."""
    seen: dict[str, str] = {}
    for p in paths:
        seen.setdefault(p if p == "-" else os.path.normpath(p), p)
    return list(seen.values())


def check_paths(paths: list[str]) -> bool:
    from nccllens.ingest.sources import missing_paths

    missing = missing_paths(paths)
    for p in missing:
        err(f"{p}: no such file or folder")
    if sum(p == "-" for p in paths) > 1:
        err("standard input (-) can be given only once")
        return False
    return not missing


PROGRESS_MIN_BYTES = 64 << 20  # smaller inputs finish before a bar would help


@contextlib.contextmanager
def progress_bar():
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


def write(pieces: Iterable[str], output: Path | None) -> bool:
    """Write the report's text as it is rendered, piece by piece (to standard output or ``output``)."""
    if output is None:
        return to_stdout(pieces)
    from nccllens.interrupts import atomic_output

    try:  # under a temporary name until complete: an interrupted run leaves no report looking whole
        with atomic_output(output) as tmp, tmp.open("w", encoding="utf-8") as out:
            for piece in pieces:
                out.write(piece)
    except OSError as exc:
        err(f"cannot write {output}: {exc.strerror or exc}")
        return False
    return True
