"""Inputs as users have them: folders, archives read in memory, stdin, and broken ones."""

from __future__ import annotations

import gzip
import io
import os
import tarfile
import zipfile

import pytest

from nccllens.ingest import sources, streams
from nccllens.ingest.sources import iter_sources

# real line: shared/reference/samples/torch2.13_cpu_logs/torchrun_worker_exception_with_record.log
LINE = b"[rank1]: KeyError: 'missing_batch_key'\n"


def _read(src) -> bytes:
    return b"".join(src.chunks())


def test_folder_is_walked_recursively_in_stable_order(tmp_path):
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "z.log").write_bytes(LINE)
    (tmp_path / "a.log").write_bytes(LINE)
    names = [s.path for s in iter_sources([str(tmp_path)])]
    assert names == [f"{tmp_path}/a.log", f"{tmp_path}/b/z.log"]


def test_tar_gz_members_are_named_with_bang_and_read_in_memory(tmp_path):
    arc = tmp_path / "logs.tar.gz"
    with tarfile.open(arc, "w:gz") as tf:
        info = tarfile.TarInfo("node-a/console.log")
        info.size = len(LINE)
        tf.addfile(info, io.BytesIO(LINE))
    found = list(iter_sources([str(arc)]))
    assert [s.path for s in found] == [f"{arc}!node-a/console.log"]
    assert _read(found[0]) == LINE
    assert sorted(os.listdir(tmp_path)) == ["logs.tar.gz"]  # nothing unpacked


def test_tar_member_with_parent_path_is_only_a_label(tmp_path):
    arc = tmp_path / "evil.tar"
    with tarfile.open(arc, "w") as tf:
        for name in ("../../escape.log", "/abs/path.log"):
            info = tarfile.TarInfo(name)
            info.size = len(LINE)
            tf.addfile(info, io.BytesIO(LINE))
    found = list(iter_sources([str(arc)]))
    assert {s.path for s in found} == {f"{arc}!../../escape.log", f"{arc}!/abs/path.log"}
    assert all(_read(s) == LINE for s in found)
    assert not (tmp_path.parent.parent / "escape.log").exists()


def test_zip_and_gz(tmp_path):
    z = tmp_path / "logs.zip"
    with zipfile.ZipFile(z, "w") as zf:
        zf.writestr("rank3.log", LINE)
    g = tmp_path / "rank1.log.gz"
    g.write_bytes(gzip.compress(LINE))
    found = {s.path: _read(s) for s in iter_sources([str(z), str(g)])}
    assert found == {f"{z}!rank3.log": LINE, str(g): LINE}


def test_corrupt_zip_is_skipped_with_reason(tmp_path):
    z = tmp_path / "broken.zip"
    z.write_bytes(b"PK\x03\x04 not really a zip")
    (src,) = iter_sources([str(z)])
    assert src.skipped and "corrupt zip" in src.skipped


def test_truncated_gz_raises_archive_limit_not_an_os_error(tmp_path):
    g = tmp_path / "cut.log.gz"
    g.write_bytes(gzip.compress(LINE * 1000)[:60])
    (src,) = iter_sources([str(g)])
    with pytest.raises(sources.ArchiveLimit, match="truncated or corrupt"):
        _read(src)


def test_archive_bomb_is_capped(tmp_path, monkeypatch):
    monkeypatch.setattr(streams, "MAX_ARCHIVE_BYTES", 1 << 20)
    g = tmp_path / "bomb.log.gz"
    g.write_bytes(gzip.compress(b"x" * (4 << 20)))
    (src,) = iter_sources([str(g)])
    with pytest.raises(sources.ArchiveLimit, match="bomb"):
        _read(src)


def test_symlink_loop_is_reported_once(tmp_path):
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "x.log").write_bytes(LINE)
    os.symlink(tmp_path / "d", tmp_path / "d" / "loop")
    found = list(iter_sources([str(tmp_path)]))
    assert [s.path for s in found if not s.skipped] == [f"{tmp_path}/d/x.log"]
    assert any("symlink loop" in (s.skipped or "") for s in found)


def test_missing_path_is_a_skipped_source(tmp_path):
    (src,) = iter_sources([str(tmp_path / "nope")])
    assert src.skipped == "no such file or folder"


def test_a_worker_reopens_a_walked_file_as_the_walk_found_it(tmp_path):
    # workers get (name, path on disk, size) from the walk and rebuild the source from them alone
    text = LINE
    (tmp_path / "dmesg.txt").write_bytes(text)
    (tmp_path / "dmesg2.txt.gz").write_bytes(gzip.compress(text * 2))
    for walked in iter_sources([str(tmp_path)]):
        again = sources.reopen(walked.path, walked.fs_path, walked.size)
        assert (again.path, again.fs_path, again.size) == (walked.path, walked.fs_path, walked.size)
        assert b"".join(again.chunks()) == b"".join(walked.chunks())
    assert b"".join(sources.reopen("x/dmesg2.txt.gz", str(tmp_path / "dmesg2.txt.gz"), None).chunks()) == text * 2
