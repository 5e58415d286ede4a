"""Zip and tar archives, and archives or compressed files nested in them, read as bounded streams.

Members are named ``archive.zip!member`` (nested: ``a.zip!inner.tar.gz!x.log``); nothing is written
to disk, so member names are only labels. A zip is read through one open handle (its members in name
order); a tar (plain, gzip, bzip2 or xz, told by its first bytes) in one streaming pass to list it
and, for members beyond the small ones it keeps from the first, one to read them; its members in the archive's own order, whatever their number. Bounds: bytes and
ratio (``streams``), MAX_MEMBERS members, MAX_DEPTH levels of nesting, NESTED_MAX bytes of nested
archives held in memory per archive; whatever is over a bound is a skipped source with the reason.
"""

from __future__ import annotations

import io
import zipfile
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, BinaryIO

from nccllens.ingest import streams
from nccllens.ingest.streams import ArchiveLimit, Budget, MemberUnreadable, Source

if TYPE_CHECKING:
    import tarfile

MAX_DEPTH = 3
NESTED_MAX = 256 << 20
HELD_MEMBER, HELD_MAX = 1 << 20, 64 << 20  # small tar members kept from the listing pass, up to this in all
_ZIP = (".zip",)
_TAR = (".tar", ".tar.gz", ".tgz", ".tar.bz2", ".tbz2", ".tar.xz", ".txz")
_MAGIC = ((b"\x1f\x8b", "gzip"), (b"BZh", "bzip2"), (b"\xfd7zXZ\x00", "xz"), (b"\x28\xb5\x2f\xfd", "zstd"))

Opener = Callable[[], BinaryIO]


def archive_kind(name: str) -> str | None:
    low = name.lower()
    if low.endswith(_ZIP):
        return "zip"
    if low.endswith(_TAR):
        return "tar"
    return None


class _BlockReader(io.RawIOBase):
    """A readable file over an iterator of blocks (tarfile reads the bounded stream through it)."""

    def __init__(self, blocks: Iterator[bytes]) -> None:
        self._blocks, self._buf, self._off = blocks, b"", 0

    def readable(self) -> bool:
        return True

    def readinto(self, out) -> int:
        while self._off >= len(self._buf):
            nxt = next(self._blocks, None)
            if nxt is None:
                return 0
            self._buf, self._off = nxt, 0
        n = min(len(out), len(self._buf) - self._off)
        out[:n] = self._buf[self._off:self._off + n]
        self._off += n
        return n


def _raw_blocks(fh: BinaryIO, size: int = 1 << 20) -> Iterator[bytes]:
    while block := fh.read(size):
        yield block


def _tar_stream(open_raw: Opener, size: int | None) -> tarfile.TarFile:
    import tarfile  # here: a run without a tar archive does not load it

    raw = open_raw()
    head = raw.read(8)
    raw.seek(0)
    kind = next((k for magic, k in _MAGIC if head.startswith(magic)), None)
    blocks = streams.decompressed(kind, raw, size) if kind else _raw_blocks(raw)
    reader = io.BufferedReader(_BlockReader(streams.bounded(blocks, size, Budget())), 1 << 20)
    return tarfile.open(fileobj=reader, mode="r|")


def _member_source(name: str, open_member: Opener, size: int | None, compressed: int | None,
                   budget: Budget, what: str) -> Source:
    kind = streams.compression_of(name)

    def gen() -> Iterator[bytes]:
        try:
            with open_member() as fh:
                blocks = streams.decompressed(kind, fh, size) if kind else _raw_blocks(fh, streams.BLOCK)
                yield from streams.bounded(blocks, compressed, budget)
        except (ArchiveLimit, MemberUnreadable):
            raise
        except Exception as exc:  # noqa: BLE001 - any error reading one member skips that member only
            raise MemberUnreadable(f"unreadable {what} ({type(exc).__name__}: {exc})") from None

    return Source(name, gen, size)


def _nested(name: str, fh: BinaryIO, budget: Budget, depth: int) -> Iterator[Source]:
    if depth >= MAX_DEPTH:
        yield Source(name, skipped=f"nested archive deeper than {MAX_DEPTH} levels: not read")
        return
    data = fh.read(NESTED_MAX + 1)
    if len(data) > NESTED_MAX or len(data) > budget.bytes:
        yield Source(name, skipped=f"nested archive larger than {NESTED_MAX >> 20} MiB: not read")
        return
    budget.take(len(data))
    yield from archive_sources(lambda: io.BytesIO(data), name, len(data), budget, depth + 1)


def _counted(name: str, budget: Budget) -> Source | None:
    """A skipped source once the member bound is reached, else None (and one member counted)."""
    budget.members -= 1
    if budget.members < 0:
        return Source(name, skipped=f"member limit reached ({streams.MAX_MEMBERS} members): not read")
    return None


def _zip_sources(open_raw: Opener, display: str, budget: Budget, depth: int) -> Iterator[Source]:
    try:
        zf = zipfile.ZipFile(open_raw())
        infos = sorted((i for i in zf.infolist() if not i.is_dir()), key=lambda i: i.filename)
    except Exception as exc:  # noqa: BLE001 - BadZipFile, OSError, ValueError, and anything a forged header raises
        yield Source(display, skipped=f"corrupt zip archive ({exc})")
        return
    for info in infos:
        name = f"{display}!{info.filename}"
        if (over := _counted(name, budget)) is not None:
            yield over
            return
        if archive_kind(info.filename):
            try:
                with zf.open(info) as fh:
                    yield from _nested(name, fh, budget, depth)
            except (ArchiveLimit, MemberUnreadable) as exc:
                yield Source(name, skipped=str(exc))
            except Exception as exc:  # noqa: BLE001
                yield Source(name, skipped=f"unreadable zip member ({type(exc).__name__}: {exc})")
            continue
        yield _member_source(name, lambda info=info: zf.open(info), info.file_size, info.compress_size, budget,
                             "zip member")


class _TarCursor:
    """Reads the k-th file member of a tar from one stream when asked in order (reopened otherwise)."""

    def __init__(self, open_raw: Opener, size: int | None) -> None:
        self._open, self._size, self._tar, self._it, self._pos = open_raw, size, None, iter(()), -1

    def member(self, k: int) -> BinaryIO:
        if self._tar is None or self._pos >= k:
            self._tar, self._pos = _tar_stream(self._open, self._size), -1
            self._it = iter(self._tar)
        for m in self._it:
            if m.isfile():
                self._pos += 1
                if self._pos == k:
                    return self._tar.extractfile(m)
        raise MemberUnreadable("tar member not found when read again")


def _tar_sources(open_raw: Opener, display: str, size: int | None, budget: Budget,
                 depth: int) -> Iterator[Source]:
    cursor = _TarCursor(open_raw, size)
    k, held = -1, 0
    try:
        tar = _tar_stream(open_raw, size)
        for m in tar:
            if not m.isfile():
                continue
            k += 1
            name = f"{display}!{m.name}"
            if (over := _counted(name, budget)) is not None:
                yield over
                return
            if archive_kind(m.name):
                yield from _nested(name, tar.extractfile(m), budget, depth)
                continue
            if m.size <= HELD_MEMBER and held + m.size <= HELD_MAX:  # small: kept from this one pass
                data = tar.extractfile(m).read()
                held += len(data)
                yield _member_source(name, lambda data=data: io.BytesIO(data), m.size, size, budget, "tar member")
            else:
                yield _member_source(name, lambda k=k: cursor.member(k), m.size, size, budget, "tar member")
            tar.members.clear()  # the listing keeps no member it has passed
    except ArchiveLimit as exc:
        yield Source(display, skipped=f"{'corrupt tar archive' if k < 0 else 'rest of the archive not read'} ({exc})")
    except Exception as exc:  # noqa: BLE001 - tarfile.TarError, EOFError, OSError, zlib.error ...
        yield Source(display, skipped=f"corrupt tar archive ({exc})")


def archive_sources(open_raw: Opener, display: str, size: int | None, budget: Budget | None = None,
                    depth: int = 0) -> Iterator[Source]:
    """The members of the zip or tar archive ``display`` (``open_raw`` gives its bytes, from the start)."""
    budget = budget or Budget()
    if archive_kind(display) == "zip":
        yield from _zip_sources(open_raw, display, budget, depth)
    else:
        yield from _tar_sources(open_raw, display, size, budget, depth)
