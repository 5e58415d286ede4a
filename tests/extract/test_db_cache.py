"""The compiled database is kept between runs; a damaged or foreign entry is ignored (and rebuilt)."""

from __future__ import annotations

import pytest

from nccllens.extract import db_cache, engine

pytestmark = pytest.mark.skipif(not engine.wanted(), reason="hyperscan is not importable here")


def _hits(db, data: bytes) -> list[int]:
    found: list[int] = []
    db.scan(data, match_event_handler=lambda ident, *_: found.append(ident))
    return found


def test_a_kept_database_scans_and_a_damaged_one_is_ignored(tmp_path, monkeypatch):
    monkeypatch.setenv("NCCLLENS_CACHE_DIR", str(tmp_path))
    spec = engine.spec(["NVRM: Xid"])
    db = engine.database(spec)
    db_cache.save(spec.digest, db)
    entries = list(tmp_path.glob("hsdb-*.bin"))
    assert len(entries) == 2  # the database and the one for text that is all ASCII
    loaded = db_cache.load(spec.digest)
    line = b"[Thu Nov 20 10:00:01 2025] NVRM: Xid (PCI:0000:5b:00): 79, pid=1234, GPU has fallen off the bus.\n"
    assert loaded is not None and _hits(loaded, line)
    assert _hits(engine.database(spec, ascii=True), line)
    for entry in entries:
        data = bytearray(entry.read_bytes())
        data[-10] ^= 0xFF  # one byte of the database changed: its signature no longer holds
        entry.write_bytes(bytes(data))
    assert db_cache.load(spec.digest) is None
    for entry in entries:
        entry.write_bytes(b"not a database")
    assert db_cache.load(spec.digest) is None
