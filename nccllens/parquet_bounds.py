"""How big a Parquet file is once decoded, from its footer alone (no page is read).

The footer is a Thrift (compact protocol) ``FileMetaData``: field 3 the row count, field 4 the row
groups, each with its uncompressed byte size (field 2). A few hundred KiB of well-compressed pages can
decode to gigabytes; :func:`check_shard` refuses a shard over MAX_ROWS rows or MAX_DECODED bytes, or
whose footer cannot be read within MAX_FOOTER bytes and MAX_DEPTH levels, before polars decodes it.
"""

from __future__ import annotations

import struct

from nccllens.data_bounds import OverBound

MAX_ROWS = 20_000_000
MAX_DECODED = 2 << 30
MAX_FOOTER = 16 << 20
MAX_DEPTH = 32
_STOP, _TRUE, _FALSE, _BYTE, _I16, _I32, _I64, _DOUBLE, _BINARY, _LIST, _SET, _MAP, _STRUCT = range(13)


class _Compact:
    def __init__(self, data: bytes) -> None:
        self.data, self.pos = data, 0

    def byte(self) -> int:
        if self.pos >= len(self.data):
            raise OverBound("event shard footer truncated")
        self.pos += 1
        return self.data[self.pos - 1]

    def varint(self) -> int:
        value = shift = 0
        while True:
            b = self.byte()
            value |= (b & 0x7F) << shift
            if not b & 0x80:
                return value
            shift += 7
            if shift > 70:
                raise OverBound("event shard footer holds a malformed number")

    def zigzag(self) -> int:
        v = self.varint()
        return (v >> 1) ^ -(v & 1)

    def field(self, last: int) -> tuple[int, int]:
        head = self.byte()
        kind, delta = head & 0x0F, head >> 4
        if kind == _STOP:
            return 0, _STOP
        return (last + delta if delta else self.zigzag()), kind

    def list_head(self) -> tuple[int, int]:
        head = self.byte()
        size = head >> 4
        return (self.varint() if size == 15 else size), head & 0x0F

    def skip(self, kind: int, depth: int) -> None:
        if depth > MAX_DEPTH:
            raise OverBound(f"event shard footer nested deeper than {MAX_DEPTH} levels")
        if kind in (_TRUE, _FALSE):
            return
        if kind == _BYTE:
            self.byte()
        elif kind in (_I16, _I32, _I64):
            self.varint()
        elif kind == _DOUBLE:
            self.pos += 8
        elif kind == _BINARY:
            size = self.varint()  # read before self.pos is: ``self.pos += self.varint()`` loses a byte
            self.pos += size
        elif kind in (_LIST, _SET):
            size, elem = self.list_head()
            self._items(size, [elem], depth)
        elif kind == _MAP:
            size = self.varint()
            if size:
                types = self.byte()
                self._items(size, [types >> 4, types & 0x0F], depth)
        elif kind == _STRUCT:
            self.struct(depth + 1, {})
        else:
            raise OverBound("event shard footer holds an unknown field type")
        if self.pos > len(self.data):
            raise OverBound("event shard footer truncated")

    def _items(self, size: int, kinds: list[int], depth: int) -> None:
        if size > len(self.data) - self.pos + 1:  # every element takes a byte at least (booleans too)
            raise OverBound("event shard footer announces more elements than it holds")
        for _ in range(size):
            for kind in kinds:
                if kind in (_TRUE, _FALSE):
                    self.byte()
                else:
                    self.skip(kind, depth + 1)

    def struct(self, depth: int, wanted: dict[int, object]) -> dict[int, object]:
        """Read a struct: fields in ``wanted`` (id → callable(kind)) kept, the rest skipped."""
        out: dict[int, object] = {}
        last = 0
        while True:
            fid, kind = self.field(last)
            if kind == _STOP:
                return out
            last = fid
            reader = wanted.get(fid)
            if reader is not None:
                out[fid] = reader(kind)
            else:
                self.skip(kind, depth)


def _row_groups(reader: _Compact, kind: int) -> list[int]:
    if kind != _LIST:
        raise OverBound("event shard footer: row groups are not a list")
    size, elem = reader.list_head()
    if elem != _STRUCT or size > len(reader.data):
        raise OverBound("event shard footer: malformed row groups")
    sizes = []
    for _ in range(size):
        group = reader.struct(2, {2: lambda k: reader.zigzag()})
        sizes.append(int(group.get(2, 0)))
    return sizes


def check_shard(data: bytes) -> None:
    """Refuse a Parquet file that would decode to more than the bounds (see the module docstring)."""
    if len(data) < 12 or data[-4:] != b"PAR1":
        raise OverBound("not a Parquet file")
    (length,) = struct.unpack("<I", data[-8:-4])
    if length > min(MAX_FOOTER, len(data) - 8):
        raise OverBound("event shard footer larger than the bound or the file")
    reader = _Compact(data[-8 - length:-8])
    meta = reader.struct(1, {3: lambda k: reader.zigzag(), 4: lambda k: _row_groups(reader, k)})
    rows = int(meta.get(3, 0))
    decoded = sum(meta.get(4, []))
    if rows > MAX_ROWS:
        raise OverBound(f"event shard of {rows} rows (more than {MAX_ROWS})")
    if decoded > MAX_DECODED:
        raise OverBound(f"event shard decoding to {decoded >> 20} MiB (more than {MAX_DECODED >> 20} MiB)")
