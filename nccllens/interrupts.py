"""Clean interruption: SIGTERM and SIGHUP end the run and its workers at once (exit 143 / 129), workers
die with their parent even when it is SIGKILLed, and no partial output file is left looking complete.

``install()`` (the commands call it first) sets the handlers: they kill every worker process this
process started, remove the temporary files of outputs still being written, and exit. Workers call
``die_with_parent()``: on Linux the kernel sends them SIGKILL when the parent dies (PR_SET_PDEATHSIG),
and a worker whose parent is already gone exits. ``atomic_output(path)`` gives a temporary name next to
``path``, renamed to it only once complete.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

_PENDING: set[str] = set()  # temporary files of outputs being written
PR_SET_PDEATHSIG = 1


def _handler(signum, frame) -> None:  # noqa: ARG001 - the signal module's signature
    children = sys.modules.get("multiprocessing")
    if children is not None:
        for child in children.active_children():
            with contextlib.suppress(OSError, ValueError, AttributeError):
                child.kill()
    for tmp in list(_PENDING):
        with contextlib.suppress(OSError):
            os.unlink(tmp)
    os._exit(128 + signum)


def install() -> None:
    """SIGTERM and SIGHUP end the run (SIGINT stays Python's KeyboardInterrupt)."""
    for name in ("SIGTERM", "SIGHUP"):
        sig = getattr(signal, name, None)
        if sig is not None:
            with contextlib.suppress(ValueError, OSError):  # not the main thread: leave it
                signal.signal(sig, _handler)


def die_with_parent(parent: int | None) -> None:
    """In a worker: be killed when ``parent`` dies (Linux), and exit now if it already has."""
    if sys.platform.startswith("linux"):
        import ctypes

        with contextlib.suppress(OSError, AttributeError):
            ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)
    for name in ("SIGTERM", "SIGHUP"):  # a worker ends on these, without the parent's handler
        with contextlib.suppress(ValueError, OSError, AttributeError):
            signal.signal(getattr(signal, name), signal.SIG_DFL)
    if parent is not None and os.getppid() != parent:
        os._exit(1)


@contextlib.contextmanager
def atomic_output(path: Path | str) -> Iterator[Path]:
    """A temporary path beside ``path``; renamed to ``path`` when the block ends without an error."""
    path = Path(path)
    fd, tmp = tempfile.mkstemp(dir=path.parent if str(path.parent) else ".", prefix=f".{path.name}.",
                               suffix=".part")
    os.close(fd)
    _PENDING.add(tmp)
    try:
        yield Path(tmp)
        mask = os.umask(0)
        os.umask(mask)
        os.chmod(tmp, 0o666 & ~mask)  # as an ordinary new file would be (mkstemp makes it 0600)
        os.replace(tmp, path)
    finally:
        _PENDING.discard(tmp)
        with contextlib.suppress(OSError):
            os.unlink(tmp)
