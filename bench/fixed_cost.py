"""The fixed cost of ``nccllens analyze``: tiny logs, timed as a user runs them (issue 17, item 5).

    python bench/fixed_cost.py [--runs N] [--breakdown] [--before TREE]

Three logs, each alone in a folder: the first 126 bytes of a fixture's rank log (4 lines: a rank banner,
a shard line, two training steps; no finding), a 1.6 KB torchrun log whose worker was SIGKILLed (findings,
exit 1), and that log's one ``failed (exitcode: -9)`` line. Each run is the installed script (``nccllens``,
entry point ``nccllens.main:main``) or, without it on the PATH, ``python -m nccllens.main``, started in an
empty folder; wall and CPU seconds (user + system) are medians of ``--runs`` runs, every command of a round
run once before the next round (a slow spell of a shared machine hits them all).

The package is byte-compiled first, as pip does for a regular install. This sandbox sets
PYTHONDONTWRITEBYTECODE, so a checkout used in place has no ``.pyc`` files of its own: the "no .pyc"
rows run a copy of ``nccllens/`` without ``__pycache__`` (first on PYTHONPATH) with the variable set, so
that every nccllens module is compiled from source on every run (polars and the standard library keep
their installed ``.pyc``). One run of each command precedes the timed ones, so that the caches a user's
second run finds (``rule_cache``, ``plan_cache``) exist. Two floors are timed in the same rounds:
``python -c pass`` (the interpreter) and ``python -c "import polars"``: no ``analyze`` can cost less than
the second, since the event table is a polars frame. With the compiled engine importable, the 4-line log
also runs on the plain path (``NCCLLENS_ENGINE=fallback``). ``--breakdown`` adds one ``python -X importtime``
run summed per top-level package (self times: what each package's own modules cost to import).
``--before TREE`` times another tree's package too (e.g. ``git archive BASE nccllens rules | tar -x -C
TREE``), byte-compiled and first on PYTHONPATH, in the same rounds: before/after figures of one sequence.
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
SMALL = ROOT / "fixtures" / "public" / "colossalai_chat_sft_local_rank3_sigkill" / "torchrun.log"
FAILED = "failed (exitcode: -9)"  # the line of SMALL that is the 1-line log


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env.update(extra)
    return env


def _script() -> list[str]:
    script = shutil.which("nccllens")
    return [script] if script else [sys.executable, "-m", "nccllens.main"]


def _timed(cmd: list[str], env: dict[str, str], cwd: Path) -> tuple[float, float]:
    """Wall and CPU seconds (user + system, with any process it waited for)."""
    t = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, cwd=cwd)
    _, _, usage = os.wait4(proc.pid, 0)
    return time.perf_counter() - t, usage.ru_utime + usage.ru_stime


def _package() -> Path | None:
    spec = importlib.util.find_spec("nccllens")
    return Path(spec.submodule_search_locations[0]) if spec and spec.submodule_search_locations else None


def byte_compile() -> None:
    package = _package()
    if package is not None:
        subprocess.run([sys.executable, "-m", "compileall", "-q", str(package)], check=False, env=_env())


def logs(folder: Path) -> dict[str, Path]:
    """The three tiny logs, each alone in a folder under ``folder``."""
    text = SMALL.read_bytes()
    line = next(x for x in text.splitlines(keepends=True) if FAILED.encode() in x)
    out = {}
    for name, data, file in (("4-line log", FIXTURE.read_bytes()[:HEAD], "rank0.log"),
                             (f"{len(text) / 1000:.1f} KB log", text, SMALL.name), ("1-line log", line, SMALL.name)):
        where = folder / name.replace(" ", "_")
        where.mkdir(parents=True, exist_ok=True)
        (where / file).write_bytes(data)
        out[name] = where
    return out


def commands(folder: Path, before: Path | None = None) -> dict[str, tuple[list[str], dict[str, str]]]:
    """Name → (command, environment): the logs as installed, without .pyc, before, and the floors."""
    found = logs(folder)
    out = {name: ([*_script(), "analyze", str(path)], _env()) for name, path in found.items()}
    if before is not None:
        subprocess.run([sys.executable, "-m", "compileall", "-q", str(before / "nccllens")], check=False, env=_env())
        for name, path in found.items():
            out[f"{name}, before"] = ([sys.executable, "-m", "nccllens.main", "analyze", str(path)],
                                      _env(PYTHONPATH=str(before)))
    if importlib.util.find_spec("hyperscan") is not None:
        out["4-line log, plain path"] = ([*_script(), "analyze", str(found["4-line log"])],
                                         _env(NCCLLENS_ENGINE="fallback"))
    package = _package()
    if package is not None:
        source = folder / "source"
        shutil.copytree(package, source / "nccllens", ignore=shutil.ignore_patterns("__pycache__"))
        raw = _env(PYTHONDONTWRITEBYTECODE="1", PYTHONPATH=str(source))
        for name, path in found.items():
            out[f"{name}, no .pyc"] = ([sys.executable, "-m", "nccllens.main", "analyze", str(path)], raw)
    out["floor: python -c pass"] = ([sys.executable, "-c", "pass"], _env())
    out["floor: import polars"] = ([sys.executable, "-c", "import polars"], _env())
    return out


def measure(runs: int = 9, before: Path | None = None) -> dict[str, tuple[float, float, list[float]]]:
    """Per command: (median wall s, median CPU s, every wall s)."""
    byte_compile()
    with tempfile.TemporaryDirectory() as tmp:
        cwd = Path(tmp) / "cwd"  # no configuration file, no checkout on sys.path
        cwd.mkdir()
        ways = commands(Path(tmp), before)
        for cmd, env in ways.values():
            _timed(cmd, env, cwd)  # the caches a user's second run finds
        got: dict[str, list[tuple[float, float]]] = {name: [] for name in ways}
        for _ in range(runs):  # interleaved: a slow spell of the machine hits every command
            for name, (cmd, env) in ways.items():
                got[name].append(_timed(cmd, env, cwd))
    return {name: (statistics.median(w for w, _ in rows), statistics.median(c for _, c in rows),
                   sorted(w for w, _ in rows)) for name, rows in got.items()}


def breakdown() -> list[tuple[str, float]]:
    """Import self time per top-level package (seconds), from one ``-X importtime`` run, largest first."""
    with tempfile.TemporaryDirectory() as tmp:
        folder = logs(Path(tmp))["4-line log"]
        cmd = [sys.executable, "-X", "importtime", "-m", "nccllens.main", "analyze", str(folder)]
        err = subprocess.run(cmd, capture_output=True, text=True, env=_env(), cwd=tmp).stderr
    per: collections.Counter[str] = collections.Counter()
    for line in err.splitlines():
        if not line.startswith("import time:") or "self [us]" in line:
            continue
        own, _, name = line[len("import time:"):].split("|")
        per[name.strip().split(".")[0]] += int(own) / 1e6
    return per.most_common()


def lines(results: dict[str, tuple[float, float, list[float]]], runs: int) -> list[str]:
    out = [f"Fixed cost (`python bench/fixed_cost.py`): `nccllens analyze` on tiny logs, medians of {runs} runs",
           "", "| command | wall s | CPU s | every wall s |", "|---|---:|---:|---|"]
    for name, (wall, cpu, walls) in results.items():
        out.append(f"| {name} | {wall:.3f} | {cpu:.3f} | {' '.join(f'{w:.2f}' for w in walls)} |")
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=9)
    ap.add_argument("--breakdown", action="store_true", help="import self time per top-level package")
    ap.add_argument("--before", type=Path, help="a tree holding another nccllens/ (and rules/) to time too")
    args = ap.parse_args()
    runs = max(1, args.runs)
    load = os.getloadavg()
    print("\n".join(lines(measure(runs, args.before.resolve() if args.before else None), runs)))
    if args.breakdown:
        parts = breakdown()
        print(f"\nImport self time per package (one -X importtime run; total {sum(s for _, s in parts):.3f} s):")
        for name, seconds in parts[:15]:
            print(f"  {seconds:7.3f} s  {name}")
    after = os.getloadavg()
    print(f"\nload average (1 min) {load[0]:.1f} before, {after[0]:.1f} after; {os.cpu_count()} CPUs; "
          f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}")


if __name__ == "__main__":
    main()
