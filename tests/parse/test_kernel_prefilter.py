"""kernel family: PREFILTER selectivity (it runs on every line of every file) and robustness (hypothesis)."""

from __future__ import annotations

from pathlib import Path

import polars as pl
from hypothesis import given, settings
from hypothesis import strategies as st
from test_nccl_prefilter import INIT_BLOCK, PER_OP  # real healthy NCCL lines

from nccllens.parse import kernel
from nccllens.parse.base import FileContext, Line

PROJECT = str(Path(__file__).resolve().parents[2])  # the checkout, wherever it was cloned
SHARED = str(Path(__file__).resolve().parents[3] / "shared")  # ../shared beside it

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "public"
SAMPLES = Path(f"{SHARED}/reference/samples/torch2.13_cpu_logs")

# Lines of the kernel fixtures that carry no forensic fact (task tables, cgroup stats, AER detail rows).
NOISE = [
    "[Thu Dec  7 00:05:15 2017] [ pid ]   uid  tgid total_vm      rss nr_ptes swapents oom_score_adj name",
    "[Thu Dec  7 00:05:15 2017] [28438]     0 28438  5063909   119961    1661   136409          -998 java",
    "[Thu Dec  7 00:13:22 2017] CPU: 9 PID: 14881 Comm: java Tainted: G    B          ------------ T "
    "3.10.0-327.4.5.el7.x86_64 #1",
    "[  +0.000003] pcieport 0000:00:03.0:   device [8086:6f08] error status/mask=00001000/00002000",
    "2024-04-29T14:55:41,678661+02:00  oom_kill_process.cold.33+0xb/0x10",
]


def kept(lines: list[str]) -> list[bool]:
    return pl.Series(lines, dtype=pl.String).str.contains(kernel.PREFILTER).to_list()


def test_prefilter_ignores_nccl_torch_and_kernel_noise():
    torch_lines = []
    if SAMPLES.is_dir():
        for path in sorted(SAMPLES.glob("*.log")):
            torch_lines += path.read_text(encoding="utf-8", errors="replace").split("\n")
    lines = INIT_BLOCK + PER_OP + NOISE + torch_lines
    assert not any(kept(lines)), [s for s, k in zip(lines, kept(lines), strict=True) if k]


def test_prefilter_keeps_every_fixture_event():
    for path in sorted((FIXTURES / "kernel_gpu").glob("*.log")) + sorted((FIXTURES / "kernel_host").glob("*.log")):
        texts = path.read_text(encoding="utf-8").split("\n")
        lines = [Line(file="k.log", line=i + 1, raw=s, message=s) for i, s in enumerate(texts)]
        parsed = {e["line"] for e in kernel.parse(lines, FileContext(path="k.log", year=2026))}
        survivors = {i + 1 for i, k in enumerate(kept(texts)) if k}
        assert parsed and parsed <= survivors, path.name


_FRAGMENTS = st.sampled_from(
    ["NVRM: Xid (PCI:", "0000:3b:00", "): ", "79", ", pid=", "'<unknown>'", ", name=", "GPU-I:", "[ 12.5] ",
     "[Sun Jan  5 18:28:55 2025] ", "Nov 22 03:12:05 host kernel: ", "6,1,2,-;", "kern  :warn  : ",
     "2025-01-21T08:41:30,287197+00:00 ", "Killed process ", "(python)", "oom-kill:constraint=", "segfault at ",
     "blocked for more than ", "seconds", "fallen off the bus", "SXid (PCI:", "AER: ", "Link down", "\x00", "é",
     "99999999999999999999999", " "])


@settings(max_examples=300, deadline=None)
@given(st.one_of(st.text(max_size=200), st.lists(_FRAGMENTS, max_size=25).map("".join)))
def test_parse_never_raises_and_kinds_stay_in_family(text):
    lines = [Line(file="k.log", line=1, raw=text, message=text, row=0)]
    for e in kernel.parse(lines, FileContext(path="k.log", year=2026)):
        assert e["kind"].startswith("kernel.") and e["family"] == "kernel"
