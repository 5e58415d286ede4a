"""Engine against plain path against ``rg -c -f``, in the same sequence, on the small corpora.

    python bench/engines.py [--repeat N] [--before PATH [--before-path engine]]

For each corpus of ``run.SMALL`` (built when absent): ``nccllens analyze`` with the compiled engine,
with ``NCCLLENS_ENGINE=fallback``, optionally the tree at ``--before`` (a checkout, run with this
interpreter) and ``rg -c -f`` with the prefilter patterns, interleaved ``--repeat`` times (3). Prints
median wall and CPU seconds (user + system, workers included), peak RSS, the rg/nccllens ratios, and
whether each run's top finding is the injected fault.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import run  # noqa: E402


def _nccllens(corpus: Path, env: dict, tree: Path) -> dict:
    cmd = [sys.executable, "-m", "nccllens.main", "analyze", str(corpus), "--format", "json", "--exit-zero"]
    old, here = dict(os.environ), os.getcwd()
    os.environ.update(env)
    os.environ["PYTHONPATH"] = str(tree)
    os.chdir(tree)  # ``python -m`` imports from the current folder first
    try:
        wall, peak, proc, cpu = run._timed(cmd)
    finally:
        os.chdir(here)
        os.environ.clear()
        os.environ.update(old)
    report = json.loads(proc.stdout) if proc.returncode == 0 else {}
    exp = (corpus / "expected.toml").read_text()
    ok = f'category = "{report.get("verdict", {}).get("category")}"' in exp
    return {"wall": wall, "cpu": cpu, "rss": peak / 1024, "ok": ok, "err": proc.stderr[-300:]}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--before", type=Path, help="another checkout of nccllens to time beside this one")
    ap.add_argument("--only", nargs="*", help="corpus names of run.SMALL")
    ap.add_argument("--tree", type=Path, default=HERE.parent, help="the checkout timed as engine and fallback")
    ap.add_argument("--before-path", choices=("fallback", "engine"), default="fallback",
                    help="how the --before tree runs: the plain path (a tree older than the engine) or its default")
    args = ap.parse_args()
    run._byte_compile()
    patterns = run._patterns_file()
    variants = {"engine": ({}, args.tree), "fallback": ({"NCCLLENS_ENGINE": "fallback"}, args.tree)}
    if args.before:
        variants["before"] = ({"NCCLLENS_ENGINE": "fallback"} if args.before_path == "fallback" else {}, args.before)
    print("| corpus | variant | wall s | CPU s | peak RSS MiB | rg wall s | rg CPU s | rg/nccllens wall | "
          "rg/nccllens CPU | correct |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---|")
    for name, spec in run.SMALL.items():
        if args.only and name not in args.only:
            continue
        corpus = run._build(name, spec).resolve()
        run._warm(corpus)
        runs: dict[str, list[dict]] = {v: [] for v in variants}
        rgs = []
        for _ in range(max(1, args.repeat)):
            for v, (env, tree) in variants.items():
                runs[v].append(_nccllens(corpus, env, tree))
            rgs.append(run._rg(corpus, patterns))
        rg_wall = statistics.median(w for w, _ in rgs)
        rg_cpu = statistics.median(c for _, c in rgs)
        for v, rs in runs.items():
            wall = statistics.median(r["wall"] for r in rs)
            cpu = statistics.median(r["cpu"] for r in rs)
            print(f"| {name} | {v} | {wall:.2f} | {cpu:.2f} | {max(r['rss'] for r in rs):.0f} | {rg_wall:.2f} | "
                  f"{rg_cpu:.2f} | {rg_wall / wall:.2f} | {rg_cpu / cpu:.2f} | {all(r['ok'] for r in rs)} |",
                  flush=True)
            for r in rs:
                if r["err"]:
                    print("   error:", r["err"], file=sys.stderr)


if __name__ == "__main__":
    main()
