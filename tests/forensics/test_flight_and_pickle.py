"""Flight-recorder dumps (real gloo dumps, torch 2.13) and the restricted pickle loader."""

from __future__ import annotations

import os
import pickle
from pathlib import Path

import pytest

import nccllens
from nccllens.parse.flight import parse_flight, rank_from_name
from nccllens.safe_pickle import UnsafePickleError, loads

PROJECT = str(Path(__file__).resolve().parents[2])  # the checkout, wherever it was cloned
SHARED = str(Path(__file__).resolve().parents[3] / "shared")  # ../shared beside it

SAMPLES = Path(f"{SHARED}/reference/samples/fr_gloo_cpu_torch2.13")
needs_samples = pytest.mark.skipif(not SAMPLES.exists(), reason="shared reference samples not present")


class _RunsCode:
    def __reduce__(self):
        return (os.system, ("touch /tmp/nccllens_pickle_pwned",))


def test_pickle_that_would_run_code_is_refused_and_nothing_runs(tmp_path):
    marker = Path("/tmp/nccllens_pickle_pwned")
    marker.unlink(missing_ok=True)
    data = pickle.dumps({"version": "2.10", "entries": [_RunsCode()]})
    with pytest.raises(UnsafePickleError, match="refused to load"):
        loads(data)
    assert not marker.exists()
    # through the whole pipeline: the file is reported, not executed
    (tmp_path / "fr_trace_rank_0").write_bytes(data)
    report = nccllens.analyze(str(tmp_path))
    assert not marker.exists()
    assert any(e for e in report.events.filter(report.events["kind"] == "other.parser_error")["message"]
               if "refused" in e)


def test_plain_data_pickles_load_and_size_is_bounded():
    data = pickle.dumps({"a": [1, 2.5, None, True, ("x", "y")], "s": {1, 2}}, protocol=2)
    assert loads(data)["s"] == {1, 2}
    with pytest.raises(UnsafePickleError, match="too large"):
        loads(data, max_bytes=10)


def test_rank_from_file_names():
    assert rank_from_name("dumps/fr_trace_rank_3") == 3
    assert rank_from_name("nccl_trace_rank_container-node02_5") == 5
    assert rank_from_name("x.tar.gz!fr/fr_trace_json_rank_12.json") == 12


def test_old_dump_generations():
    bare = pickle.dumps([{"pg_id": 0, "seq_id": 4, "profiling_name": "nccl:all_reduce", "state": "scheduled",
                          "input_sizes": [[8]], "output_sizes": [[8]]}])
    events = parse_flight(bare, "nccl_trace_rank_2", "flight_pickle")
    assert [(e["rank"], e["seq"], e["op"], e["pg"]) for e in events] == [(2, 4, "all_reduce", "0")]
    v1 = pickle.dumps({"version": "1.1", "rank": 7, "entries": [{"seq_id": 9, "profiling_name": "nccl:broadcast"}]})
    assert parse_flight(v1, "whatever", "flight_pickle")[0]["rank"] == 7


@needs_samples
def test_real_gloo_dumps_are_parsed():
    path = SAMPLES / "desync" / "fr_trace_rank_0"
    events = parse_flight(path.read_bytes(), str(path), "flight_pickle")
    entries = [e for e in events if e["kind"] == "flight.entry"]
    assert entries[-1]["seq"] == 6 and entries[-1]["op"] == "all_reduce" and entries[-1]["pg"] == "0"
    status = {e["pg"]: (e["last_enqueued"], e["last_completed"]) for e in events if e["kind"] == "flight.pg_status"}
    assert status == {"0": (6, 6), "1": (2, 2)}
    js = SAMPLES / "desync" / "fr_trace_json_rank_1.json"
    jevents = parse_flight(js.read_bytes(), str(js), "flight_json")
    assert max(e["seq"] for e in jevents if e["kind"] == "flight.entry" and e["pg"] == "0") == 5


@needs_samples
def test_desync_dumps_name_the_rank_that_never_reached_the_collective():
    report = nccllens.analyze(str(SAMPLES / "desync"))
    # gloo dumps: the behind rank is named, with the caveat that gloo counts timed-out collectives as completed
    found = [f for f in report.findings if f.rule == "AN-FLIGHT-GLOO-BEHIND"]
    assert found and found[0].ranks == [1] and found[0].category == "rank_divergence"
    assert "collective 6" in found[0].title and "timed out as completed" in found[0].summary
    # the Python frames of the odd entry beside the majority's (pickle dumps carry them)
    assert "train.py:23" in found[0].summary and "train.py:28" in found[0].summary


@needs_samples
def test_mismatch_dumps_show_the_op_difference():
    report = nccllens.analyze(str(SAMPLES / "mismatch"))
    found = [f for f in report.findings if f.rule == "AN-FLIGHT-MISMATCH"]
    assert found and "broadcast" in found[0].summary and "all_reduce" in found[0].summary
    assert found[0].ranks == [0, 1]  # two ranks disagree: either may be the odd one
