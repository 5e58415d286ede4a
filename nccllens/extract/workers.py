"""Worker processes for extraction, started as early as possible.

A spawned worker starts a fresh interpreter, re-imports the command's module and then polars and the
parsers: about a second on a 2-core machine, during which no file is read. On Linux the command forks
its workers instead, first thing, before polars is loaded (forking a process that runs polars'
threads is unsafe; forking one that has none is not): they import polars and the parsers while the
main process reads the rules and builds the prefilter plan.

This module must not import polars: ``nccllens analyze`` calls ``start_early`` before anything does.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterable, Iterator

PARALLEL_MIN_BYTES = 64 << 20  # below this (and PARALLEL_MIN_FILES), starting workers costs more than it saves
PARALLEL_MIN_FILES = 2000

_early = None  # the pool ``start_early`` started, until ``extract`` takes it


def count() -> int:
    """Worker processes to use: one per usable core, at most 8."""
    try:
        return max(1, min(len(os.sched_getaffinity(0)), 8))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, min(os.cpu_count() or 1, 8))


def worker_init(parent: int | None = None) -> None:
    """The worker dies with ``parent``, even SIGKILLed (``interrupts.die_with_parent``). Each worker reads hundreds of MB in short-lived buffers (file contents, pieces). glibc returns
    every freed large buffer to the system and takes it back page by page at the next read (page
    faults cost about a quarter of a worker's time); keep freed memory in the heap instead. The
    worker's peak memory is unchanged: the same buffers are reused, not added."""
    import ctypes

    from nccllens.interrupts import die_with_parent

    die_with_parent(parent)
    try:
        libc = ctypes.CDLL(None)
        mallopt = libc.mallopt
    except (OSError, AttributeError):  # not glibc (macOS, musl): nothing to tune
        return
    mallopt(-3, 32 << 20)  # M_MMAP_THRESHOLD: buffers up to 32 MiB come from the heap
    mallopt(-1, 1 << 30)  # M_TRIM_THRESHOLD: do not give freed heap back to the system


def _warm_up() -> None:
    """Submitted as soon as the pool starts: the workers import the extraction modules while the main
    process is still building the plan (the parsers compile their regexes as they load)."""
    import nccllens.extract.jobs  # noqa: F401 - imported for its cost, now rather than at the first job
    from nccllens.parse import load_families

    load_families()


def enough(total: int, files: int) -> bool:
    """Are ``files`` files of ``total`` bytes worth workers: 64 MiB in two files or more (a file is one
    job), or 2,000 files?"""
    return (total >= PARALLEL_MIN_BYTES and files > 1) or files >= PARALLEL_MIN_FILES


def _sizes(paths: Iterable[str]) -> Iterator[int]:
    """The size of every file under ``paths`` (symlinked folders not followed, unreadable ones skipped)."""
    stack = [p for p in paths if p != "-"]
    while stack:
        path = stack.pop()
        try:
            if not os.path.isdir(path):
                yield os.stat(path).st_size
                continue
            with os.scandir(path) as it:
                entries = list(it)
        except OSError:
            continue
        for entry in entries:
            try:
                if entry.is_dir(follow_symlinks=False):
                    stack.append(entry.path)
                elif entry.is_file():
                    yield entry.stat().st_size
            except OSError:
                continue


def big_enough(paths: Iterable[str]) -> bool:
    """Do ``paths`` hold enough to be worth workers (``enough``)? Stops looking as soon as they do."""
    total = files = 0
    for size in _sizes(paths):
        total += size
        files += 1
        if enough(total, files):
            return True
    return False


def _pool(workers: int, method: str):
    import multiprocessing as mp
    from concurrent.futures import ProcessPoolExecutor

    from nccllens import allocator

    with allocator.for_workers():
        pool = ProcessPoolExecutor(workers, mp_context=mp.get_context(method), initializer=worker_init,
                                   initargs=(os.getpid(),))
        for _ in range(workers):  # the first submission starts every worker (a forked pool starts them all)
            pool.submit(_warm_up)
    return pool


def start_early(paths: Iterable[str]) -> None:
    """Fork the workers now if ``paths`` look big enough to need them (Linux, polars not loaded yet)."""
    global _early
    if _early is not None or not sys.platform.startswith("linux") or "polars" in sys.modules:
        return
    workers = count()
    if workers > 1 and big_enough(paths):
        _early = _pool(workers, "fork")


def take_early():
    """The pool ``start_early`` started (None if it started none); the caller shuts it down."""
    global _early
    pool, _early = _early, None
    return pool


def stop_early() -> None:
    """Shut down a pool nobody took (the command failed, or the input needed no workers after all),
    without waiting for the workers' warm-up."""
    pool = take_early()
    if pool is not None:
        pool.shutdown(wait=False, cancel_futures=True)


def pool(workers: int):
    """A pool of ``workers`` processes already importing the extraction modules: the early one when
    there is one, else freshly spawned ones (the caller shuts it down)."""
    return take_early() or _pool(workers, "spawn")


@contextlib.contextmanager
def early(paths: Iterable[str]):
    """``with early(paths):`` forks the workers now (see ``start_early``) and shuts them down at the end
    if nothing took them."""
    start_early(list(paths))
    try:
        yield
    finally:
        stop_early()
