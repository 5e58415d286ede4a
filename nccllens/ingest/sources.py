"""Where bytes come from: files, folders, archives and standard input, read as streams.

Nothing is ever unpacked to disk. Each input becomes a :class:`Source` whose ``chunks()`` yields
bytes blocks; archive members are named ``archive.tar.gz!member/path``. Problems (unreadable
files, symlink loops, corrupt or oversized archives) become skipped sources with a reason, never
exceptions.
"""

from __future__ import annotations

import gzip
import io
import os
import sys
import tarfile
import zipfile
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

BLOCK = 16 << 20  # bytes read at a time
MAX_ARCHIVE_BYTES = 8 << 30  # total decompressed bytes taken from one archive
MAX_RATIO = 200  # decompressed/compressed beyond which (after 64 MiB) an archive is a bomb
MAX_FILES = 200_000

_ARCHIVE_SUFFIXES = (".tar.gz", ".tgz", ".tar", ".zip", ".gz")


class ArchiveLimit(Exception):
    """Raised inside a chunk stream when decompression exceeds the bounds."""


@dataclass
class Source:
    path: str  # display path (as given; archive!member)
    opener: Callable[[], Iterator[bytes]] | None = None
    size: int | None = None
    skipped: str | None = None
    notes: list[str] = field(default_factory=list)
    fs_path: str | None = None  # a plain or gzip file on disk (so a worker process can reopen it)

    def chunks(self) -> Iterator[bytes]:
        if self.opener is None:
            return iter(())
        return self.opener()


def _file_chunks(path: Path | str) -> Callable[[], Iterator[bytes]]:
    def gen() -> Iterator[bytes]:
        with open(path, "rb") as fh:
            while block := fh.read(BLOCK):
                yield block

    return gen


def _bounded(stream: io.BufferedIOBase, compressed: int | None, budget: list[int]) -> Iterator[bytes]:
    """Read a decompressing stream, enforcing total-size and ratio bounds."""
    taken = 0
    while True:
        try:
            block = stream.read(BLOCK)
        except (EOFError, OSError, zlib.error, tarfile.TarError) as exc:
            raise ArchiveLimit(f"truncated or corrupt compressed data ({exc})") from exc
        if not block:
            return
        taken += len(block)
        budget[0] -= len(block)
        if budget[0] < 0:
            raise ArchiveLimit(f"archive bomb guard: more than {MAX_ARCHIVE_BYTES >> 20} MiB decompressed")
        if compressed and taken > (64 << 20) and taken > MAX_RATIO * compressed:
            raise ArchiveLimit(f"archive bomb guard: compression ratio above {MAX_RATIO}:1")
        yield block


def _gzip_source(path: Path, display: str) -> Source:
    size = path.stat().st_size

    def gen() -> Iterator[bytes]:
        with gzip.open(path, "rb") as gz:
            yield from _bounded(gz, size, [MAX_ARCHIVE_BYTES])

    return Source(display, gen, size, fs_path=str(path))


def _zip_sources(path: Path, display: str) -> Iterator[Source]:
    try:
        zf = zipfile.ZipFile(path)
        infos = sorted((i for i in zf.infolist() if not i.is_dir()), key=lambda i: i.filename)
    except (zipfile.BadZipFile, OSError, ValueError) as exc:
        yield Source(display, skipped=f"corrupt zip archive ({exc})")
        return
    budget = [MAX_ARCHIVE_BYTES]
    for info in infos:
        name = f"{display}!{info.filename}"

        def gen(info=info) -> Iterator[bytes]:
            with zipfile.ZipFile(path) as z, z.open(info) as fh:
                yield from _bounded(fh, info.compress_size, budget)

        yield Source(name, gen, info.file_size)


def _tar_sources(path: Path, display: str) -> Iterator[Source]:
    try:
        tf = tarfile.open(path, mode="r:*")
        members = [m for m in tf.getmembers() if m.isfile()]
    except (tarfile.TarError, OSError, EOFError, zlib.error) as exc:
        yield Source(display, skipped=f"corrupt tar archive ({exc})")
        return
    members.sort(key=lambda m: m.name)
    budget = [MAX_ARCHIVE_BYTES]
    compressed = path.stat().st_size
    for member in members:
        # the name is only a label: nothing is written to disk, so ../ and absolute names are harmless
        name = f"{display}!{member.name}"

        def gen(member=member) -> Iterator[bytes]:
            with tarfile.open(path, mode="r:*") as t:
                fh = t.extractfile(member)
                if fh is not None:
                    yield from _bounded(fh, compressed, budget)

        yield Source(name, gen, member.size)


def is_archive(name: str) -> bool:
    return name.lower().endswith(_ARCHIVE_SUFFIXES)


def _file_sources(path: Path, display: str) -> Iterator[Source]:
    low = display.lower()
    if low.endswith((".tar.gz", ".tgz", ".tar")):
        yield from _tar_sources(path, display)
    elif low.endswith(".zip"):
        yield from _zip_sources(path, display)
    elif low.endswith(".gz"):
        yield _gzip_source(path, display)
    else:
        yield Source(display, _file_chunks(path), path.stat().st_size, fs_path=str(path))


def reopen(display: str, fs_path: str, size: int | None) -> Source:
    """The source a walk found, again, from what it said of it (in a worker process: no stat, no Path)."""
    if display.lower().endswith(".gz"):
        return _gzip_source(Path(fs_path), display)
    return Source(display, _file_chunks(fs_path), size, fs_path=fs_path)


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
                if entry.is_symlink():
                    yield Source(child_display, skipped="broken or looping symlink")
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
    if not os.access(path, os.R_OK):
        yield Source(display, skipped="unreadable (permission denied)")
        return
    try:
        yield from _file_sources(path, display)
    except OSError as exc:
        yield Source(display, skipped=f"unreadable ({exc.strerror or exc})")


def stdin_source(name: str = "<stdin>") -> Source:
    def gen() -> Iterator[bytes]:
        stream = sys.stdin.buffer
        while block := stream.read(BLOCK):
            yield block

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
        if path.is_dir():
            yield from _walk(path, raw, seen, count)
        elif path.exists():
            yield from _checked(path, raw)
        else:
            yield Source(raw, skipped="no such file or folder")


def missing_paths(paths: list[str]) -> list[str]:
    return [p for p in paths if p != "-" and not os.path.lexists(p)]
