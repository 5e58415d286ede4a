"""Repeated events are counted, not stored (issue 19 §1): a job that prints one error a million times
gives one event with a count, its first and last line and time; distinct facts never merge.

The lines are real, read from the fixtures (public reports); a "variant" is a real line with one field
changed (synthetic), to show that field keeps events apart.
"""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

import nccllens
from nccllens import extract as pipeline
from nccllens.extract import jobs, tables
from nccllens.parse import survivors
from tests.hostile.planted import OOM, analyze_planted

FIX = Path(__file__).resolve().parents[2] / "fixtures" / "public"


def _line(path: str, contains: str) -> str:
    return next(ln for ln in (FIX / path).read_text().splitlines() if contains in ln)


IB = _line("ib_errors/nccl2.1x_error4_two_vms_nccl_tests.log", "NCCL WARN NET/IB : Got completion")
CODE = _line("nccl_init_lines/platform_timestamp_prefix_socket_backtraces.log", "misc/socket.cc:868 -> 3")
XID = _line("gpuburn_tesla_aer_surprise_down_xid79/dmesg.txt", "79, GPU has fallen off the bus")
EXIT = _line("cgroup_oom_rank2_container_limit/node-b/console.log", "failed (exitcode: -9)")
CTIME = _line("kernel_gpu/dmesg_ctime_xid13_xid109.log", "[Fri Aug 30 11:43:09 2024] NVRM: Xid")
CUDA = _line("opensora_nccl_enqueue_cuda_oom/train.log", "NCCL WARN Cuda failure 'out of memory'")


def _events(tmp_path: Path, text: str, name: str = "node.log") -> pl.DataFrame:
    (tmp_path / name).write_text(text)
    events, _ = pipeline.extract([str(tmp_path / name)], workers=0)
    return events.filter(pl.col("kind") != "other.file_end")


@pytest.fixture
def parsed_lines(monkeypatch):
    """How many surviving lines reach the family parsers (a counter, not a clock)."""
    seen = [0]
    real = survivors.parse_lines

    def counting(lines, masks, ctx):
        seen[0] += len(lines)
        return real(lines, masks, ctx)

    monkeypatch.setattr(survivors, "parse_lines", counting)
    for module in (jobs, tables):  # every file read block by block, as a large one is
        monkeypatch.setattr(module, "SMALL", 0)
    return seen


@pytest.mark.parametrize("body", ["ib", "interleaved"])
def test_repeats_grow_the_count_not_the_rows_nor_the_parsing(tmp_path, parsed_lines, body):
    """10x the repeats: the same number of event rows and of lines parsed; only the count grows."""
    one = [IB] if body == "ib" else [IB, CUDA, EXIT]  # a cycle of lines printed again and again
    rows, parsed = [], []
    for n in (300, 3000):
        parsed_lines[0] = 0
        folder = tmp_path / str(n)
        folder.mkdir()
        events = _events(folder, "\n".join(one * n) + "\n", "big.log")
        rows.append(events.height)
        parsed.append(parsed_lines[0])
        ib = events.filter(pl.col("raw") == IB)
        assert ib["count"].to_list()[0] == n and ib["line"].to_list() == [1]
        assert ib["last_line"].to_list() == [len(one) * (n - 1) + 1]
    assert rows[0] == rows[1] == len(one)
    assert parsed[1] <= parsed[0] + 2 * len(one), parsed  # lines parsed do not grow with the repeats


def test_only_timestamps_may_differ_and_first_and_last_time_are_kept(tmp_path):
    lines = [CTIME.replace("11:43:09", f"11:43:{s:02d}") for s in range(40)]  # one second apart
    events = _events(tmp_path, "\n".join(lines) + "\n")
    xids = events.filter(pl.col("xid") == 13)
    assert xids.height == 1
    row = xids.row(0, named=True)
    assert (row["count"], row["line"], row["last_line"]) == (40, 1, 40)
    assert row["ts"].second == 0 and row["last_ts"].second == 39


@pytest.mark.parametrize("line,variant,column", [
    (IB, IB.replace("vm2:", "vm3:", 1), "host"),
    (CODE, CODE.replace("-> 3", "-> 2"), "error_code"),
    (XID, XID.replace("): 79,", "): 74,"), "xid"),
    (EXIT, EXIT.replace("exitcode: -9", "exitcode: -15"), "exit_code"),
    ("[rank3]: " + OOM.decode().splitlines()[-1].split(": ", 1)[1],
     "[rank5]: " + OOM.decode().splitlines()[-1].split(": ", 1)[1], "rank"),
])
def test_distinct_facts_never_merge(tmp_path, line, variant, column):
    """Host, NCCL result code, Xid, exit code / signal, rank: each keeps repeated events apart."""
    assert line != variant
    events = _events(tmp_path, "\n".join([line, variant] * 50) + "\n")
    stated = events.filter(pl.col(column).is_not_null())
    assert stated[column].n_unique() == 2, stated.select("kind", column, "count")
    assert sorted(stated.group_by(column).agg(pl.col("count").fill_null(1).sum())["count"].to_list()) == [50, 50]


def test_the_planted_oom_stays_first_beside_a_spammed_error_and_the_finding_counts_every_line(tmp_path):
    (tmp_path / "node.log").write_text((IB + "\n") * 20_000)
    report = analyze_planted(tmp_path)
    ib = next(f for f in report.findings if any(e.text == IB for e in f.evidence))
    assert ib.count == 20_000
    assert [e.line for e in ib.evidence] == [1]  # the first occurrence is the evidence


def test_version_2_shards_still_read(tmp_path):
    (tmp_path / "logs").mkdir()
    (tmp_path / "logs" / "rank3.log").write_bytes(OOM)
    events, _ = pipeline.extract([str(tmp_path / "logs")], workers=0)
    old = events.drop("count", "last_line", "last_ts")  # what version 2 wrote
    old.write_parquet(tmp_path / "events-00000.parquet", metadata={"nccllens.events_schema_version": "2"})
    report = nccllens.analyze([str(tmp_path / "events-00000.parquet")])
    assert report.findings[0].category == "gpu_oom" and 3 in report.findings[0].ranks
