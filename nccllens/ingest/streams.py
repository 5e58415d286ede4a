"""Sources of bytes and the bounds every decompressing read obeys.

A :class:`Source` yields bytes blocks from ``chunks()``. Decompression (gzip, bzip2, xz; zstd only
where the standard library has it) is bounded in total bytes and ratio per archive; a stream that
breaks these bounds, or is corrupt, raises :class:`ArchiveLimit` (what was read so far is kept, with a
note); a member that cannot be read at all raises :class:`MemberUnreadable` (it is skipped with the
reason). Limits are module attributes, read at each use (tests lower them).
"""

from __future__ import annotations

import bz2
import io
import lzma
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

BLOCK = 16 << 20  # bytes read at a time
MAX_ARCHIVE_BYTES = 8 << 30  # total decompressed bytes taken from one archive (nested ones included)
MAX_RATIO = 200  # decompressed/compressed beyond which (after 64 MiB) an archive is a bomb
MAX_MEMBERS = 20_000  # members read from one archive (nested ones included); the rest are skipped
GZIP_MEMBERS_BASE = 10_000  # a gzip may hold this many members, plus one per KiB of compressed data
COMPRESSED = {".gz": "gzip", ".bz2": "bzip2", ".xz": "xz", ".lzma": "xz", ".zst": "zstd"}

try:  # Python 3.14+
    from compression import zstd as _zstd  # type: ignore[import-not-found]
except ImportError:
    _zstd = None


class ArchiveLimit(Exception):
    """Raised inside a chunk stream when decompression exceeds the bounds or the data is corrupt."""


class MemberUnreadable(Exception):
    """Raised inside a chunk stream when an archive member cannot be read at all (skip it)."""


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


class Budget:
    """What one archive (and the archives nested in it) may still give: bytes and members."""

    def __init__(self) -> None:
        self.bytes = MAX_ARCHIVE_BYTES
        self.members = MAX_MEMBERS

    def take(self, n: int) -> None:
        self.bytes -= n
        if self.bytes < 0:
            raise ArchiveLimit(f"archive bomb guard: more than {MAX_ARCHIVE_BYTES >> 20} MiB decompressed")


def bounded(blocks: Iterator[bytes], compressed: int | None, budget: Budget) -> Iterator[bytes]:
    """Pass decompressed blocks on, enforcing the total-size and ratio bounds."""
    taken = 0
    for block in blocks:
        taken += len(block)
        budget.take(len(block))
        if compressed and taken > (64 << 20) and taken > MAX_RATIO * compressed:
            raise ArchiveLimit(f"archive bomb guard: compression ratio above {MAX_RATIO}:1")
        yield block


def _reads(stream: io.BufferedIOBase) -> Iterator[bytes]:
    while True:
        try:
            block = stream.read(BLOCK)
        except (EOFError, OSError, ValueError, zlib.error, lzma.LZMAError) as exc:
            raise ArchiveLimit(f"truncated or corrupt compressed data ({exc})") from exc
        if not block:
            return
        yield block


def gunzip(raw: io.BufferedIOBase, compressed: int | None) -> Iterator[bytes]:
    """Every member of a (multi-member) gzip stream, in BLOCK-sized pieces; members are counted."""
    limit = GZIP_MEMBERS_BASE + (compressed or 0) // 1024
    members, out, size = 0, [], 0
    d, pending, started = zlib.decompressobj(31), b"", False
    while True:
        if not pending:
            pending = raw.read(1 << 20)
            if not pending:
                break
        if not started and not pending.strip(b"\x00") and members:
            pending = b""  # zero padding after the last member
            continue
        started = True
        try:
            piece = d.decompress(pending, BLOCK)
        except zlib.error as exc:
            yield from out
            raise ArchiveLimit(f"truncated or corrupt compressed data ({exc})") from exc
        if piece:
            out.append(piece)
            size += len(piece)
            if size >= BLOCK:
                yield b"".join(out)
                out, size = [], 0
        if d.eof:
            members += 1
            if members > limit:
                yield from out
                raise ArchiveLimit(f"archive bomb guard: more than {limit} gzip members")
            pending, d, started = d.unused_data, zlib.decompressobj(31), False
        else:
            pending = d.unconsumed_tail
    if out:
        yield b"".join(out)
    if started:
        raise ArchiveLimit("truncated or corrupt compressed data (the gzip stream ends inside a member)")


def decompressed(kind: str, raw: io.BufferedIOBase, compressed: int | None) -> Iterator[bytes]:
    """The decompressed blocks of ``raw`` (``kind`` a value of COMPRESSED)."""
    if kind == "gzip":
        return gunzip(raw, compressed)
    if kind == "bzip2":
        return _reads(bz2.BZ2File(raw))
    if kind == "xz":
        return _reads(lzma.LZMAFile(raw))
    if _zstd is None:
        raise MemberUnreadable("zstd-compressed: this Python has no zstd module (3.14+); decompress it first")
    return _reads(_zstd.ZstdFile(raw))


def compression_of(name: str) -> str | None:
    """gzip / bzip2 / xz / zstd from a name's last suffix (``.tar.gz`` is an archive, not a file)."""
    low = name.lower()
    for suffix, kind in COMPRESSED.items():
        if low.endswith(suffix):
            return kind
    return None
