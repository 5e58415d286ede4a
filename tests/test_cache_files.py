"""Signed cache files (nccllens.cache_files): read back only as written, under their own name."""

from __future__ import annotations

import json

from nccllens import cache_files


def test_a_signed_file_reads_back_under_its_name_only(cache_dir):
    path = cache_dir / "x.json"
    data = {"value": {"texte": "déjà", "n": [1, 2.5, None, True]}}
    assert cache_files.write_signed(path, "x", data)
    assert json.loads(path.read_text())["value"] == data["value"]  # still a JSON object
    assert cache_files.read_signed(path, "x") == data
    assert cache_files.read_signed(path, "y") is None  # signed under another name
    raw = path.read_bytes()
    for bad in (raw.replace(b"2.5", b"3.5"), raw[:-1], raw.replace(b'{"digest":"', b'{"digest": "'), b"", b"[]"):
        path.write_bytes(bad)
        assert cache_files.read_signed(path, "x") is None


def test_values_that_are_not_objects_are_not_written(cache_dir):
    for data in ([1], {}, {"digest": 1}, {"value": {1, 2}}):
        assert not cache_files.write_signed(cache_dir / "x.json", "x", data)


def test_kept_builds_once_and_rebuilds_a_damaged_entry(cache_dir):
    calls = []

    def build(source: bytes):
        calls.append(source)
        return {"parsed": source.decode()}

    assert cache_files.kept("t", b"a = 1", build) == {"parsed": "a = 1"}
    assert cache_files.kept("t", b"a = 1", build) == {"parsed": "a = 1"} and len(calls) == 1
    (path,) = cache_dir.glob("t-*.json")
    path.write_bytes(path.read_bytes().replace(b"a = 1", b"a = 2"))  # forged: the digest no longer matches
    assert cache_files.kept("t", b"a = 1", build) == {"parsed": "a = 1"} and len(calls) == 2
    assert cache_files.kept("t", b"b = 2", build) == {"parsed": "b = 2"} and len(calls) == 3  # other content


def test_kept_without_a_cache(cache_dir, monkeypatch):
    monkeypatch.setenv("NCCLLENS_NO_CACHE", "1")
    assert cache_files.kept("t", b"x", lambda s: [s.decode()]) == ["x"]
    assert not cache_dir.exists()
