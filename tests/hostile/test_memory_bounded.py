"""Memory grows with ranks and findings, not with lines or bytes (issue 19 §1): what reading one file keeps
from one block to the next is a row per dense group (family, process, key) with text of its own, never
the blocks already read. Before, each block's partial summary held polars string views into its block,
so one big file stayed in memory whole (1 GB of ordinary log peaked at 1.4 GB).

The lines are the four real NCCL COLL lines of a public report (NVIDIA/nccl#1193, in
``fixtures/public/ray_train_128rank_coll_opcount_allreduce_timeout``), repeated with their opCount
changed (synthetic: the number each later collective prints), as a job's COLL log grows.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from nccllens.extract import extract_source_tables
from nccllens.extract import source as source_mod
from nccllens.extract.plan import combined_prefilter
from nccllens.ingest import streams
from nccllens.ingest.sources import iter_sources

ROOT = Path(__file__).resolve().parents[2]
REAL = [ln for ln in (ROOT / "fixtures/public/ray_train_128rank_coll_opcount_allreduce_timeout/ray_workers.log")
        .read_text().splitlines() if ": opCount 139" in ln]


def _coll_log(path: Path, size: int) -> Path:
    """About ``size`` bytes of the real COLL lines, each printed again with a later opCount."""
    lines, total, i = [], 0, 0
    while total < size:
        line = REAL[i % len(REAL)]
        op = line.split(": opCount ")[1].split(" ")[0]
        lines.append(line.replace(f": opCount {op} ", f": opCount {i + 0x139d:x} "))
        total += len(lines[-1]) + 1
        i += 1
    path.write_text("\n".join(lines) + "\n")
    return path


def test_the_lines_are_real_coll_lines():
    assert len(REAL) == 4 and all("NCCL INFO AllReduce: opCount" in ln for ln in REAL)


def test_what_is_held_between_blocks_does_not_grow_with_the_file(tmp_path, monkeypatch):
    """4x the lines (and blocks): the same number of summary rows held between blocks; the count grows 4x."""
    monkeypatch.setattr(streams, "BLOCK", 64 << 10)  # many blocks from a small file
    held: list[int] = []  # at each merge: the partial summary rows it is given, all held until then
    blocks = [0]
    real_merge, real_parse = source_mod.merge, source_mod.parse_block

    def merging(partials, *args, **kwargs):
        held.append(sum(p.height for p in partials))
        return real_merge(partials, *args, **kwargs)

    def parsing(*args, **kwargs):
        blocks[0] += 1
        return real_parse(*args, **kwargs)

    monkeypatch.setattr(source_mod, "merge", merging)
    monkeypatch.setattr(source_mod, "parse_block", parsing)
    seen = {}
    for n in (1, 4):
        held.clear()
        blocks[0] = 0
        path = _coll_log(tmp_path / f"rank0_{n}.log", n * (512 << 10))
        _, info, summary = extract_source_tables(next(iter_sources([str(path)])), combined_prefilter(None))
        coll = summary.filter(summary["family"].cast(str) == "nccl.coll")
        seen[n] = (max(held), blocks[0], info.lines, coll)
    (held1, blocks1, lines1, coll1), (held4, blocks4, lines4, coll4) = seen[1], seen[4]
    assert blocks4 > 3.5 * blocks1 and lines4 > 3.9 * lines1  # the file really grew, block by block
    assert held4 == held1  # rows held: one per group, however many blocks went by
    assert coll1.height and coll4.height == coll1.height  # one summary row per process and communicator
    assert coll4["count"].sum() == lines4 and coll1["count"].sum() == lines1  # and every line counted


WORKER = """
import json, sys
from nccllens.ingest import streams
streams.BLOCK = 1 << 20
from nccllens.extract import extract
extract([sys.argv[2]], workers=0)  # imports, rules and the plan (cached or not): not what is measured
with open("/proc/self/clear_refs", "w") as out:
    out.write("5")  # the peak RSS (VmHWM) starts again from the current RSS
events, infos = extract([sys.argv[1]], workers=0)
peak = next(int(ln.split()[1]) for ln in open("/proc/self/status") if ln.startswith("VmHWM:"))
print(json.dumps([peak, infos[0].lines]))
"""


def _peak_kb(path: Path, warm_up: Path) -> tuple[int, int]:
    out = subprocess.run([sys.executable, "-c", WORKER, str(path), str(warm_up)], cwd=ROOT, capture_output=True,
                         text=True, check=True)
    return tuple(json.loads(out.stdout.strip().splitlines()[-1]))


def _can_reset_peak() -> bool:
    try:
        with open("/proc/self/clear_refs", "w") as out:
            out.write("5")
        return True
    except OSError:
        return False


@pytest.mark.skipif(not sys.platform.startswith("linux") or not _can_reset_peak(),
                    reason="needs Linux's resettable peak RSS (/proc/self/clear_refs)")
def test_peak_memory_does_not_grow_with_the_bytes_of_one_file(tmp_path):
    """16 MB and 64 MB of one file, read in 1 MiB blocks, each in a fresh process after a warm-up: the peak
    RSS of the reading grows by less than a quarter of the added bytes (by more than all of them when the
    blocks stayed alive)."""
    warm_up = _coll_log(tmp_path / "warm.log", 64 << 10)
    small, big = _coll_log(tmp_path / "small.log", 16 << 20), _coll_log(tmp_path / "big.log", 64 << 20)
    (peak_small, lines_small), (peak_big, lines_big) = _peak_kb(small, warm_up), _peak_kb(big, warm_up)
    assert lines_big > 3.9 * lines_small
    added_kb = (big.stat().st_size - small.stat().st_size) >> 10
    assert peak_big - peak_small < added_kb / 4, (peak_small, peak_big, added_kb)
