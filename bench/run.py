"""Benchmark: nccllens analyze vs ripgrep with nccllens' own prefilter patterns.

    python bench/run.py [--quick | --small | --only NAME...] [--repeat N]

Builds the corpora under bench/corpus/ when absent (synthetic, bench/synth.py), then measures
wall time, CPU seconds (user + system, the workers included), MB/s and peak RSS of
``nccllens analyze --format json`` on each, ``rg -c -f`` (wall and CPU) with the
same prefilter patterns as the grep reference, the per-file overhead (the same bytes as 8 large
files vs 4,096 small ones), the fixed cost on tiny logs (``bench/fixed_cost.py``), and whether the
injected fault is the top finding. Each command runs
``--repeat`` times (3), interleaved with the one it is compared with, and the median is reported: on a
shared machine one run of the same command varies by ±20%. Prints a table and writes
bench/results.md with the machine's description (``--small``: bench/results-small.md). ``--only`` runs
the named corpora alone (of ``CORPORA``, ``SMALL``, ``split_4096``: the benchmark corpus's 256 MiB as
4,096 files, with ``rg`` and CPU seconds like the others, or ``REAL``: a real NCCL log's bytes copied into
many rank files) and writes bench/results-only.md.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import fixed_cost  # noqa: E402
import synth  # noqa: E402

CORPORA = {  # name: (ranks, hosts, fault, bytes[, mode])
    "1g_512r": (512, 64, "xid79", 1 << 30),
    "1g_512r_coll": (512, 64, "opcount_behind", 1 << 30, "coll"),
    "1g_512r_transport": (512, 64, "xid79", 1 << 30, "transport"),
    "10g_4096r": (4096, 512, "host_oom", 10 << 30),
    # a control: the ranks of the 10 GiB corpus in the bytes of the 1 GiB one, which tells memory that
    # follows the bytes from memory that follows the ranks (the event table)
    "1g_4096r": (4096, 512, "host_oom", 1 << 30),
}
QUICK = {"100m_64r": (64, 8, "xid79", 100 << 20)}
# what a 2-core machine shared with others can run in minutes: the benchmark's corpus and both dense modes
# (bench/synth_dense.py: COLL lines on three communicators with one rank silently an opCount behind;
# channel storms from many communicator inits), each with ~15% training progress lines
SMALL = {"256m_512r": (512, 64, "xid79", 256 << 20),
         "256m_512r_coll": (512, 64, "opcount_behind", 256 << 20, "coll"),
         "256m_512r_transport": (512, 64, "xid79", 256 << 20, "transport")}

# a line mix nobody here designed: a real NCCL 2.28.9 COLL-subsystem log (a healthy 3,000-step single-GPU
# run on an H100, fixtures/public/gpu_h100_healthy_dense_coll_opcount, 2.7 MB), its bytes copied into
# ``copies`` rank files of ``per_node`` per node folder. Every copy is the same real run, so the report
# must say the job finished (verdict none); it measures speed on real lines, not a fault
REAL = {"real_coll_h100": (HERE.parent / "fixtures/public/gpu_h100_healthy_dense_coll_opcount/console.log.gz", 96, 8)}


def _du(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def _build(name: str, spec: tuple) -> Path:
    out = HERE / "corpus" / name
    if not (out / "expected.toml").exists():
        shutil.rmtree(out, ignore_errors=True)
        print(f"building {name} ...", file=sys.stderr)
        ranks, hosts, fault, size, *mode = spec
        synth.write_job(out, ranks, hosts, fault, size, mode=mode[0] if mode else "sparse")
    return out


def _build_real(name: str) -> Path:
    source, copies, per_node = REAL[name]
    out = HERE / "corpus" / name
    if not (out / "expected.toml").exists():
        shutil.rmtree(out, ignore_errors=True)
        print(f"building {name} ...", file=sys.stderr)
        data = gzip.decompress(source.read_bytes())
        for i in range(copies):
            node = out / f"node{i // per_node:02d}"
            node.mkdir(parents=True, exist_ok=True)
            (node / f"rank{i}.log").write_bytes(data)
        (out / "expected.toml").write_text('category = "none"\n')
    return out


def _timed(cmd: list[str], stdout=subprocess.PIPE) -> tuple[float, int, subprocess.CompletedProcess, float]:
    """Wall time, peak RSS in KiB (of the command and the processes it waited for: wait4's own figure
    for this child, not a maximum over every child the benchmark ran so far), the result, and the CPU
    seconds (user + system) of the command and the processes it waited for."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        t = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=out if stdout is subprocess.PIPE else stdout, stderr=err)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        text = out.read().decode("utf-8", "replace") if stdout is subprocess.PIPE else None
        done = subprocess.CompletedProcess(cmd, proc.returncode, text, err.read().decode("utf-8", "replace"))
    return wall, usage.ru_maxrss, done, usage.ru_utime + usage.ru_stime


def _patterns_file() -> Path:
    from nccllens.analysis import Options, load_rules
    from nccllens.parse import load_families
    from nccllens.regex_groups import unanchor

    # the same patterns nccllens' prefilter runs (unanchored, as nccllens runs them on raw lines)
    pats = [unanchor(f.prefilter) for f in load_families()]
    pats += [unanchor(r.match.pattern) for r in load_rules(Options()) if r.match.pattern]
    # ripgrep's regex syntax does not accept escapes of non-meta punctuation such as \" (polars' does)
    meta = set("\\.+*?()|[]{}^$#&-~")
    pats = [re.sub(r"\\(.)", lambda m: m[0] if (m[1].isalnum() or m[1] in meta) else m[1], p) for p in pats]
    path = HERE / "out" / "patterns.txt"
    path.parent.mkdir(exist_ok=True)
    path.write_text("\n".join(pats) + "\n")
    return path


def _warm(corpus: Path) -> None:
    """Read every file once so both tools are timed on a warm page cache (the corpus was just written,
    and writing the 10 GiB one evicts the other)."""
    for p in sorted(corpus.rglob("*")):
        if p.is_file():
            with open(p, "rb") as fh:
                while fh.read(16 << 20):
                    pass


def _analyze(corpus: Path) -> dict:
    # the installed script's entry point (nccllens.main), as `nccllens analyze` runs it
    load = os.getloadavg()[0]  # the machine is shared: how busy it was when this run started
    wall, peak, proc, cpu = _timed([sys.executable, "-m", "nccllens.main", "analyze", str(corpus), "--format",
                                    "json", "--exit-zero"])
    size = _du(corpus)
    report = json.loads(proc.stdout) if proc.returncode == 0 else {}
    top = (report.get("findings") or [{}])[0]
    exp = corpus / "expected.toml"  # a split corpus has none: no fault was injected into it
    ok = f'category = "{report.get("verdict", {}).get("category")}"' in exp.read_text() if exp.exists() else None
    return {"wall": wall, "cpu": cpu, "mbps": size / wall / 1e6, "rss_mib": peak / 1024, "bytes": size,
            "top": f'{top.get("category")} {top.get("hosts")} {top.get("ranks", [])[:4]}', "correct": ok, "load": load,
            "error": proc.stderr[-300:] if proc.returncode else ""}


def _rg(corpus: Path, patterns: Path) -> tuple[float, float] | None:
    """Wall and CPU seconds of ``rg -c -f`` (None without rg)."""
    if not shutil.which("rg"):
        return None
    wall, _, _, cpu = _timed(["rg", "-c", "-f", str(patterns), str(corpus)], stdout=subprocess.DEVNULL)
    return wall, cpu


def _split(corpus: Path, count: int) -> Path:
    """The first 256 MiB of ``corpus``'s NCCL logs cut into ``count`` files (built when absent, in a child
    process: a child's peak RSS, as ``wait4`` reports it, starts from its parent's peak at the fork, and
    this one holds the 256 MiB at once)."""
    d = HERE / "corpus" / f"split_{count}"
    if not d.exists():
        subprocess.run([sys.executable, "-c", f"import run; run._write_split({str(corpus)!r}, {count})"], cwd=HERE,
                       check=True)
    return d


def _write_split(corpus: str, count: int) -> None:
    d = HERE / "corpus" / f"split_{count}"
    if not d.exists():
        files = sorted(Path(corpus).rglob("nccl.*.log"))
        data = b"".join(p.read_bytes() for p in files)[: 256 << 20]
        data = data[: data.rfind(b"\n") + 1]
        d.mkdir(parents=True)
        step = len(data) // count
        start = 0
        for i in range(count):
            end = len(data) if i == count - 1 else data.rfind(b"\n", start, start + step) + 1 or start + step
            (d / f"part{i:05d}.log").write_bytes(data[start:end])
            start = end


def _small_vs_large(corpus: Path, repeat: int) -> tuple[float, float]:
    """The same bytes as 8 large files and as 4,096 small files (median of ``repeat`` runs each)."""
    walls: dict[int, list[float]] = {8: [], 4096: []}
    for count in walls:
        _split(corpus, count)
    for _ in range(repeat):  # interleaved, so that a slow spell of the machine hits both
        for count, runs in walls.items():
            d = HERE / "corpus" / f"split_{count}"
            runs.append(_timed([sys.executable, "-m", "nccllens.main", "analyze", str(d), "--format", "json",
                                "--exit-zero"])[0])
    return statistics.median(walls[8]), statistics.median(walls[4096])


def _byte_compile() -> None:
    """Byte-compile the package first, as pip does for a regular install: an editable install under
    PYTHONDONTWRITEBYTECODE=1 (this sandbox sets it) compiles every module from source again in every
    process of every run (~0.3 s of a 3 s run on 1 GiB), which a user's installed nccllens does not."""
    import importlib.util

    spec = importlib.util.find_spec("nccllens")
    if spec is not None and spec.submodule_search_locations:
        subprocess.run([sys.executable, "-m", "compileall", "-q", *spec.submodule_search_locations], check=False)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="one 100 MB corpus instead of 1 GiB and 10 GiB")
    ap.add_argument("--small", action="store_true", help="256 MiB corpora: the benchmark's and both dense modes")
    ap.add_argument("--only", nargs="+", metavar="NAME", help="these corpora alone (of CORPORA, SMALL, split_4096, REAL)")
    ap.add_argument("--repeat", type=int, default=3, help="runs of each command; the table shows the median")
    args = ap.parse_args()
    repeat = max(1, args.repeat)
    known = {**CORPORA, **SMALL, "split_4096": None, **{n: "real" for n in REAL}}
    corpora = {n: known[n] for n in args.only} if args.only else QUICK if args.quick else SMALL if args.small \
        else CORPORA
    _byte_compile()
    patterns = _patterns_file()
    rows = []
    for name, spec in corpora.items():
        corpus = (_split(_build("256m_512r", SMALL["256m_512r"]), 4096) if spec is None
                  else _build_real(name) if spec == "real" else _build(name, spec))
        _warm(corpus)
        runs, rgs = [], []
        for _ in range(repeat):  # interleaved, so that a slow spell of the machine hits both tools
            runs.append(_analyze(corpus))
            rgs.append(_rg(corpus, patterns))
        res = sorted(runs, key=lambda r: r["wall"])[len(runs) // 2]  # the median run
        res["rss_mib"] = max(r["rss_mib"] for r in runs)  # the highest peak of any run
        res["correct"] = None if any(r["correct"] is None for r in runs) else all(r["correct"] for r in runs)
        res["walls"] = [r["wall"] for r in runs]
        res["loads"] = [r["load"] for r in runs]
        res["cpu"] = statistics.median(r["cpu"] for r in runs)
        rg = statistics.median(w for w, _ in rgs) if all(rgs) else None
        res["rg"] = rg
        res["rg_cpu"] = statistics.median(c for _, c in rgs) if all(rgs) else None
        res["ratio"] = (rg / res["wall"]) if rg else None
        res["cpu_ratio"] = (res["rg_cpu"] / res["cpu"]) if rg else None
        rows.append((name, res))
    if not args.only:
        large, small = _small_vs_large(_build(*next(iter(corpora.items()))), repeat)
        fixed = fixed_cost.measure(7)
    lines = [
        "# Benchmark results", "",
        f"Machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
        f"{platform.platform()}; ripgrep: {shutil.which('rg') or 'absent'}; "
        f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}", "",
        f"Each command ran {repeat} times, interleaved with the other: wall times are medians (every nccllens "
        "run in the last column), peak RSS the highest of the runs. nccllens keeps its prefilter plan in a "
        "cache after its first run ever (README); runs before the table was written had made it. The "
        "package was byte-compiled first (`python -m compileall`), as a regular pip install does. The machine "
        "may be shared: the last column gives the 1-minute load average as each nccllens run started; compare "
        "the ratios to rg (same sequence), not seconds across tables.", "",
        "| corpus | bytes | nccllens wall s | CPU s | MB/s | peak RSS MiB | rg -c -f wall s | rg CPU s | rg/nccllens "
        "wall | rg/nccllens CPU | top finding | correct | nccllens runs s | load avg |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---|---|---|",
    ]
    for name, r in rows:
        rg = f"{r['rg']:.2f}" if r["rg"] else "n/a"
        rg_cpu = f"{r['rg_cpu']:.2f}" if r["rg"] else "n/a"
        ratio = f"{r['ratio']:.2f}" if r["ratio"] else "n/a"
        cpu_ratio = f"{r['cpu_ratio']:.2f}" if r["cpu_ratio"] else "n/a"
        correct = "n/a (no fault)" if r["correct"] is None else r["correct"]
        lines.append(f"| {name} | {r['bytes']:,} | {r['wall']:.2f} | {r['cpu']:.2f} | {r['mbps']:.0f} | "
                     f"{r['rss_mib']:.0f} | {rg} | {rg_cpu} | {ratio} | {cpu_ratio} | {r['top']} | {correct} | "
                     f"{' '.join(f'{w:.2f}' for w in r['walls'])} | {' '.join(f'{x:.1f}' for x in r['loads'])} |")
    if not args.only:
        lines += ["", f"Same 256 MiB as 8 files: {large:.2f} s; as 4,096 files: {small:.2f} s "
                  f"(ratio {small / large:.2f}; medians of {repeat} runs)", "", *fixed_cost.lines(fixed, 7)]
    text = "\n".join([*lines, ""])
    print(text)
    if not args.quick:
        name = "results-only.md" if args.only else "results-small.md" if args.small else "results.md"
        (HERE / name).write_text(text)


if __name__ == "__main__":
    main()
