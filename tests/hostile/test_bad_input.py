"""Untrusted input from bug tickets: every bad file is read or skipped with a reason, none stops the rest."""

from __future__ import annotations

import gzip
import io
import os
import tarfile
import zipfile
from pathlib import Path

import polars as pl
import pytest

from nccllens.extract import extract
from nccllens.ingest import streams

# real: shared/reference/samples/torch2.13_cpu_logs/torchrun_worker_exception_with_record.log
GOOD = b"[rank1]: Traceback (most recent call last):\n[rank1]:   File \"/workspace/job/crash.py\", line 10, in main\n" \
       b"[rank1]:     raise KeyError(\"missing_batch_key\")\n[rank1]: KeyError: 'missing_batch_key'\n"


def _run(tmp_path: Path, name: str, data: bytes):
    (tmp_path / "good").mkdir(exist_ok=True)
    (tmp_path / "good" / "rank1.log").write_bytes(GOOD)
    (tmp_path / name).write_bytes(data)
    events, inputs = extract([str(tmp_path)])
    info = {Path(i.path).name: i for i in inputs}
    # the good file is always analysed, whatever its neighbour is
    good = events.filter(pl.col("file").cast(pl.String).str.ends_with("good/rank1.log") & (pl.col("exc_type") == "KeyError"))
    assert good.height == 1
    return events, info


def test_binary_file_is_skipped(tmp_path):
    _, info = _run(tmp_path, "core.dump", bytes(range(256)) * 64)
    assert info["core.dump"].skipped == "not a log: binary data"


def test_invalid_utf8_and_nul_bytes_are_read_and_noted(tmp_path):
    events, info = _run(tmp_path, "rank2.log", b"\xff\xfe\x00garbage\x00\n" + GOOD.replace(b"rank1", b"rank2"))
    notes = info["rank2.log"].notes
    assert "NUL bytes removed" in notes and "invalid UTF-8 replaced with U+FFFD" in notes
    assert events.filter(pl.col("rank") == 2).height >= 1


def test_one_huge_line_without_newline_is_cut_not_loaded(tmp_path):
    big = tmp_path / "huge.log"
    with open(big, "wb") as fh:
        block = b"x" * (16 << 20)
        for _ in range(64):  # 1 GiB, no newline
            fh.write(block)
    (tmp_path / "good").mkdir()
    (tmp_path / "good" / "rank1.log").write_bytes(GOOD)
    events, inputs = extract([str(tmp_path)])
    info = {Path(i.path).name: i for i in inputs}
    assert any("longer than" in n for n in info["huge.log"].notes)
    assert info["huge.log"].lines == 1
    assert events.filter(pl.col("exc_type") == "KeyError").height == 1


def test_empty_file_is_listed_with_zero_lines(tmp_path):
    _, info = _run(tmp_path, "empty.log", b"")
    assert info["empty.log"].skipped is None and info["empty.log"].lines == 0


def test_crlf_and_latin1_text(tmp_path):
    data = GOOD.replace(b"rank1", b"rank4").replace(b"\n", b"\r\n") + "caf\xe9 d\xe9j\xe0\r\n".encode("latin-1")
    events, info = _run(tmp_path, "rank4.log", data)
    tb = events.filter((pl.col("rank") == 4) & (pl.col("kind") == "python.traceback"))
    assert tb.height == 1 and "\r" not in tb["message"][0]


def test_truncated_gz_keeps_what_was_readable(tmp_path):
    payload = gzip.compress(GOOD.replace(b"rank1", b"rank5") * 2000)
    events, info = _run(tmp_path, "rank5.log.gz", payload[: len(payload) // 2])
    assert any("truncated or corrupt" in n for n in info["rank5.log.gz"].notes)


def test_corrupt_zip_is_skipped(tmp_path):
    _, info = _run(tmp_path, "bundle.zip", b"PK\x03\x04" + os.urandom(512))
    assert "corrupt zip" in info["bundle.zip"].skipped


def test_archive_bomb_is_capped_and_said(tmp_path, monkeypatch):
    monkeypatch.setattr(streams, "MAX_ARCHIVE_BYTES", 8 << 20)
    bomb = io.BytesIO()
    with zipfile.ZipFile(bomb, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("inner.log", b"A" * (64 << 20))
    _, info = _run(tmp_path, "bomb.zip", bomb.getvalue())
    entry = next(i for p, i in info.items() if p.startswith("bomb.zip!"))
    assert any("archive bomb guard" in n for n in entry.notes)


def test_tar_members_with_dotdot_or_absolute_names_are_never_written(tmp_path):
    arc = io.BytesIO()
    with tarfile.open(fileobj=arc, mode="w:gz") as tf:
        for name in ("../../../../tmp/nccllens-escape.log", "/etc/nccllens-abs.log"):
            info = tarfile.TarInfo(name)
            info.size = len(GOOD)
            tf.addfile(info, io.BytesIO(GOOD))
    _, info = _run(tmp_path, "evil.tgz", arc.getvalue())
    assert not Path("/tmp/nccllens-escape.log").exists() and not Path("/etc/nccllens-abs.log").exists()
    assert {"nccllens-escape.log", "nccllens-abs.log"} <= set(info)


def test_symlink_loop(tmp_path):
    (tmp_path / "loopdir").mkdir()
    os.symlink(tmp_path / "loopdir", tmp_path / "loopdir" / "again")
    _, info = _run(tmp_path, "x.log", b"hello\n")
    assert info["again"].skipped.startswith("symlink loop")


def test_unreadable_file_is_skipped_with_reason(tmp_path, monkeypatch):
    real_access = os.access
    monkeypatch.setattr(os, "access", lambda p, m: False if str(p).endswith("secret.log") else real_access(p, m))
    _, info = _run(tmp_path, "secret.log", GOOD)
    assert info["secret.log"].skipped == "unreadable (permission denied)"


@pytest.mark.skipif(not os.environ.get("NCCLLENS_SLOW_TESTS"), reason="slow: set NCCLLENS_SLOW_TESTS=1")
def test_a_folder_of_100000_files(tmp_path):
    many = tmp_path / "many"
    many.mkdir()
    for i in range(100_000):
        (many / f"r{i:06d}.log").write_bytes(b"step ok\n")
    events, inputs = extract([str(tmp_path)])
    assert len(inputs) == 100_000 and all(i.skipped is None for i in inputs)


def test_non_log_files_are_recognised(tmp_path):
    (tmp_path / "train.py").write_text("import torch\n")
    (tmp_path / "config.yaml").write_text("lr: 0.1\n")
    _, info = _run(tmp_path, "run.sh", b"#!/bin/bash\ntorchrun train.py\n")
    assert info["train.py"].skipped == "not a log: Python source"
    assert info["config.yaml"].skipped == "not a log: configuration"
    assert info["run.sh"].skipped == "not a log: shell script"
