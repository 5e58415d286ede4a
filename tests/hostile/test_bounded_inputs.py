"""Only regular files are read, and archives and compressed files within bounds (issue 19)."""

from __future__ import annotations

import bz2
import gzip
import io
import lzma
import os
import socket
import tarfile
import threading
import zipfile

import pytest

import nccllens
from nccllens.ingest import archives, streams
from nccllens.ingest.sources import iter_sources
from tests.hostile.planted import OOM, analyze_planted, assert_oom_on_rank3_first, inputs_of

WARN = b"node1:1:2 [0] NCCL WARN Call to connect returned Connection refused\n"


def test_devices_fifos_and_sockets_are_skipped_with_a_reason_also_when_named(tmp_path):
    os.mkfifo(tmp_path / "pipe.log")
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(tmp_path / "sock.log"))
    os.symlink("/dev/zero", tmp_path / "zero.log")
    try:
        report = analyze_planted(tmp_path)
        found = inputs_of(report)
        assert "FIFO" in found["pipe.log"].skipped and "socket" in found["sock.log"].skipped
        assert "character device" in found["zero.log"].skipped
        named = {s.path: s.skipped for s in iter_sources(["/dev/zero", "/dev/urandom", str(tmp_path / "pipe.log")])}
        assert all("not a regular file" in why for why in named.values()), named
    finally:
        sock.close()


def test_a_file_swapped_for_a_fifo_after_the_walk_is_not_waited_on(tmp_path):
    path = tmp_path / "rank1.log"
    path.write_bytes(WARN)
    (source,) = iter_sources([str(path)])
    path.unlink()
    os.mkfifo(path)
    done = threading.Event()

    def read():
        with pytest.raises(streams.MemberUnreadable, match="FIFO"):
            list(source.chunks())
        done.set()

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    reader.join(30)
    assert done.is_set()


def _tar_gz(members: int) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tf:
        for i in range(members):
            info = tarfile.TarInfo(f"node{i:06d}/x.log")
            info.size = len(WARN)
            tf.addfile(info, io.BytesIO(WARN))
    return buf.getvalue()


class _Counting(io.BytesIO):
    reads = 0

    def read(self, n=-1):
        data = super().read(n)
        _Counting.reads += len(data)
        return data


def _bytes_read_per_archive_byte(members: int) -> float:
    data = _tar_gz(members)
    _Counting.reads = 0
    for source in archives.archive_sources(lambda: _Counting(data), "x.tar.gz", len(data)):
        for _ in source.chunks():
            pass
    return _Counting.reads / len(data)


def test_a_tar_gz_of_many_members_is_read_in_two_passes_whatever_their_number():
    # the archive was reopened and decompressed up to each member: quadratic (100,000 members: > 600 s)
    small, large = _bytes_read_per_archive_byte(200), _bytes_read_per_archive_byte(2000)
    assert small <= 2.5 and large <= 2.5, (small, large)


def test_archives_are_bounded_by_member_count_too(tmp_path, monkeypatch):
    monkeypatch.setattr(streams, "MAX_MEMBERS", 50)
    (tmp_path / "many.tar.gz").write_bytes(_tar_gz(200))
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for i in range(200):
            zf.writestr(f"n{i:04d}.log", WARN)
    (tmp_path / "many.zip").write_bytes(buf.getvalue())
    report = analyze_planted(tmp_path)
    for name in ("many.tar.gz", "many.zip"):
        members = [i for i in report.inputs if i.path.startswith(str(tmp_path / name))]
        assert len(members) == 51
        assert "member limit reached" in members[-1].skipped


def test_a_gzip_of_many_members_is_read_whole_and_its_members_counted(tmp_path, monkeypatch):
    one = gzip.compress(WARN)
    (tmp_path / "node1.log.gz").write_bytes(one * 2000)
    (tmp_path / "rank3.log.gz").write_bytes(gzip.compress(OOM[:60]) + gzip.compress(OOM[60:]) + b"\0" * 64)
    report = analyze_planted(tmp_path)
    assert inputs_of(report)["node1.log.gz"].lines == 2000
    monkeypatch.setattr(streams, "GZIP_MEMBERS_BASE", 100)
    report = analyze_planted(tmp_path)
    assert any("more than" in n and "gzip members" in n for n in inputs_of(report)["node1.log.gz"].notes)


def test_a_leading_run_of_nuls_does_not_hide_the_rest_of_a_file(tmp_path):
    # copytruncate: the writer keeps its offset, the file starts with a hole of NULs
    (tmp_path / "rank3.log").write_bytes(b"\0" * (20 << 20) + OOM)
    report = nccllens.analyze([str(tmp_path)])
    assert_oom_on_rank3_first(report)
    assert any("NUL bytes at the start skipped" in n for n in inputs_of(report)["rank3.log"].notes)


@pytest.mark.parametrize("suffix,compress", [(".bz2", bz2.compress), (".xz", lzma.compress)])
def test_bz2_and_xz_are_read_within_the_same_bounds(tmp_path, monkeypatch, suffix, compress):
    (tmp_path / "only" / f"rank3.log{suffix}").parent.mkdir()
    (tmp_path / "only" / f"rank3.log{suffix}").write_bytes(compress(OOM))
    assert_oom_on_rank3_first(nccllens.analyze([str(tmp_path / "only")]))
    monkeypatch.setattr(streams, "MAX_ARCHIVE_BYTES", 1 << 20)
    (tmp_path / f"bomb.log{suffix}").write_bytes(compress(b"A" * (4 << 20)))
    report = analyze_planted(tmp_path)
    assert any("archive bomb guard" in n for n in inputs_of(report)[f"bomb.log{suffix}"].notes)


def test_zstd_without_a_zstd_module_is_skipped_with_the_reason(tmp_path, monkeypatch):
    monkeypatch.setattr(streams, "_zstd_reader", lambda raw: None)  # Python < 3.14 without zstandard
    (tmp_path / "node1.log.zst").write_bytes(b"\x28\xb5\x2f\xfd" + os.urandom(64))
    report = analyze_planted(tmp_path)
    assert "needs Python 3.14+ or the zstandard package" in inputs_of(report)["node1.log.zst"].skipped


def _zstd_compress(data: bytes) -> bytes:
    try:
        from compression import zstd  # type: ignore[import-not-found]

        return zstd.compress(data)
    except ImportError:
        zstandard = pytest.importorskip("zstandard", reason="no zstd module: the skip is tested above")
        return zstandard.ZstdCompressor().compress(data)


def test_zstd_is_read_within_the_same_bounds(tmp_path, monkeypatch):
    two_frames = _zstd_compress(OOM[:60]) + _zstd_compress(OOM[60:])  # zstd -c a b > c: frames in sequence
    (tmp_path / "only").mkdir()
    (tmp_path / "only" / "rank3.log.zst").write_bytes(two_frames)
    assert_oom_on_rank3_first(nccllens.analyze([str(tmp_path / "only")]))
    monkeypatch.setattr(streams, "MAX_ARCHIVE_BYTES", 1 << 20)
    (tmp_path / "bomb.log.zst").write_bytes(_zstd_compress(b"A" * (4 << 20)))
    packed = _zstd_compress(WARN * 2000)
    (tmp_path / "cut.log.zst").write_bytes(packed[:len(packed) // 2])
    report = analyze_planted(tmp_path)
    assert any("archive bomb guard" in n for n in inputs_of(report)["bomb.log.zst"].notes)
    assert any("truncated or corrupt" in n for n in inputs_of(report)["cut.log.zst"].notes)


def test_nested_archives_are_read_within_bounds(tmp_path, monkeypatch):
    inner = io.BytesIO()
    with zipfile.ZipFile(inner, "w") as zf:
        zf.writestr("rank3.log", OOM)
        zf.writestr("node1.log.gz", gzip.compress(WARN))
    outer = io.BytesIO()
    with tarfile.open(fileobj=outer, mode="w:xz") as tf:
        info = tarfile.TarInfo("bundle/inner.zip")
        info.size = len(inner.getvalue())
        tf.addfile(info, io.BytesIO(inner.getvalue()))
    (tmp_path / "ticket.tar.xz").write_bytes(outer.getvalue())
    report = analyze_planted(tmp_path)
    paths = [i.path for i in report.inputs]
    assert f"{tmp_path}/ticket.tar.xz!bundle/inner.zip!rank3.log" in paths
    assert f"{tmp_path}/ticket.tar.xz!bundle/inner.zip!node1.log.gz" in paths
    monkeypatch.setattr(archives, "MAX_DEPTH", 0)  # no archive inside an archive
    report = analyze_planted(tmp_path)
    assert any("nested archive deeper" in (i.skipped or "") for i in report.inputs)
