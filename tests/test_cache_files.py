"""Signed cache files (nccllens.cache_files): read back only as written, under their own name."""

from __future__ import annotations

import json

import pytest

from nccllens import cache_files


@pytest.fixture
def folder(tmp_path, monkeypatch):
    where = tmp_path / "cache"
    monkeypatch.setenv("NCCLLENS_CACHE_DIR", str(where))
    monkeypatch.delenv("NCCLLENS_NO_CACHE", raising=False)
    return where


def test_a_signed_file_reads_back_under_its_name_only(folder):
    path = folder / "x.json"
    data = {"value": {"texte": "déjà", "n": [1, 2.5, None, True]}}
    assert cache_files.write_signed(path, "x", data)
    assert json.loads(path.read_text())["value"] == data["value"]  # still a JSON object
    assert cache_files.read_signed(path, "x") == data
    assert cache_files.read_signed(path, "y") is None  # signed under another name
    raw = path.read_bytes()
    for bad in (raw.replace(b"2.5", b"3.5"), raw[:-1], raw.replace(b'{"digest":"', b'{"digest": "'), b"", b"[]"):
        path.write_bytes(bad)
        assert cache_files.read_signed(path, "x") is None


def test_values_that_are_not_objects_are_not_written(folder):
    for data in ([1], {}, {"digest": 1}, {"value": {1, 2}}):
        assert not cache_files.write_signed(folder / "x.json", "x", data)


def test_kept_builds_once_and_rebuilds_a_damaged_entry(folder):
    calls = []

    def build(source: bytes):
        calls.append(source)
        return {"parsed": source.decode()}

    assert cache_files.kept("t", b"a = 1", build) == {"parsed": "a = 1"}
    assert cache_files.kept("t", b"a = 1", build) == {"parsed": "a = 1"} and len(calls) == 1
    (path,) = folder.glob("t-*.json")
    path.write_bytes(path.read_bytes().replace(b"a = 1", b"a = 2"))  # forged: the digest no longer matches
    assert cache_files.kept("t", b"a = 1", build) == {"parsed": "a = 1"} and len(calls) == 2
    assert cache_files.kept("t", b"b = 2", build) == {"parsed": "b = 2"} and len(calls) == 3  # other content


def test_kept_without_a_cache(folder, monkeypatch):
    monkeypatch.setenv("NCCLLENS_NO_CACHE", "1")
    assert cache_files.kept("t", b"x", lambda s: [s.decode()]) == ["x"]
    assert not folder.exists()
