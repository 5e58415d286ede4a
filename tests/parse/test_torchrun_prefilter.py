"""The PREFILTERs of the torchrun, python, slurm and k8s families on a healthy log: selective, Rust-compatible.

The healthy log is built from real lines only: the two agent consoles of fixtures/healthy_clean (torch 2.13
run) and the NCCL INFO lines of fixtures/public/nccl_init_lines (public issues, see that folder), repeated
to 2,000 lines the way a long healthy job repeats its chatter.
"""

from __future__ import annotations

import glob
import re
from pathlib import Path

import polars as pl

from nccllens.parse import k8s, python, slurm, torchrun
from nccllens.parse.base import FileContext, Line

PROJECT = str(Path(__file__).resolve().parents[2])  # the checkout, wherever it was cloned
SHARED = str(Path(__file__).resolve().parents[3] / "shared")  # ../shared beside it

FAMILIES = (torchrun, python, slurm, k8s)


def healthy_lines(total: int = 2000) -> list[str]:
    consoles = []
    for path in sorted(glob.glob(f"{PROJECT}/fixtures/healthy_clean/*/console.log")):
        consoles.extend(open(path).read().splitlines())
    chatter = []
    for path in sorted(glob.glob(f"{PROJECT}/fixtures/public/nccl_init_lines/*.log")):
        chatter.extend(ln for ln in open(path).read().splitlines() if "NCCL INFO" in ln and "WARN" not in ln)
    assert consoles and chatter
    lines = list(consoles)
    i = 0
    while len(lines) < total:
        lines.append(chatter[i % len(chatter)])
        i += 1
    return lines


def test_survivor_fraction_on_a_healthy_log_is_well_under_one_percent():
    lines = healthy_lines()
    series = pl.Series(lines)
    combined = "|".join(f"(?:{fam.PREFILTER})" for fam in FAMILIES)
    kept = series.str.contains(combined).sum()
    assert kept / len(lines) < 0.01, [ln for ln in lines if re.search(combined, ln)]
    for fam in FAMILIES:
        assert series.str.contains(fam.PREFILTER).sum() / len(lines) < 0.01


def test_healthy_run_events_are_the_expected_few():
    text = open(f"{PROJECT}/fixtures/healthy_clean/node-a/console.log").read().splitlines()
    lines = [Line(file="x.log", line=i + 1, raw=s, message=s, row=i) for i, s in enumerate(text)]

    def following(line: Line, n: int) -> list[Line]:
        return lines[line.row + 1: line.row + 1 + n]

    keep = pl.Series(text).str.contains(torchrun.PREFILTER).to_list()
    events = list(torchrun.parse([ln for ln, k in zip(lines, keep, strict=True) if k],
                                 FileContext(path="x.log", year=2026, _following=following)))
    states = [e["value"] for e in events if e["kind"] == "torchrun.state"]
    assert states == ["Starting worker group", "worker group successfully finished", "SUCCEEDED"]
    assert not [e for e in events if e["level"] in ("error", "critical")]
    for fam in (python, slurm, k8s):
        assert not pl.Series(text).str.contains(fam.PREFILTER).any()


def test_prefilters_use_no_look_around_or_back_references():
    for fam in FAMILIES:
        assert not re.search(r"\(\?[=!<]|\\[1-9]", fam.PREFILTER), fam.FAMILY
        pl.Series(["x"]).str.contains(fam.PREFILTER)  # compiles in polars' Rust engine
