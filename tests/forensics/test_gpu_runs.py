"""Real single-GPU runs (fixtures/generate/gpu/capture.sh on an H100, torch 2.11, NCCL 2.28.9): what a
user would read in the report about the machine, the rank and the end of the job."""

from __future__ import annotations

import shutil
from pathlib import Path

import polars as pl

import nccllens
from nccllens.host_aliases import resolve_loopback
from nccllens.parse.flight import parse_flight

PUBLIC = Path(__file__).resolve().parents[2] / "fixtures/public"


def _staged(tmp_path: Path, case: str) -> str:
    target = tmp_path / "logs"
    shutil.copytree(PUBLIC / case, target, ignore=shutil.ignore_patterns("expected.toml", "SOURCE.md"))
    return str(target)


def test_localhost_in_the_failure_table_is_the_machine_the_nccl_lines_name(tmp_path):
    # torchrun --standalone prints "host : localhost"; NCCL's lines in the same console say "vm"
    report = nccllens.analyze(_staged(tmp_path, "gpu_h100_nproc_exceeds_gpus_invalid_device_ordinal"))
    top = report.findings[0]
    assert (top.category, top.ranks, top.hosts) == ("config_mismatch", [1], ["vm"])
    assert {r.host for r in report.ranks} == {"vm"}
    assert not any(f.rule == "AN-SILENT-RANK" for f in report.findings)


def test_a_one_node_job_with_a_loopback_host_still_maps_local_ranks(tmp_path):
    top = nccllens.analyze(_staged(tmp_path, "gpu_h100_socket_ifname_names_missing_interface")).findings[0]
    assert (top.category, top.ranks, top.hosts) == ("network_interface", [0], ["vm"])


def test_localhost_stays_where_the_file_names_no_other_host():
    events = pl.DataFrame({"file": ["a.log", "a.log", "b.log", "b.log", "c.log"],
                           "host": ["localhost", "vm", "localhost", None, "127.0.0.1"]},
                          schema={"file": pl.Categorical, "host": pl.Categorical})
    hosts = resolve_loopback(events)["host"].cast(pl.String).to_list()
    assert hosts == ["vm", "vm", "localhost", None, "127.0.0.1"]


def test_the_flight_recorder_entries_say_more_than_its_lagging_pg_status():
    # a dump written at a normal exit: pg_status says 24 of 300 completed, every entry says completed
    dump = (PUBLIC / "gpu_h100_healthy_nccl_info_flight_dump/fr_dumps/nccl_trace_rank_0").read_bytes()
    status = [e for e in parse_flight(dump, "nccl_trace_rank_0", "flight_pickle") if e["kind"] == "flight.pg_status"]
    assert [(e["last_enqueued"], e["last_completed"]) for e in status] == [(300, 300)]


def test_every_rank_destroying_its_communicator_shows_the_job_finished(tmp_path):
    report = nccllens.analyze(_staged(tmp_path, "gpu_h100_healthy_nccl_info_flight_dump"))
    assert report.verdict.category == "none"
    assert "Destroy COMPLETE" not in report.verdict.summary and "stdout.log:" in report.verdict.summary
    assert [r.state for r in report.ranks] == ["finished"]
    assert not any(f.severity in ("error", "critical") for f in report.findings)


def test_a_dense_healthy_nccl_log_is_a_finished_job(tmp_path):
    report = nccllens.analyze(_staged(tmp_path, "gpu_h100_healthy_dense_coll_opcount"))
    assert report.verdict.category == "none"


def test_an_xid_the_job_caused_is_not_failing_hardware(tmp_path):
    # a device-side assert kills the channel and the driver logs Xid 43: the cause is the job's kernel
    top = nccllens.analyze(_staged(tmp_path, "gpu_h100_device_side_assert_xid43")).findings[0]
    assert (top.category, top.ranks, top.hosts) == ("cuda_error", [0], ["vm"])
