"""Where bytes come from: files, folders, archives and standard input, read as streams.

Nothing is ever unpacked to disk. Each input becomes a :class:`Source` whose ``chunks()`` yields
bytes blocks; archive members are named ``archive.tar.gz!member/path``. Problems (unreadable
files, symlink loops, corrupt or oversized archives) become skipped sources with a reason, never
exceptions.
"""

from __future__ import annotations

import os
import stat
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

from nccllens.ingest import streams
from nccllens.ingest.archives import archive_kind, archive_sources
from nccllens.ingest.streams import ArchiveLimit, MemberUnreadable, Source  # noqa: F401 - re-exported

MAX_FILES = 200_000
_KINDS = ((stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"), (stat.S_ISFIFO, "a FIFO"),
          (stat.S_ISSOCK, "a socket"), (stat.S_ISDIR, "a folder"))


def not_regular(mode: int) -> str | None:
    """Why a file of this mode is not read (devices, FIFOs, sockets), or None for a regular file."""
    if stat.S_ISREG(mode):
        return None
    what = next((name for test, name in _KINDS if test(mode)), "not a regular file")
    return f"not a regular file ({what}): not read"


def _open_regular(path: Path | str):
    """Open for reading without blocking on a FIFO, and refuse anything but a regular file."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    why = not_regular(os.fstat(fd).st_mode)
    if why:
        os.close(fd)
        raise MemberUnreadable(why)
    return os.fdopen(fd, "rb")


def _file_chunks(path: Path | str) -> Callable[[], Iterator[bytes]]:
    def gen() -> Iterator[bytes]:
        with _open_regular(path) as fh:
            while block := fh.read(streams.BLOCK):
                yield block

    return gen


def _compressed_source(path: Path, display: str, kind: str) -> Source:
    size = path.stat().st_size

    def gen() -> Iterator[bytes]:
        with _open_regular(path) as raw:
            yield from streams.bounded(streams.decompressed(kind, raw, size), size, streams.Budget())

    # a worker process can reopen plain and gzip files; other compressions are read in the main process
    return Source(display, gen, size, fs_path=str(path) if kind == "gzip" else None)


def is_archive(name: str) -> bool:
    return archive_kind(name) is not None or streams.compression_of(name) is not None


def _file_sources(path: Path, display: str) -> Iterator[Source]:
    if archive_kind(display):
        yield from archive_sources(lambda: _open_regular(path), display, path.stat().st_size)
    elif kind := streams.compression_of(display):
        yield _compressed_source(path, display, kind)
    else:
        yield Source(display, _file_chunks(path), path.stat().st_size, fs_path=str(path))


def reopen(display: str, fs_path: str, size: int | None, hint_from: int = 0) -> Source:
    """The source a walk found, again, from what it said of it (in a worker process: no stat, no Path)."""
    if streams.compression_of(display) == "gzip":
        source = _compressed_source(Path(fs_path), display, "gzip")
    else:
        source = Source(display, _file_chunks(fs_path), size, fs_path=fs_path)
    source.hint_from = hint_from
    return source


def _walk(root: Path, display: str, seen: set[str], count: list[int]) -> Iterator[Source]:
    try:
        real = os.path.realpath(root)
    except OSError as exc:
        yield Source(display, skipped=f"unreadable ({exc.strerror or exc})")
        return
    if root.is_symlink() and real in seen:
        yield Source(display, skipped="symlink loop (folder already visited)")
        return
    seen.add(real)
    try:
        entries = sorted(os.scandir(root), key=lambda e: e.name)
    except OSError as exc:
        yield Source(display, skipped=f"unreadable folder ({exc.strerror or exc})")
        return
    for entry in entries:
        child = Path(entry.path)
        child_display = f"{display.rstrip('/')}/{entry.name}"
        try:
            if entry.is_dir():
                yield from _walk(child, child_display, seen, count)
                continue
            if not entry.is_file():
                if entry.is_symlink() and not os.path.exists(entry.path):
                    yield Source(child_display, skipped="broken or looping symlink")
                else:
                    yield Source(child_display, skipped=not_regular(os.stat(entry.path).st_mode))
                continue
        except OSError as exc:
            yield Source(child_display, skipped=f"unreadable ({exc.strerror or exc})")
            continue
        count[0] += 1
        if count[0] > MAX_FILES:
            yield Source(child_display, skipped=f"file limit reached ({MAX_FILES} files)")
            return
        yield from _checked(child, child_display)


def _checked(path: Path, display: str) -> Iterator[Source]:
    try:
        why = not_regular(os.stat(path).st_mode)
    except OSError as exc:
        why = f"unreadable ({exc.strerror or exc})"
    if why:
        yield Source(display, skipped=why)
        return
    if not os.access(path, os.R_OK):
        yield Source(display, skipped="unreadable (permission denied)")
        return
    try:
        yield from _file_sources(path, display)
    except (OSError, MemberUnreadable) as exc:
        yield Source(display, skipped=f"unreadable ({getattr(exc, 'strerror', None) or exc})")


def stdin_source(name: str = "<stdin>") -> Source:
    def gen() -> Iterator[bytes]:
        stream = sys.stdin.buffer if sys.stdin is not None else None
        if stream is None:  # closed (``<&-``): nothing to read
            return
        try:
            while block := stream.read(streams.BLOCK):
                yield block
        except (OSError, ValueError) as exc:
            raise MemberUnreadable(f"standard input unreadable ({exc})") from None

    return Source(name, gen)


def iter_sources(paths: list[str]) -> Iterator[Source]:
    """Expand the paths given on the command line into sources, in a stable order."""
    seen: set[str] = set()
    count = [0]
    for raw in paths:
        if raw == "-":
            yield stdin_source()
            continue
        path = Path(raw)
        is_dir = path.is_dir()
        if is_dir:
            found = _walk(path, raw, seen, count)
        elif path.exists():
            found = _checked(path, raw)
        else:
            yield Source(raw, skipped="no such file or folder")
            continue
        start = scope_start(raw, is_dir)
        for source in found:
            source.hint_from = start
            yield source


def scope_start(raw: str, is_dir: bool) -> int:
    """Where the part of ``raw`` that may name a machine begins: its last part for a folder (``node-b/``), the
    file's folder for a file (``node07/train.log``)."""
    norm = raw.replace("\\", "/").rstrip("/")
    folder = norm if is_dir else norm[:max(norm.rfind("/"), 0)]
    return folder.rfind("/") + 1


def missing_paths(paths: list[str]) -> list[str]:
    return [p for p in paths if p != "-" and not os.path.lexists(p)]
