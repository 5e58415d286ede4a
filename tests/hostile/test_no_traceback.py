"""No traceback, ever (issue 19): timestamps that cannot be represented, unreadable zip members, nested
TOML, unsupported user-rule syntax, a full or closed standard output, a closed standard input."""

from __future__ import annotations

import io
import os
import re
import subprocess
import sys
import zipfile
from datetime import datetime
from pathlib import Path

import pytest
from typer.testing import CliRunner

from nccllens import events as ev
from nccllens import timeline
from nccllens.cli import app
from nccllens.report import render
from tests.hostile.planted import OOM, analyze_planted, inputs_of, plant

ROOT = Path(__file__).resolve().parents[2]
runner = CliRunner()

BAD_TIMES = (
    b"[99999999999999999999.123456] NVRM: Xid (PCI:0000:07:00): 13, pid=1, Graphics Exception\n"
    b"[9223372036854.775807] NVRM: Xid (PCI:0000:07:00): 13, pid=1, Graphics Exception\n"
    b"9999-12-31T23:59:59.999999+00:00 node1 kernel: [ 5.000000] NVRM: loading\n"
    b"Jan  1 00:00:01 node1 kernel: [99999999999.5] mlx5_core 0000:07:00.0: link down\n"
    b"Feb 30 00:00:01 node1 kernel: [ 1.5] mlx5_core 0000:07:00.0: link down\n"
    b"0000-01-01T00:00:00Z node1 NCCL WARN year zero\n"
    b"99999-01-01T00:00:00Z node1:1:2 [0] NCCL INFO Bootstrap : Using eth0:10.0.0.1<0>\n"
    b"[2024-02-30 25:61:61,123] torch.distributed.elastic.agent.server.api: [ERROR] worker failed\n"
    b"E0230 00:00:00.000000 123 ProcessGroupNCCL.cpp:1] [Rank 0] Watchdog caught collective operation timeout\n"
)


def test_timestamps_that_cannot_be_represented_end_as_unknown_times(tmp_path):
    (tmp_path / "dmesg-node1.txt").write_bytes(BAD_TIMES)
    report = analyze_planted(tmp_path)
    for fmt in ("text", "json", "md", "html"):
        assert render(report, fmt)


def _first_line(path: str, shape: str) -> str:
    return next(ln for ln in (ROOT / path).read_text().splitlines() if re.search(shape, ln))


@pytest.mark.parametrize("number", ["199999999999999999999", "9" * 5000])  # over Int64; over int()'s 4,300 digits
def test_counters_no_table_can_hold_are_unknown_not_a_crash(tmp_path, number):
    """Summarised lines (training steps, NCCL opCounts, channels) whose numbers fit no column: found by the
    whole-input fuzz (a spliced "step 9999…" line crashed the summary table). Real lines, numbers replaced."""
    step = _first_line("fixtures/public/cgroup_oom_rank2_container_limit/node-a/console.log", r"\]:step 1/10 loss")
    coll = _first_line("fixtures/public/ray_train_128rank_coll_opcount_allreduce_timeout/ray_workers.log",
                       r"opCount [0-9a-f]+ sendbuff")
    chan = _first_line("fixtures/public/ray_train_p5_efa_ofi_init_failed_socket_fallback/ray_train_channels.log",
                       r"\] via NET")
    lines = [step.replace("step 1/10", f"step {number}/10"),
             re.sub(r"opCount [0-9a-f]+ (.*) count \d+ (.*)\[nranks=\d+\]",
                    rf"opCount {number} \1 count {number} \2[nranks={number}]", coll),
             chan.replace(" : 0[0] -> 8[0]", f" : {number}[0] -> 8[0]"),
             re.sub(r":944:3818 ", f":{number}:3818 ", chan)]
    (tmp_path / "node1.log").write_text("\n".join(lines * 3) + "\n")
    report = analyze_planted(tmp_path)
    for fmt in ("text", "json", "md", "html"):
        assert render(report, fmt)


def test_the_timeline_keeps_every_time_within_what_a_report_can_show():
    row = dict(file="a", line=1, raw="x", kind="kernel.x", family="kernel", level="info", message="m", host="h")
    rows = [
        {**row, "ts": datetime(9999, 12, 31, 23, 59), "ts_kind": "absolute"},
        {**row, "line": 2, "ts": datetime(1970, 1, 1, 0, 0, 1), "ts_kind": "no_year"},  # wraps to year 10000
        {**row, "file": "b", "ts": datetime(1, 1, 1), "ts_kind": "boot", "ts_rel": 5.0},  # boot in year 0
        {**row, "file": "b", "line": 3, "ts": None, "ts_kind": "boot", "ts_rel": 1.0},
        {**row, "file": "b", "line": 4, "ts": datetime(2024, 1, 1), "ts_kind": "boot", "ts_rel": 1e18},
        {**row, "file": "b", "line": 5, "ts": None, "ts_kind": "boot", "ts_rel": float("inf")},
        {**row, "file": "b", "line": 6, "ts": None, "ts_kind": "boot", "ts_rel": float("nan")},
    ]
    out = timeline.normalize(ev.from_rows(rows))
    assert len(out.rows()) == len(rows)  # every time converts to Python: none is out of range


def _zip_with_bad_members() -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("a-crc.log", b"node1:1:2 [0] NCCL WARN a\n" * 50)
        zf.writestr("b-encrypted.log", b"node1:1:2 [0] NCCL WARN b\n" * 50)
        zf.writestr("c-method.log", b"node1:1:2 [0] NCCL WARN c\n" * 50)
        zf.writestr("rank3.log", OOM)
    data = bytearray(buf.getvalue())
    data[data.find(b"NCCL WARN a")] ^= 1  # a flipped bit: Bad CRC-32
    central = data.find(b"PK\x01\x02")
    central = data.find(b"PK\x01\x02", central + 4)
    data[central + 8] |= 1  # the second member claims to be encrypted
    central = data.find(b"PK\x01\x02", central + 4)
    data[central + 10] = 9  # the third one Deflate64
    return bytes(data)


def test_any_error_reading_one_zip_member_skips_that_member_only(tmp_path):
    (tmp_path / "bundle.zip").write_bytes(_zip_with_bad_members())
    report = analyze_planted(tmp_path)
    found = inputs_of(report)
    assert "Bad CRC-32" in found["a-crc.log"].skipped
    assert "encrypted" in found["b-encrypted.log"].skipped
    assert "compression method" in found["c-method.log"].skipped
    assert found["rank3.log"].skipped is None  # the member after them is read


@pytest.mark.parametrize("name", ["nccllens.toml", "rule"])
def test_deeply_nested_toml_is_a_one_line_error(tmp_path, monkeypatch, name):
    nested = "x = " + "[" * 100_000 + "]" * 100_000 + "\n"
    plant(tmp_path / "logs")
    args = ["analyze", str(tmp_path / "logs")]
    if name == "rule":
        (tmp_path / "rules").mkdir()
        (tmp_path / "rules" / "X-1.toml").write_text(nested)
        args += ["--rules", str(tmp_path / "rules")]
        check = runner.invoke(app, ["rules", "check", str(tmp_path / "rules")])
        assert check.exit_code == 1 and "X-1.toml:1: invalid TOML: nested too deeply" in check.output
    else:
        (tmp_path / name).write_text(nested)
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(app, args)
    assert result.exit_code == 2, result.output
    assert "nested too deeply" in result.output and "Traceback" not in result.output


@pytest.mark.parametrize("pattern", [r"(?<=NCCL )WARN", r"(?P<n>a)(?P=n)", r"(?>atomic)", r"a{1000000}", r"(?i"])
def test_a_user_rule_the_engine_cannot_run_is_exit_2_with_file_and_line(tmp_path, pattern):
    source = (ROOT / "tests" / "engine" / "rules_bad" / "lookaround" / "TEST-GPU-001.toml").read_text()
    rules = tmp_path / "rules"
    rules.mkdir()
    lines = [f"pattern = '''{pattern}'''" if ln.startswith("pattern =") else ln for ln in source.splitlines()]
    (rules / "TEST-GPU-001.toml").write_text("\n".join(lines) + "\n")
    result = runner.invoke(app, ["analyze", str(plant(tmp_path / "logs")), "--rules", str(rules)])
    assert result.exit_code == 2
    assert "TEST-GPU-001.toml:11:" in result.output and "Traceback" not in result.output
    check = runner.invoke(app, ["rules", "check", str(rules)])
    assert check.exit_code == 1 and "TEST-GPU-001.toml:11:" in check.output


def _cli(args: list[str], **kw) -> subprocess.CompletedProcess:
    code = "import sys; from nccllens.cli import app; sys.argv[0] = 'nccllens'; app()"
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=False, timeout=120,
                          cwd=ROOT, **kw)


@pytest.mark.parametrize("command", ["analyze", "ranks", "events"])
def test_a_full_or_closed_standard_output_is_exit_2_without_a_traceback(tmp_path, command):
    logs = str(plant(tmp_path / "logs"))
    err = tmp_path / "err.txt"
    with open("/dev/full", "w") as full, open(err, "w") as fh:
        done = _cli([command, logs], stdout=full, stderr=fh)
    assert done.returncode == 2
    assert "cannot write to standard output" in err.read_text() and "Traceback" not in err.read_text()
    with open(err, "w") as fh:  # closed: the report goes nowhere, and nothing breaks
        closed = _cli([command, logs], stdout=subprocess.DEVNULL, stderr=fh,
                      preexec_fn=lambda: os.close(1))
    assert closed.returncode in (0, 1) and "Traceback" not in err.read_text()


def test_standard_input_closed_is_an_empty_input(tmp_path):
    err = tmp_path / "err.txt"
    with open(err, "w") as fh:
        done = _cli(["analyze", "-"], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=fh,
                    preexec_fn=lambda: os.close(0))
    # nothing read is an input error (issue 18): exit 2 with one line saying why, never a traceback
    assert done.returncode == 2 and "Traceback" not in err.read_text()
    assert "nothing to analyze: standard input is empty" in err.read_text()
