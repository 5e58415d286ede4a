"""Bounds on structured data from logs (flight-recorder pickles and JSON), checked before and after
anything is built.

Before: a pickle's opcodes are scanned (no object is made): a length or memo index larger than the
file could hold, more opcodes than MAX_OPS, or a protocol-5 buffer is refused (a 9-byte pickle could
ask for a 16 GiB memo or a 1 TiB byte string). JSON is bounded by its count of brackets and commas.
After: :func:`check_tree` walks the result iteratively, counting a shared object at every place it
appears (a few hundred bytes of shared references can stand for 2^60 elements), and refuses more
than MAX_ELEMENTS elements, MAX_TEXT characters or MAX_DEPTH levels. Everything over a bound raises
:class:`OverBound` with the reason.
"""

from __future__ import annotations

import struct

MAX_BYTES = 64 << 20  # a 2000-entry dump with stack frames is a few MiB
MAX_OPS = 20_000_000
MAX_ELEMENTS = 2_000_000
MAX_TEXT = 256 << 20
MAX_DEPTH = 64


class OverBound(ValueError):
    """Structured data over a bound: not read (the message says which)."""


def _table() -> dict[int, tuple[str, int]]:
    kinds: dict[int, tuple[str, int]] = {}
    for ops, kind, size in (("(.0123N\x88\x89]ael)t\x85\x86\x87}dsu\x8f\x90\x91QRbo\x81\x92\x93\x94", "none", 0),
                            ("Kh\x82q\x80", "fixed", 1), ("M\x83", "fixed", 2), ("J\x84", "fixed", 4),
                            ("G", "fixed", 8), ("jr", "memo4", 4), ("\x95", "count", 8),
                            ("U\x8cC\x8a", "count", 1), ("TXB\x8b", "count", 4), ("\x8d\x8e", "count", 8),
                            ("ILFSVgpP", "line", 1), ("ci", "line", 2)):
        for op in ops:
            kinds[ord(op)] = (kind, size)
    return kinds


_KINDS = _table()
_UNPACK = {1: struct.Struct("<B").unpack_from, 2: struct.Struct("<H").unpack_from,
           4: struct.Struct("<I").unpack_from, 8: struct.Struct("<Q").unpack_from}


def scan_pickle(data: bytes) -> None:
    """Refuse a pickle whose opcodes ask for more than the file could hold (see the module docstring)."""
    if len(data) > MAX_BYTES:
        raise OverBound(f"pickle larger than {MAX_BYTES >> 20} MiB")
    i, n, ops = 0, len(data), 0
    kinds, unpack = _KINDS, _UNPACK
    while i < n:
        op = data[i]
        ops += 1
        if ops > MAX_OPS:
            raise OverBound(f"pickle of more than {MAX_OPS} opcodes")
        kind = kinds.get(op)
        if kind is None:
            raise OverBound(f"pickle opcode {op:#x} at byte {i} is not plain data (or not an opcode)")
        what, size = kind
        i += 1
        if what == "none":
            if op == 0x2E:  # STOP
                return
            continue
        if what == "line":
            start = i
            for _ in range(size):
                end = data.find(b"\n", i)
                if end < 0:
                    raise OverBound("pickle truncated inside a text argument")
                i = end + 1
            if op == 0x70 and not (data[start:i - 1].isdigit() and int(data[start:i - 1]) <= ops):  # PUT
                raise OverBound(f"pickle memo index {data[start:i - 1][:20]!r} beyond its {ops} opcodes")
            continue
        if i + size > n:
            raise OverBound("pickle truncated inside an argument")
        value = unpack[size](data, i)[0]
        i += size
        if what == "memo4" and value > ops:
            raise OverBound(f"pickle memo index {value} at byte {i} beyond its {ops} opcodes")
        if what == "count" and op != 0x95:  # FRAME only announces the bytes that follow
            if value > n - i:
                raise OverBound(f"pickle asks for {value} bytes at byte {i}; only {n - i} follow")
            i += value


def scan_json(data: bytes) -> None:
    """Refuse JSON too large, or with more brackets and commas than MAX_ELEMENTS, before parsing it."""
    if len(data) > MAX_BYTES:
        raise OverBound(f"JSON larger than {MAX_BYTES >> 20} MiB")
    marks = data.count(b",") + data.count(b"[") + data.count(b"{")
    if marks > MAX_ELEMENTS:
        raise OverBound(f"JSON of more than {MAX_ELEMENTS} elements")


def check_tree(value) -> None:
    """Walk ``value`` without recursion; a shared object counts every time it appears."""
    stack = [(value, 0)]
    elements = text = 0
    while stack:
        item, depth = stack.pop()
        elements += 1
        if elements > MAX_ELEMENTS:
            raise OverBound(f"more than {MAX_ELEMENTS} elements (counting shared references)")
        if isinstance(item, (str, bytes, bytearray)):
            text += len(item)
            if text > MAX_TEXT:
                raise OverBound(f"more than {MAX_TEXT >> 20} MiB of text (counting shared references)")
            continue
        if isinstance(item, dict):
            children = [*item.keys(), *item.values()]
        elif isinstance(item, (list, tuple, set, frozenset)):
            children = list(item)
        else:
            continue
        if depth >= MAX_DEPTH:
            raise OverBound(f"nested deeper than {MAX_DEPTH} levels")
        if len(children) > MAX_ELEMENTS:
            raise OverBound(f"a container of more than {MAX_ELEMENTS} elements")
        stack.extend((child, depth + 1) for child in children)
