"""Fuzzing whole inputs (issue 19): a folder with the planted CUDA OOM on rank 3 and one hostile input
made of mutated real fixture bytes, spliced real lines, extreme numbers and dates, nested archives
and flight-recorder dumps. Every example must end without an exception and still find the OOM.

CI runs a few derandomized examples; a longer run (docs/robustness.md):
``NCCLLENS_FUZZ_EXAMPLES=2000 python -m pytest tests/hostile/test_fuzz_inputs.py -q``.
Each example is bounded in time (``NCCLLENS_FUZZ_SECONDS``, default 120: a hang ends the process with every
thread's stack, a slow example fails) and memory (peak RSS of the process and its workers under 1 GiB).
``NCCLLENS_FUZZ_LOG=<file>`` appends one line per example (seconds, peak RSS, name, size, digest), so a
long run that is stopped still says how far it got (a failing example, shrinking included, ends ``FAILED``). ``NCCLLENS_FUZZ_KEEP=<folder>`` keeps the bytes of every
example slower than ``NCCLLENS_FUZZ_KEEP_SECONDS`` (default 10) or failing, and of one that hangs (written
before it runs, removed when it ends in time), named by digest, to be replayed.
"""

from __future__ import annotations

import bz2
import faulthandler
import gzip
import hashlib
import io
import json
import lzma
import os
import pickle
import resource
import tarfile
import tempfile
import time
import zipfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import nccllens
from nccllens.report import render
from tests.hostile.planted import OOM

EXAMPLES = int(os.environ.get("NCCLLENS_FUZZ_EXAMPLES", "6"))
SECONDS = float(os.environ.get("NCCLLENS_FUZZ_SECONDS", "120"))  # a hang check on a loaded machine, not a speed test
PEAK_KB = 1 << 20  # 1 GiB: issue 19's bound for any input
LOG = os.environ.get("NCCLLENS_FUZZ_LOG")
KEEP = os.environ.get("NCCLLENS_FUZZ_KEEP")
KEEP_SECONDS = float(os.environ.get("NCCLLENS_FUZZ_KEEP_SECONDS", "10"))
FUZZ = settings(max_examples=EXAMPLES, deadline=None, derandomize=EXAMPLES <= 1000, database=None,
                suppress_health_check=list(HealthCheck))
ROOT = Path(__file__).resolve().parents[2]
FILES = sorted(p for p in (ROOT / "fixtures").rglob("*") if p.is_file() and p.suffix in (".log", ".txt", ".out")
               and p.stat().st_size < 256 << 10)[:120]
LINES = [ln for p in FILES[:60] for ln in p.read_bytes().splitlines()[:60]] or [b"NCCL WARN x"]
EXTREMES = [b"99999999999999999999", b"2147483647", b"-2147483648", b"9" * 5000, b"0000-00-00T00:00:00Z",
            b"9999-12-31T23:59:59.999999+14:00", b"2024-02-30 25:61:61", b"[99999999999.999999]", b"nan", b"-1",
            b"1e308", b"\x00" * 64, b"\x1b]52;c;eA==\x07", b"\xff\xfe", "\u202e".encode()]


@st.composite
def mutated(draw) -> bytes:
    data = bytearray(draw(st.sampled_from(FILES)).read_bytes())
    for _ in range(draw(st.integers(0, 6))):
        if not data:
            break
        at = draw(st.integers(0, len(data) - 1))
        how = draw(st.sampled_from(["flip", "cut", "insert", "dup", "spam"]))
        if how == "flip":
            data[at] ^= 1 << draw(st.integers(0, 7))
        elif how == "cut":
            del data[at:at + draw(st.integers(1, 4096))]
        elif how == "insert":
            data[at:at] = draw(st.sampled_from(EXTREMES))
        elif how == "dup":
            data[at:at] = data[at:at + draw(st.integers(1, 2048))] * draw(st.integers(1, 50))
        else:  # a job printing the same line(s) again and again (issue 19: repeats are counted)
            spam = b"\n".join(draw(st.lists(st.sampled_from(LINES), min_size=1, max_size=4))) + b"\n"
            data[at:at] = spam * draw(st.integers(2, 3000))
    return bytes(data)


spliced = st.lists(st.one_of(st.sampled_from(LINES), st.sampled_from(EXTREMES),
                             st.builds(lambda a, b, n: a[:n] + b, st.sampled_from(LINES), st.sampled_from(EXTREMES),
                                       st.integers(0, 80))), max_size=60).map(b"\n".join)
dumps = st.one_of(
    st.recursive(st.one_of(st.none(), st.integers(), st.text(max_size=20), st.booleans()),
                 lambda c: st.one_of(st.lists(c, max_size=5), st.dictionaries(st.text(max_size=8), c, max_size=5)),
                 max_leaves=30).map(lambda v: pickle.dumps({"version": "2.4", "entries": [v]}, protocol=4)),
    st.binary(max_size=64).map(lambda b: b"\x80\x04" + b),
    st.builds(lambda n: json.dumps({"version": "2.4", "entries": [{"seq_id": n, "time_created_ns": n}]}).encode(),
              st.integers(-(2**70), 2**70)),
)


def _zstd(data: bytes) -> bytes | None:
    try:
        from compression import zstd  # type: ignore[import-not-found]

        return zstd.compress(data)
    except ImportError:
        pass
    try:
        import zstandard  # type: ignore[import-not-found]
    except ImportError:
        return None
    return zstandard.ZstdCompressor().compress(data)


def _archive(kind: str, name: str, data: bytes, inner: bytes | None) -> bytes:
    buf = io.BytesIO()
    if kind == "zip":
        with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
            zf.writestr(name, data)
            if inner is not None:
                zf.writestr("inner.tar.gz", inner)
        return buf.getvalue()
    with tarfile.open(fileobj=buf, mode="w:gz") as tf:
        for member, payload in ((name, data), ("inner.zip", inner)):
            if payload is None:
                continue
            info = tarfile.TarInfo(member)
            info.size = len(payload)
            tf.addfile(info, io.BytesIO(payload))
    return buf.getvalue()


@st.composite
def hostile(draw) -> tuple[str, bytes]:
    data = draw(st.one_of(mutated(), spliced, dumps))
    name = draw(st.sampled_from(["node1.log", "fr_trace_rank_0", "error.json", "dmesg-node2.txt", "x.json"]))
    wrap = draw(st.sampled_from(["none", "gz", "bz2", "xz", "zip", "tgz", "nested", "cut-gz", "zst"]))
    if wrap == "gz":
        return name + ".gz", gzip.compress(data)
    if wrap == "cut-gz":
        packed = gzip.compress(data)
        return name + ".gz", packed[:draw(st.integers(0, len(packed)))]
    if wrap == "bz2":
        return name + ".bz2", bz2.compress(data)
    if wrap == "xz":
        return name + ".xz", lzma.compress(data)
    if wrap == "zst":  # read, or skipped with its reason, depending on the Python and packages
        packed = _zstd(data)
        return (name + ".zst", packed) if packed is not None else (name, data)
    if wrap in ("zip", "tgz"):
        return f"bundle.{wrap}", _archive(wrap, name, data, None)
    if wrap == "nested":
        return "bundle.zip", _archive("zip", name, data, _archive("tgz", "deep/" + name, data, None))
    return name, data


@FUZZ
@given(hostile())
def test_no_hostile_input_stops_the_run_or_hides_the_planted_oom(case):
    name, data = case
    digest = hashlib.sha256(data).hexdigest()[:12]
    pending = _keep(f"running-{os.getpid()}-{digest}-{name}", data)  # stays behind if this example hangs
    start = time.monotonic()
    faulthandler.dump_traceback_later(SECONDS * 2, exit=True)  # a hang ends the run, with its stacks
    ended = False
    try:
        with tempfile.TemporaryDirectory() as tmp:
            (Path(tmp) / "rank3.log").write_bytes(OOM)
            (Path(tmp) / name).write_bytes(data)
            report = nccllens.analyze([tmp])
            assert any(f.category == "gpu_oom" and 3 in f.ranks for f in report.findings), \
                [(f.rule, f.ranks) for f in report.findings]
            for fmt in ("text", "json", "md", "html"):
                assert render(report, fmt)
        ended = True
    finally:
        faulthandler.cancel_dump_traceback_later()
        seconds = time.monotonic() - start
        if pending is not None:
            if not ended or seconds >= KEEP_SECONDS:
                pending.rename(pending.with_name(f"{'failed' if not ended else 'slow'}-{seconds:.0f}s-{digest}-{name}"))
            else:
                pending.unlink(missing_ok=True)
        peak = max(resource.getrusage(who).ru_maxrss for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN))
        if LOG:
            with open(LOG, "a") as out:
                out.write(f"{seconds:.2f} s {peak} KB {name} {len(data)} B {digest} {time.strftime('%H:%M:%S')}"
                          f"{'' if ended else ' FAILED'}\n")
    assert seconds < SECONDS, f"{name}: {seconds:.0f} s"
    assert peak < PEAK_KB, f"{name}: peak RSS {peak} KB"


def _keep(name: str, data: bytes) -> Path | None:
    if not KEEP:
        return None
    path = Path(KEEP) / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path
