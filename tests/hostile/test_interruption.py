"""Clean interruption (issue 19): SIGTERM/SIGHUP end the run and its workers, workers die with a
SIGKILLed parent, outputs appear only once complete."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from nccllens.interrupts import atomic_output

ROOT = Path(__file__).resolve().parents[2]
POOL = """
import sys, time
from nccllens import interrupts
from nccllens.extract import workers
interrupts.install()
pool = workers._pool(2, "fork")
pool.submit(time.sleep, 0).result()
print(" ".join(str(p) for p in pool._processes), flush=True)
time.sleep(120)
"""


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except FileNotFoundError:
        return False


def _workers_of(signum: int) -> tuple[int | None, list[int]]:
    proc = subprocess.Popen([sys.executable, "-c", POOL], stdout=subprocess.PIPE, text=True, cwd=ROOT,
                            start_new_session=True)
    pids = [int(p) for p in proc.stdout.readline().split()]
    assert len(pids) == 2 and all(_alive(p) for p in pids)
    os.kill(proc.pid, signum)
    code = proc.wait(timeout=30)
    deadline = time.monotonic() + 20
    while any(_alive(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.1)
    return code, [p for p in pids if _alive(p)]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="parent-death signal and /proc: Linux")
@pytest.mark.parametrize("signum,code", [(signal.SIGTERM, 143), (signal.SIGHUP, 129), (signal.SIGKILL, -9)])
def test_workers_end_with_the_run_whatever_ends_it(signum, code):
    returned, left = _workers_of(signum)
    assert returned == code
    assert left == []  # before: both workers (~155 MB each) kept running for ever


def test_an_output_appears_only_once_complete(tmp_path):
    out = tmp_path / "report.json"
    with pytest.raises(RuntimeError), atomic_output(out) as tmp:
        tmp.write_text("{ half")
        raise RuntimeError("interrupted")
    assert list(tmp_path.iterdir()) == []
    with atomic_output(out) as tmp:
        tmp.write_text("{}")
        assert not out.exists()
    assert out.read_text() == "{}" and len(list(tmp_path.iterdir())) == 1
    assert out.stat().st_mode & 0o777 == 0o666 & ~_umask()


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
