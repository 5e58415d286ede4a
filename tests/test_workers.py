"""``nccllens analyze`` forks its workers first thing, before polars loads (nccllens.extract.workers)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import nccllens
from nccllens import allocator
from nccllens.extract import workers
from nccllens.report import render

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
import synth  # noqa: E402

linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="workers are forked on Linux only")


def test_big_enough_counts_files_and_bytes(tmp_path, monkeypatch):
    (tmp_path / "a").mkdir()
    for i in range(3):
        (tmp_path / "a" / f"{i}.log").write_text("x" * 100)
    single = tmp_path / "one.log"
    single.write_text("y" * 500)
    assert not workers.big_enough([str(tmp_path)])
    monkeypatch.setattr(workers, "PARALLEL_MIN_FILES", 4)
    assert not workers.big_enough([str(tmp_path / "a")])
    assert workers.big_enough([str(tmp_path / "a"), str(single)])
    monkeypatch.setattr(workers, "PARALLEL_MIN_BYTES", 500)
    assert not workers.big_enough([str(single)])  # one file is one job: nothing to share out
    assert workers.big_enough([str(single), str(tmp_path / "a" / "0.log")])
    assert not workers.big_enough(["-", str(tmp_path / "missing")])


FORK = """
import json, os, sys
from nccllens import allocator
from nccllens.extract import workers
allocator.for_main_process()
workers.PARALLEL_MIN_FILES = 1
workers.start_early([sys.argv[1]])
pool = workers.take_early()
seen = pool.submit(os.getenv, allocator.VARIABLE).result() if pool else None
print(json.dumps({"pool": pool is not None, "method": pool._mp_context.get_start_method() if pool else None,
                  "polars_loaded": "polars" in sys.modules, "worker_setting": seen,
                  "main_setting": os.environ.get(allocator.VARIABLE)}))
if pool:
    pool.shutdown()
"""


@linux_only
def test_workers_are_forked_before_polars_with_their_own_allocator_setting(tmp_path):
    (tmp_path / "x.log").write_text("hello\n")
    env = {k: v for k, v in os.environ.items() if k not in (allocator.VARIABLE, allocator.ROLE)}
    out = subprocess.run([sys.executable, "-c", FORK, str(tmp_path)], env=env, capture_output=True, text=True,
                         check=True, timeout=120)
    seen = json.loads(out.stdout)
    # a worker has loaded polars, which puts its own defaults before the setting it found (the last wins)
    assert seen.pop("worker_setting").endswith(allocator.WORKERS)
    assert seen == {"pool": True, "method": "fork", "polars_loaded": False, "main_setting": allocator.MAIN}


def test_no_early_workers_once_polars_is_loaded(tmp_path, monkeypatch):
    import polars  # noqa: F401 - forking a process that runs polars' threads is unsafe

    monkeypatch.setattr(workers, "PARALLEL_MIN_FILES", 1)
    (tmp_path / "x.log").write_text("hello\n")
    workers.start_early([str(tmp_path)])
    pool = workers.take_early()
    if pool is not None:
        pool.shutdown()
    assert pool is None


@linux_only
def test_the_cli_with_forked_workers_reports_what_the_library_does(tmp_path):
    job = synth.write_job(tmp_path / "job", 2048, 256, "xid79", total_bytes=2048 * 400)
    assert sum(1 for p in job.rglob("*") if p.is_file()) >= workers.PARALLEL_MIN_FILES
    out = subprocess.run([sys.executable, "-m", "nccllens.cli", "analyze", str(job), "--format", "json",
                          "--exit-zero"], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout == render(nccllens.analyze([str(job)]), "json")
    assert json.loads(out.stdout)["verdict"]["category"] == "gpu_hardware"
