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
    # the database and the one for text that is all ASCII (and the dense gate's, unless this process compiled it
    # before, with another cache folder)
    assert len(entries) in (2, 3)
    loaded = db_cache.load(spec.digest)
    line = b"[Thu Nov 20 10:00:01 2025] NVRM: Xid (PCI:0000:5b:00): 79, pid=1234, GPU has fallen off the bus.\n"
    assert loaded is not None and _hits(loaded, line)
    assert _hits(engine.database(spec, ascii=True), line)
    # the dense gate: whether a piece holds a dense family's line, its scan stopped at the first
    assert not engine.holds_dense(line)
    # synthetic: built from NCCL's verbatim COLL INFO format (every version) "%s: opCount %lx sendbuff %p recvbuff %p
    # count %zu datatype %d op %d root %d comm %p [nranks=%d] stream %p" behind the plain INFO prefix
    coll = (b"gpu-node-001:40000:40012 [3] NCCL INFO AllReduce: opCount 1f sendbuff 0x7f3a2c000000 recvbuff "
            b"0x7f3a2c000000 count 1048576 datatype 7 op 0 root 0 comm 0x55d0c8a1b2c0 [nranks=8] stream 0x55d0c9a1b2c0\n")
    assert engine.holds_dense(line + coll * 3 + line)
    for entry in entries:
        data = bytearray(entry.read_bytes())
        data[-10] ^= 0xFF  # one byte of the database changed: its signature no longer holds
        entry.write_bytes(bytes(data))
    assert db_cache.load(spec.digest) is None
    for entry in entries:
        entry.write_bytes(b"not a database")
    assert db_cache.load(spec.digest) is None
