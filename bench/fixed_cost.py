"""The fixed cost of ``nccllens analyze``: a 4-line log, timed as a user runs it (issue 17, item 5).

    python bench/fixed_cost.py [--runs N] [--breakdown]

The log is the first 126 bytes of a fixture's rank log (4 lines: a rank banner, a shard line, two
training steps). The package is byte-compiled first, as pip does for a regular install (this sandbox
sets PYTHONDONTWRITEBYTECODE, which the runs here unset), and one run is made before the timed ones,
so that the caches a user's second run finds (``plan_cache``, ``rule_cache``) exist. Each run is the
installed script (``nccllens``, entry point ``nccllens.main:main``) or, without it on the PATH,
``python -m nccllens.main``; wall and CPU seconds (user + system) are medians of ``--runs`` runs. With the
compiled engine importable, the plain path (``NCCLLENS_ENGINE=fallback``) is timed too, interleaved.
``--breakdown`` adds one ``python -X importtime`` run summed per top-level package (self times: what
each package's own modules cost to import, however they were reached).
"""

from __future__ import annotations

import argparse
import collections
import importlib.util
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FIXTURE = (ROOT / "fixtures" / "public" / "single_node_restart_after_sigkill_fails" / "node-a" / "logs"
           / "none_tyzbpcon" / "attempt_0" / "0" / "stdout.log")
HEAD = 126  # bytes: four whole lines


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env.update(extra)
    return env


def _command(folder: Path) -> list[str]:
    script = shutil.which("nccllens")
    head = [script] if script else [sys.executable, "-m", "nccllens.main"]
    return [*head, "analyze", str(folder)]


def _timed(cmd: list[str], env: dict[str, str]) -> tuple[float, float]:
    """Wall and CPU seconds (user + system, with any process it waited for)."""
    t = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    _, _, usage = os.wait4(proc.pid, 0)
    return time.perf_counter() - t, usage.ru_utime + usage.ru_stime


def byte_compile() -> None:
    spec = importlib.util.find_spec("nccllens")
    if spec is not None and spec.submodule_search_locations:
        subprocess.run([sys.executable, "-m", "compileall", "-q", *spec.submodule_search_locations], check=False,
                       env=_env())


def tiny_log(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "rank0.log").write_bytes(FIXTURE.read_bytes()[:HEAD])
    return folder


def variants() -> dict[str, dict[str, str]]:
    """The ways to time: as installed, and the plain path too when the compiled engine is importable."""
    out = {"default": _env()}
    if importlib.util.find_spec("hyperscan") is not None:
        out = {"engine": _env(), "fallback": _env(NCCLLENS_ENGINE="fallback")}
    return out


def measure(runs: int = 7) -> dict[str, tuple[float, float, list[float]]]:
    """Per variant: (median wall s, median CPU s, every wall s)."""
    byte_compile()
    with tempfile.TemporaryDirectory() as tmp:
        cmd = _command(tiny_log(Path(tmp) / "tiny"))
        ways = variants()
        for env in ways.values():
            _timed(cmd, env)  # the caches a user's second run finds
        got: dict[str, list[tuple[float, float]]] = {name: [] for name in ways}
        for _ in range(runs):  # interleaved: a slow spell of the machine hits every variant
            for name, env in ways.items():
                got[name].append(_timed(cmd, env))
    return {name: (statistics.median(w for w, _ in rows), statistics.median(c for _, c in rows),
                   sorted(w for w, _ in rows)) for name, rows in got.items()}


def breakdown() -> list[tuple[str, float]]:
    """Import self time per top-level package (seconds), from one ``-X importtime`` run, largest first."""
    with tempfile.TemporaryDirectory() as tmp:
        cmd = [sys.executable, "-X", "importtime", "-m", "nccllens.main", "analyze", str(tiny_log(Path(tmp) / "t"))]
        err = subprocess.run(cmd, capture_output=True, text=True, env=_env()).stderr
    per: collections.Counter[str] = collections.Counter()
    for line in err.splitlines():
        if not line.startswith("import time:") or "self [us]" in line:
            continue
        own, _, name = line[len("import time:"):].split("|")
        per[name.strip().split(".")[0]] += int(own) / 1e6
    return per.most_common()


def lines(results: dict[str, tuple[float, float, list[float]]], runs: int) -> list[str]:
    out = [f"Fixed cost (`python bench/fixed_cost.py`): `nccllens analyze` on a 4-line log, medians of {runs} runs"]
    for name, (wall, cpu, walls) in results.items():
        out.append(f"- {name}: wall {wall:.2f} s, CPU {cpu:.2f} s (walls {' '.join(f'{w:.2f}' for w in walls)})")
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--breakdown", action="store_true", help="import self time per top-level package")
    args = ap.parse_args()
    runs = max(1, args.runs)
    print("\n".join(lines(measure(runs), runs)))
    if args.breakdown:
        parts = breakdown()
        print(f"Import self time per package (one -X importtime run; total {sum(s for _, s in parts):.3f} s):")
        for name, seconds in parts[:15]:
            print(f"  {seconds:7.3f} s  {name}")
    print(f"load average: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
