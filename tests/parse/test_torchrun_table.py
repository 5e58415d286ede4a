"""torchrun family: the ChildFailedError failure table -> one event per ``[i]:`` entry.

Real tables from shared/reference/samples/torch2.13_cpu_logs, fixtures/public/torchrun, or the public issue
cited next to them (issue text often lost the trailing blanks; those lines are kept as posted).
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import polars as pl

from nccllens.parse import torchrun
from nccllens.parse.base import FileContext, Line

PROJECT = str(Path(__file__).resolve().parents[2])  # the checkout, wherever it was cloned
SHARED = str(Path(__file__).resolve().parents[3] / "shared")  # ../shared beside it

SAMPLES = f"{SHARED}/reference/samples/torch2.13_cpu_logs"


def run(text: str) -> list[dict]:
    lines = [Line(file="x.log", line=i + 1, raw=s, message=s, row=i) for i, s in enumerate(text.split("\n"))]

    def following(line: Line, n: int) -> list[Line]:
        return lines[line.row + 1: line.row + 1 + n]

    keep = pl.Series([ln.message for ln in lines]).str.contains(torchrun.PREFILTER).to_list()
    survivors = [ln for ln, k in zip(lines, keep, strict=True) if k]
    events = list(torchrun.parse(survivors, FileContext(path="x.log", year=2026, _following=following)))
    return [e for e in events if e["kind"] in ("torchrun.root_cause", "torchrun.failure")]


def test_sigkill_table_2_13_root_cause_and_sigterm_survivor():
    failure, root = run(open(f"{SAMPLES}/torchrun_worker_sigkill_loglevel_info.log").read())
    assert root["kind"] == "torchrun.root_cause"
    assert (root["rank"], root["local_rank"], root["pid"], root["host"]) == (1, 1, 21165, "localhost")
    assert (root["exit_code"], root["signal"]) == (-9, "SIGKILL")
    assert root["ts"] == datetime(2026, 11, 22, 2, 46, 53) and root["ts_kind"] == "absolute"
    assert root["detail"] == "Signal 9 (SIGKILL) received by PID 21165"
    assert "value" not in root or root["value"] is None  # error_file <N/A>
    # the event sits on the entry's exitcode row (the most telling line); the entry starts 4 rows above
    assert root["line"] == 81 and root["raw"].strip().startswith("exitcode  : -9")
    assert root["_first_line"] == 77
    assert failure["kind"] == "torchrun.failure"
    assert (failure["rank"], failure["exit_code"], failure["signal"], failure["pid"]) == (0, -15, "SIGTERM", 21164)


def test_record_table_keeps_error_file_and_multiline_traceback():
    failure, root = run(open(f"{SAMPLES}/torchrun_worker_exception_with_record.log").read())
    assert root["value"] == "/tmp/torchelastic_5__fqudq/none_r1xerfgw/attempt_0/1/error.json"
    assert root["attempt"] == 0
    assert (root["rank"], root["exit_code"], root["signal"]) == (1, 1, None)
    assert root["exc_type"] == "KeyError"
    assert root["detail"].startswith("Traceback (most recent call last):")
    assert root["detail"].rstrip().endswith("KeyError: 'missing_batch_key'")
    assert root["ts"] == datetime(2026, 11, 22, 2, 46, 56)
    assert failure["rank"] == 0 and failure["signal"] == "SIGTERM"


def test_sigabrt_root_cause_gloo_size_mismatch():
    events = run(open(f"{SAMPLES}/gloo_size_mismatch_no_debug.log").read())
    (root,) = [e for e in events if e["kind"] == "torchrun.root_cause"]
    assert (root["rank"], root["exit_code"], root["signal"]) == (0, -6, "SIGABRT")


# real: https://github.com/Vision-CAIR/MiniGPT-4/issues/237 (torch 2.0; the first line lost its trailing blank here)
MINIGPT = """torch.distributed.elastic.multiprocessing.errors.ChildFailedError:
============================================================
train.py FAILED
------------------------------------------------------------
Failures:
[1]:
  time      : 2023-05-19_16:39:58
  host      : n136-117-136.byted.org
  rank      : 1 (local_rank: 1)
  exitcode  : 1 (pid: 78971)
  error_file: <N/A>
  traceback : To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html
------------------------------------------------------------
Root Cause (first observed failure):
[0]:
  time      : 2023-05-19_16:39:58
  host      : n136-117-136.byted.org
  rank      : 0 (local_rank: 0)
  exitcode  : 1 (pid: 78970)
  error_file: <N/A>
  traceback : To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html
============================================================"""


def test_no_record_table_host_and_hint():
    failure, root = run(MINIGPT)
    assert root["host"] == "n136-117-136.byted.org" and root["rank"] == 0 and root["pid"] == 78970
    assert root["detail"].startswith("To enable traceback see:")
    assert root["ts"] == datetime(2023, 5, 19, 16, 39, 58)
    assert failure["rank"] == 1 and failure["exit_code"] == 1


# real: https://github.com/OEvortex/unsloth/issues/4 (the first line lost its trailing blank here)
NO_OTHER = """torch.distributed.elastic.multiprocessing.errors.ChildFailedError:
============================================================
gpu.py FAILED
------------------------------------------------------------
Failures:
  <NO_OTHER_FAILURES>
------------------------------------------------------------
Root Cause (first observed failure):
[0]:
  time      : 2025-08-01_11:36:44
  host      : 192-222-55-138
  rank      : 0 (local_rank: 0)
  exitcode  : 1 (pid: 11377)
  error_file: <N/A>
  traceback : To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html
============================================================"""


def test_no_other_failures_gives_only_the_root_cause():
    (root,) = run(NO_OTHER)
    assert root["kind"] == "torchrun.root_cause" and root["host"] == "192-222-55-138" and root["pid"] == 11377


# real: https://github.com/CVMI-Lab/PLA/issues/18 (several failures in one section)
SEVERAL = """Failures:
[1]:
  time      : 2023-09-04_10:10:23
  host      : ubuntu
  rank      : 1 (local_rank: 1)
  exitcode  : 1 (pid: 3669031)
  error_file: <N/A>
  traceback : To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html
[2]:
  time      : 2023-09-04_10:10:23
  host      : ubuntu
  rank      : 2 (local_rank: 2)
  exitcode  : 1 (pid: 3669032)
  error_file: <N/A>
  traceback : To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html
[3]:
  time      : 2023-09-04_10:10:23
  host      : ubuntu
  rank      : 3 (local_rank: 3)
  exitcode  : 1 (pid: 3669033)
  error_file: <N/A>
  traceback : To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html
-------------------"""


def test_several_failures_one_event_each_with_the_global_rank():
    events = run(SEVERAL)
    assert [e["kind"] for e in events] == ["torchrun.failure"] * 3
    assert [e["rank"] for e in events] == [1, 2, 3]
    assert [e["pid"] for e in events] == [3669031, 3669032, 3669033]
    assert [e["line"] for e in events] == [6, 13, 20]  # each entry's exitcode row


def test_truncated_table_fixture_keeps_what_is_there():
    text = open(f"{PROJECT}/fixtures/public/torchrun/childfailederror_sigkill_sigterm_summary.log").read()
    events = run(text)
    failures = [e for e in events if e["kind"] == "torchrun.failure"]
    assert [(e["rank"], e["exit_code"], e["signal"]) for e in failures] == [
        (3, 1, None), (0, -9, "SIGKILL"), (2, -15, "SIGTERM")]
    (root,) = [e for e in events if e["kind"] == "torchrun.root_cause"]
    assert root["rank"] == 1 and root.get("exit_code") is None


def test_index_is_not_the_rank():
    failure, root = run(open(f"{SAMPLES}/torchrun_worker_sigkill_loglevel_info.log").read())
    assert failure["message"].startswith("Failures: [1] rank 0")
    assert failure["rank"] == 0


# synthetic: built from the ≤1.10 table as described in shared/reference/pytorch_c10d.md §7.2
# ("Root Cause:" / "Other Failures:", "time: ...", "rank: ...", "exitcode: ...", "error_file: ...",
# 'msg: "..."', border "*"), torch 1.9
OLD = """**************************************
            train.py FAILED
======================================
Root Cause:
[0]:
  time: 2021-06-01_10:00:00
  rank: 3 (local_rank: 3)
  exitcode: -6 (pid: 812)
  error_file: <N/A>
  msg: "Signal 6 (SIGABRT) received by PID 812"
======================================
Other Failures:
  <NO_OTHER_FAILURES>
**************************************"""


def test_old_format_root_cause():
    (root,) = run(OLD)
    assert root["kind"] == "torchrun.root_cause"
    assert (root["rank"], root["local_rank"], root["exit_code"], root["signal"], root["pid"]) == (3, 3, -6, "SIGABRT", 812)
    assert "SIGABRT" in root["detail"]
    assert root["ts"] == datetime(2021, 6, 1, 10, 0, 0)


def test_failure_row_flattened_by_a_paste_keeps_rank_exit_and_pid():
    # source: https://github.com/ZhehengJiangLancaster/AMVUR/issues/2 (the web page joined the table's rows
    # and Markdown ate the underscores)
    from nccllens.extract import events_from_text

    ev = events_from_text("rank2 (local rank: 2)exitcode: -9 (pid: 36071)error file: <N/A>\n")
    row = ev.filter(ev["kind"] == "torchrun.worker_failed").row(0, named=True)
    assert (row["rank"], row["local_rank"], row["exit_code"], row["pid"], row["signal"]) == (2, 2, -9, 36071, "SIGKILL")


def test_flattened_failure_row_names_the_culprit(tmp_path):
    import nccllens

    # source: https://github.com/ZhehengJiangLancaster/AMVUR/issues/2
    (tmp_path / "launcher.log").write_text(
        "torch.distributed.elastic.multiprocessing.errors.ChildFailedError:\n"
        "rank2 (local rank: 2)exitcode: -9 (pid: 36071)error file: <N/A>\n"
        "traceback : signal 9 (SIGKILL) received by PID 36071\n")
    top = nccllens.analyze(str(tmp_path)).findings[0]
    assert top.category == "host_oom" and top.ranks == [2]


def test_an_entry_pasted_without_its_section_and_head_is_read_from_its_rows():
    # https://github.com/speechbrain/speechbrain/issues/2397: the ticket quotes the rows from "time :" on
    case = f"{PROJECT}/fixtures/public/speechbrain_ddp_rank1_intra_epoch_ckpt_delete_race_torchelastic_record"
    (e,) = run(open(f"{case}/torchrun_failure_record.log").read())
    assert (e["kind"], e["rank"], e["local_rank"], e["exit_code"]) == ("torchrun.failure", 1, 1, 1)
    assert e["host"] == "sbx-60283d040ccf4433b126ad86e96ba6ac-5ff484847d-kcvm5"
    assert "?" not in e["message"] and "[]" not in e["message"]


def test_the_rows_of_a_whole_table_are_read_once():
    text = open(f"{PROJECT}/fixtures/public/cogvlm_torchrun_2x4090_rank0_sigkill_from_pretrained_ram_doubling/"
                "torchrun.log").read()
    assert [(e["kind"], e["rank"]) for e in run(text)] == [("torchrun.failure", 1), ("torchrun.root_cause", 0)]


def test_entry_pasted_from_its_time_row_reads_when_the_whole_paste_was_indented(tmp_path):
    # https://github.com/speechbrain/speechbrain/issues/2397: the ticket quotes one failure entry from its
    # ``time :`` row on; every line of the paste is indented, so the block is read dedented
    import nccllens

    case = Path(PROJECT) / "fixtures/public/speechbrain_ddp_rank1_intra_epoch_ckpt_delete_race_torchelastic_record"
    head = (case / "torchrun_failure_record.log").read_text(encoding="utf-8").split("\n")[:6]
    (tmp_path / "record.log").write_text("\n".join(head) + "\n", encoding="utf-8")
    top = nccllens.analyze(str(tmp_path)).findings[0]
    assert (top.rule, top.category, top.ranks) == ("NL-APP-016", "application_error", [1])
    assert top.hosts == ["sbx-60283d040ccf4433b126ad86e96ba6ac-5ff484847d-kcvm5"]


def test_root_cause_entry_with_exit_code_1_names_its_rank(tmp_path):
    # https://github.com/hiyouga/LlamaFactory/issues/9194 (fixtures/public/llamafactory_zero3_allgather_params_valueerror_rank5_
    # root_cause): the worker's traceback was cut before its exception; the failure table names rank 5
    import nccllens

    case = Path(PROJECT) / "fixtures/public/llamafactory_zero3_allgather_params_valueerror_rank5_root_cause"
    top = nccllens.analyze(str(case)).findings[0]
    assert (top.category, top.ranks, top.hosts) == ("application_error", [5], ["42d397e80282"])
