"""The compiled engine: every family PREFILTER and rule pattern branch in one Hyperscan database.

One block-mode scan per piece of text (``parse.pieces``: newline-aligned, ~32 KiB) reports, for every
line, which branches match it (``superset``: never fewer lines than Python's engine, and the exact
patterns run on the survivors' messages afterwards); a second, one-expression database says whether the
piece holds a dense family's line (``parse.dense.KEY_REGEX``: that scan stops at its first match). In the
branches' database the gate cost 20-40% of the scan on the dense corpora: its literals are in nearly every
line there, and each of their matches was followed up although only the first counted. Only pieces with
either are read as lines, and
only lines a branch matched reach Python; the literal prefilter (``prefilter``, ``prefilter_keys``) is
then not used at all.

The engine is used when ``hyperscan`` imports and ``NCCLLENS_ENGINE`` is not ``fallback``; anything
else (no wheel for the platform, a branch ``superset`` cannot rewrite) runs the plain path, which gives
the same events (tests/engine/test_engine_paths.py compares them on every fixture).
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import os
from dataclasses import dataclass

from nccllens.extract import db_cache
from nccllens.extract.superset import scan_parts, superset
from nccllens.extract.tails import trimmed
from nccllens.parse.dense import FAMILIES, KEY_REGEX
from nccllens.parse.dense_rows import branches, watching

ANY = 1 << len(FAMILIES)  # a line any pattern wants (outside the dense families too)
_GATE = "dense-gate-" + hashlib.sha256(KEY_REGEX.encode()).hexdigest()[:24]  # the dense gate's database


@dataclass(frozen=True)
class Spec:
    """What the database is compiled from (picklable: travels to the workers with the plan)."""
    expressions: tuple[str, ...]  # rewritten branches (``superset``), Hyperscan syntax
    bits: tuple[int, ...]  # per expression: ANY, and the bit of each dense family it watches
    digest: str
    ascii: tuple[str, ...] = ()  # the same branches rewritten for text that is all ASCII (``superset``)


def wanted() -> bool:
    """Is the engine to be used (importable, and not turned off by ``NCCLLENS_ENGINE=fallback``)?"""
    if os.environ.get("NCCLLENS_ENGINE", "").strip().lower() == "fallback":
        return False
    return _importable()


@functools.lru_cache(maxsize=1)
def _importable() -> bool:
    try:
        import hyperscan  # noqa: F401
    except ImportError:
        return False
    return True


def spec(patterns: list[str]) -> Spec | None:
    """The database's expressions for these (unanchored) patterns; None when the engine is not wanted or
    a branch has no safe rewrite."""
    if not wanted():
        return None
    found: dict[tuple[str, str], int] = {}  # expressions → bits (a part two branches share is looked for once)
    for pattern in patterns:
        for branch in branches(pattern):
            # the bits are the branch's: a part that alone matches a dense line the branch cannot never sends it
            bit = ANY | sum(1 << FAMILIES.index(f) for f in watching(branch))
            for part in map(trimmed, scan_parts(branch)):
                rewritten, narrow = superset(part), superset(part, ascii=True)
                if rewritten is None or narrow is None:
                    return None
                found[rewritten, narrow] = found.get((rewritten, narrow), 0) | bit
    expressions, narrows, bits = [e for e, _ in found], [n for _, n in found], list(found.values())
    digest = hashlib.sha256("\0".join(["branches", *expressions, "", *narrows]).encode()).hexdigest()[:24]
    made = Spec(tuple(expressions), tuple(bits), digest, tuple(narrows))
    try:
        prepare(made)
    except Exception:  # noqa: BLE001 - a pattern Hyperscan refuses (too large, unsupported): the plain path reads it
        return None
    return made


_DATABASES: dict[str, object] = {}  # per digest (hashing a Spec would hash all its expressions at every scan)


def database(s: Spec, ascii: bool = False):
    """The compiled database of ``s`` (kept in the cache folder between runs, see ``db_cache``); with
    ``ascii``, the one for text that is all ASCII (``s.ascii``; a Spec without them has one database)."""
    expressions = s.ascii if ascii and s.ascii else s.expressions
    name = s.digest + ("-ascii" if expressions is not s.expressions else "")
    db = _DATABASES.get(name)
    if db is None:
        db = _DATABASES[name] = _load_or_compile(name, expressions)
    return db


def prepare(s: Spec) -> None:
    """Every database a scan with ``s`` uses, compiled (or loaded from the cache) now."""
    database(s)
    database(s, ascii=True)
    _gate()


def _gate():
    """The dense gate's database (``KEY_REGEX`` alone; cached like the others)."""
    db = _DATABASES.get(_GATE)
    if db is None:
        db = _DATABASES[_GATE] = _load_or_compile(_GATE, (KEY_REGEX,), gate=True)
    return db


def _load_or_compile(name: str, expressions: tuple[str, ...], gate: bool = False):
    import hyperscan as hs

    found = db_cache.load(name)
    if found is not None:
        return found
    flags = hs.HS_FLAG_MULTILINE | hs.HS_FLAG_SINGLEMATCH if gate else \
        hs.HS_FLAG_UTF8 | hs.HS_FLAG_MULTILINE | hs.HS_FLAG_ALLOWEMPTY
    db = hs.Database(mode=hs.HS_MODE_BLOCK)
    db.compile(expressions=[e.encode() for e in expressions], ids=list(range(len(expressions))),
               flags=[flags] * len(expressions))
    db_cache.save(name, db)
    return db


def scan(s: Spec, data: bytes | memoryview, ascii: bool | None = None) -> tuple[list[tuple[int, int]], bool]:
    """(end offset, bits) of every branch match in ``data`` (valid UTF-8, whole lines; a memoryview of a
    buffer's piece is scanned without a copy), and whether it holds a dense family's line. Text that is all ASCII
    (``ascii``, else tested here) is scanned with the ASCII database."""
    bits = s.bits
    found: list[tuple[int, int]] = []

    def on_match(ident: int, start: int, end: int, flags: int, context) -> None:
        found.append((end, bits[ident]))

    database(s, data.isascii() if ascii is None else ascii).scan(data, match_event_handler=on_match)
    return found, holds_dense(data)


def holds_dense(data: bytes | memoryview) -> bool:
    """Does ``data`` hold a match of the dense gate (``KEY_REGEX``)? The scan stops at the first."""
    import hyperscan as hs

    held = []

    def on_match(ident: int, start: int, end: int, flags: int, context) -> bool:
        held.append(end)
        return True  # stop here

    with contextlib.suppress(hs.ScanTerminated):
        _gate().scan(data, match_event_handler=on_match)
    return bool(held)


def line_bits(data: bytes, found: list[tuple[int, int]], first_line: int, start: int = 0,
              stop: int | None = None) -> tuple[dict[int, int], int]:
    """Per line number (the first line of ``data[start:stop]``, where the matches' offsets count from, is
    ``first_line``), the bits of the branches matching it; and the newlines in ``data[start:stop]`` (counted once,
    on the way)."""
    out: dict[int, int] = {}
    line, pos = first_line, start
    for end, b in sorted(found):
        # a match ends after its last character: that character's line is the match's
        at = start + max(end - 1, 0)
        line += data.count(b"\n", pos, at)
        pos = at
        out[line] = out.get(line, 0) | b
    return out, line - first_line + data.count(b"\n", pos, len(data) if stop is None else stop)


def frame_hits(s: Spec, df):
    """``scan`` over the lines of a frame (columns ``line``, ``raw``: text that had to be cleaned first)
    → its hit table (line, bits)."""
    import polars as pl

    raws = df["raw"].to_list()
    data = "\n".join(raws).encode("utf-8") + b"\n"
    found, _ = line_bits(data, scan(s, data)[0], 0)
    numbers = df["line"].to_list()
    return pl.DataFrame({"line": [numbers[i] for i in found], "bits": list(found.values())},
                        schema={"line": pl.UInt32, "bits": pl.UInt32})
