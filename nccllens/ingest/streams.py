"""Sources of bytes and the bounds every decompressing read obeys.

A :class:`Source` yields bytes blocks from ``chunks()``. Decompression (gzip, bzip2, xz; zstd where
the standard library has it, Python 3.14+, or the optional ``zstandard`` package is installed) is bounded in total bytes and ratio per archive; a stream that
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

ZSTD_MISSING = "zstd-compressed: reading it needs Python 3.14+ or the zstandard package; decompress it first"


ZSTD_PIECE = 2048  # compressed bytes given to the zstandard decompressor at once: at most ~64 MiB out


def _zstd_reader(raw: io.BufferedIOBase) -> Iterator[bytes] | None:
    """The decompressed blocks of every zstd frame in ``raw``, one frame after the other, or None where
    neither the standard library (Python 3.14+) nor the optional ``zstandard`` package can read zstd."""
    try:  # Python 3.14+
        from compression import zstd  # type: ignore[import-not-found]

        return _reads(zstd.ZstdFile(raw), zstd.ZstdError)
    except ImportError:
        pass
    try:  # optional: never a dependency of nccllens
        import zstandard  # type: ignore[import-not-found]
    except ImportError:
        return None
    return _unzstd(raw, zstandard)


def _unzstd(raw: io.BufferedIOBase, zstandard) -> Iterator[bytes]:
    """zstandard's frame decoder fed small pieces (its output per call is not bounded otherwise)."""
    def feed(d, pending: bytes) -> tuple[bytes, bytes]:
        return d.decompress(pending[:ZSTD_PIECE]), pending[ZSTD_PIECE:]

    return framed(raw, lambda: zstandard.ZstdDecompressor().decompressobj(), feed, zstandard.ZstdError,
                  "the zstd stream ends inside a frame")


class ArchiveLimit(Exception):
    """Raised inside a chunk stream when decompression exceeds the bounds or the data is corrupt."""


class MemberUnreadable(Exception):
    """Raised inside a chunk stream when an archive member cannot be read at all (skip it)."""


@dataclass
class Source:
    """One input to read: a file, an archive member or standard input, or why it is skipped."""

    path: str  # display path (as given; archive!member)
    opener: Callable[[], Iterator[bytes]] | None = None
    size: int | None = None
    skipped: str | None = None
    notes: list[str] = field(default_factory=list)
    fs_path: str | None = None  # a plain or gzip file on disk (so a worker process can reopen it)
    hint_from: int = 0  # where in ``path`` the part the user's argument names begins (``scoped``): host hints start there

    @property
    def scoped(self) -> str:
        """The path from the last part of the folder (or the file's own folder) the user named: the folders
        above it say where the logs were kept (a home, a CI workspace), not which machine wrote them."""
        return self.path[self.hint_from:]

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


def _reads(stream: io.BufferedIOBase, error: type[Exception] = OSError) -> Iterator[bytes]:
    while True:
        try:
            block = stream.read(BLOCK)
        except (EOFError, OSError, ValueError, zlib.error, lzma.LZMAError, error) as exc:
            raise ArchiveLimit(f"truncated or corrupt compressed data ({exc})") from exc
        if not block:
            return
        yield block


def gunzip(raw: io.BufferedIOBase, compressed: int | None) -> Iterator[bytes]:
    """Every member of a (multi-member) gzip stream, in BLOCK-sized pieces; members are counted."""
    def feed(d, pending: bytes) -> tuple[bytes, bytes]:
        return d.decompress(pending, BLOCK), d.unconsumed_tail

    return framed(raw, lambda: zlib.decompressobj(31), feed, zlib.error, "the gzip stream ends inside a member",
                  GZIP_MEMBERS_BASE + (compressed or 0) // 1024, "gzip members")


def framed(raw: io.BufferedIOBase, start: Callable, feed: Callable, errors: type[Exception], cut: str,
           limit: int | None = None, unit: str = "frames") -> Iterator[bytes]:
    """The decompressed blocks of a stream of concatenated frames (gzip members, zstd frames), one decoder
    per frame: ``feed(decoder, pending)`` returns (output, input left). Output comes in BLOCK-sized pieces;
    zero padding after a frame is skipped; more than ``limit`` frames, corrupt data or a stream that ends
    inside a frame (``cut`` says so) raise ArchiveLimit after what was read."""
    frames, out, size = 0, [], 0
    d, pending, started = start(), b"", False
    while True:
        if not pending:
            pending = raw.read(1 << 20)
            if not pending:
                break
        if not started and frames and not pending.strip(b"\x00"):
            pending = b""  # zero padding after the last frame
            continue
        started = True
        try:
            piece, rest = feed(d, pending)
        except errors as exc:
            yield from out
            raise ArchiveLimit(f"truncated or corrupt compressed data ({exc})") from exc
        if piece:
            out.append(piece)
            size += len(piece)
            if size >= BLOCK:
                yield b"".join(out)
                out, size = [], 0
        if d.eof:
            frames += 1
            if limit is not None and frames > limit:
                yield from out
                raise ArchiveLimit(f"archive bomb guard: more than {limit} {unit}")
            pending, d, started = d.unused_data + rest, start(), False
        else:
            pending = rest
    if out:
        yield b"".join(out)
    if started:
        raise ArchiveLimit(f"truncated or corrupt compressed data ({cut})")


def decompressed(kind: str, raw: io.BufferedIOBase, compressed: int | None) -> Iterator[bytes]:
    """The decompressed blocks of ``raw`` (``kind`` a value of COMPRESSED)."""
    if kind == "gzip":
        return gunzip(raw, compressed)
    if kind == "bzip2":
        return _reads(bz2.BZ2File(raw))
    if kind == "xz":
        return _reads(lzma.LZMAFile(raw))
    blocks = _zstd_reader(raw)
    if blocks is None:
        raise MemberUnreadable(ZSTD_MISSING)
    return blocks


def compression_of(name: str) -> str | None:
    """gzip / bzip2 / xz / zstd from a name's last suffix (``.tar.gz`` is an archive, not a file)."""
    low = name.lower()
    for suffix, kind in COMPRESSED.items():
        if low.endswith(suffix):
            return kind
    return None
