"""Issue 16 §3 items 10-12 on real lines: no phantom ranks, busy and slow ranks, analyser reports, dumps.

Every log line here is copied from a case of fixtures/public (named beside it) or from PyTorch's own
documentation; each test writes them under a neutral folder name (names carry labels)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import nccllens
from nccllens.parse.frtrace import parse as parse_frtrace
from nccllens.parse.progress import durations, last_bar

PROJECT = str(Path(__file__).resolve().parents[2])  # the checkout, wherever it was cloned
SHARED = str(Path(__file__).resolve().parents[3] / "shared")  # ../shared beside it

SAMPLES = Path(f"{SHARED}/reference/samples/fr_gloo_cpu_torch2.13")
needs_samples = pytest.mark.skipif(not SAMPLES.exists(), reason="shared reference samples not present")


def _analyze(tmp_path, files: dict[str, str]):
    for name, text in files.items():
        path = tmp_path / "case-001" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return nccllens.analyze(str(tmp_path / "case-001"))


# fixtures/public/weathergen_timeout_seq52_batch (srun --label, ranks 1 and 2 only)
WEATHERGEN = """\
1: [rank1]:[E702 12:22:50.103110475 ProcessGroupNCCL.cpp:629] [Rank 1] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=52, OpType=ALLREDUCE, NumelIn=11, NumelOut=11, Timeout(ms)=240000) ran for 240000 milliseconds before timing out.
2: [rank2]:[E702 12:22:50.160528660 ProcessGroupNCCL.cpp:629] [Rank 2] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=52, OpType=ALLREDUCE, NumelIn=11, NumelOut=11, Timeout(ms)=240000) ran for 240057 milliseconds before timing out.
1: [rank1]:[E702 12:22:50.186106643 ProcessGroupNCCL.cpp:2168] [PG ID 0 PG GUID 0(default_pg) Rank 1]  failure detected by watchdog at work sequence id: 52 PG status: last enqueued work: 52, last completed work: 51
2: [rank2]:[E702 12:22:50.186148043 ProcessGroupNCCL.cpp:2168] [PG ID 0 PG GUID 0(default_pg) Rank 2]  failure detected by watchdog at work sequence id: 52 PG status: last enqueued work: 52, last completed work: 51
"""


def test_the_highest_rank_seen_is_no_world_size(tmp_path):
    report = _analyze(tmp_path, {"train.log": WEATHERGEN})
    assert report.job.world_size is None
    assert not [f for f in report.findings if f.rule == "AN-NO-LOGS"]
    # rank 0 exists (ranks count from 0) and is not among those waiting: named, but as the timeout it is,
    # since nothing says whether it diverged, died or is slow
    assert report.findings[0].category == "collective_timeout"
    absent = [f for f in report.findings if f.rule == "AN-COLLECTIVE-ABSENT"]
    assert absent and absent[0].ranks == [0] and absent[0].category == "collective_timeout"


# fixtures/public/sglang_pd_bootstrap_linklocal_169254: the lines name their host; the file name suggests "node2"
SGLANG = """\
hd03-gpu2-0031:14135:14135 [2] NCCL INFO Using network IBext_v8

hd03-gpu2-0031:14133:14133 [0] misc/socket.cc:484 NCCL WARN socketStartConnect: Connect to 169.254.20.10<43369> failed : Software caused connection abort
hd03-gpu2-0031:14133:14133 [0] NCCL INFO misc/socket.cc:567 -> 2
hd03-gpu2-0031:14133:14133 [0] NCCL INFO bootstrap.cc:285 -> 2
"""


def test_a_host_only_the_path_suggests_is_not_a_silent_node(tmp_path):
    report = _analyze(tmp_path, {"decode_node2.log": SGLANG})
    assert not [f for f in report.findings if f.rule == "AN-SILENT-RANK"]


# fixtures/public/fr_trace_missing_ranks_allreduce (fr_trace, PyTorch ~2.6)
FR_TRACE = """\
Not all ranks joining collective: sequence number: 31117
internal record id: 31116
group info: 0:default_pg
collective: nccl:all_reduce
missing ranks: {3, 4, 5, 6, 7}
input sizes: [[1571911]]
output sizes: [[1571911]]
world size: 8
expected ranks: {0, 1, 2, 3, 4, 5, 6, 7}
collective state: scheduled
collective stack trace:
 all_reduce at /packages/fblearner.flow.canary/workflow#link-tree/torch/distributed/distributed_c10d.py:2707
wrapper at /packages/fblearner.flow.canary/workflow#link-tree/torch/distributed/c10d_logger.py:81
sync_buffers at /packages/fblearner.flow.canary/workflow#link-tree/xri_mapsr/neural_fields/models/gaussian_splatting.py:650
"""
# the flight-recorder tutorial (pytorch.org/tutorials/prototype/flight_recorder_tutorial): torchfrtrace of 2.5
FR_TUTORIAL = """\
Not all ranks joining collective 5 at entry 4
group info: 0:default_pg
collective: nccl:all_reduce
missing ranks: {1}
input sizes: [[3, 4]]
output sizes: [[3, 4]]
expected ranks: 2
collective state: scheduled
collective stack trace:
  all_reduce at /home/cpio/local/pytorch/torch/distributed/distributed_c10d.py:2696
  wrapper at /home/cpio/local/pytorch/torch/distributed/c10d_logger.py:83
  <module> at /home/cpio/test/crash.py:44
"""


def test_the_flight_recorder_analysers_report_names_the_missing_ranks(tmp_path):
    report = _analyze(tmp_path, {"fr_trace.out": FR_TRACE})
    assert report.verdict.category != "none"
    top = report.findings[0]
    assert top.rule == "AN-FRTRACE-MISSING-RANKS" and top.ranks == [3, 4, 5, 6, 7]
    assert "gaussian_splatting.py:650" in top.summary  # the job's own frame, not only c10d's


def test_every_generation_of_the_analyser_output_is_read(tmp_path):
    report = _analyze(tmp_path, {"torchfrtrace.txt": FR_TUTORIAL})
    event = report.events.filter(report.events["kind"] == "flight.analysis").row(0, named=True)
    assert (event["seq"], event["op"], event["key"], event["nranks"]) == (5, "all_reduce", "1", 2)
    assert report.findings[0].ranks == [1] and "crash.py:44" in report.findings[0].summary


# fixtures/public/nccl_ras_allgather_opcount_mismatch (NCCL 2.26 RAS client)
RAS = """\
#0-0 (fa93daea854b060b) MISMATCH
  Communicator ranks have different AllGather operation counts
  30 ranks have launched up to operation 640
  2 ranks have launched up to operation 641
  Rank 12 -- GPU 4 managed by process 323032 on node 10.137.190.124
  Rank 13 -- GPU 5 managed by process 323033 on node 10.137.190.124
"""


def test_ras_operation_count_mismatch_is_a_failure(tmp_path):
    report = _analyze(tmp_path, {"ncclras.out": RAS})
    event = report.events.filter(report.events["kind"] == "nccl.ras_mismatch").row(0, named=True)
    assert (event["op"], event["detail"], event["key"], event["nranks"]) == ("AllGather", "30:640 2:641", "12,13", 32)
    assert report.verdict.category != "none"
    assert report.findings[0].rule == "AN-RAS-MISMATCH" and report.findings[0].category == "rank_divergence"


# fixtures/public/llamafactory_tokenizer_rank0_30min: rank 0's tokenizer bar is glued to the others' timeouts
LLAMAFACTORY = """\
Running tokenizer on dataset:   9%|███████▊                                                                           | 280000/2969526 [29:55<4:48:08, 155.57 examples/s][E ProcessGroupNCCL.cpp:475] [Rank 2] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=2, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=1800000) ran for 1800328 milliseconds before timing out.
[E ProcessGroupNCCL.cpp:475] [Rank 1] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=2, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=1800000) ran for 1800572 milliseconds before timing out.
Running tokenizer on dataset:   0%|                                                                                                   | 0/2969526 [00:00<?, ? examples/s][E ProcessGroupNCCL.cpp:475] [Rank 3] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=2, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=1800000) ran for 1800655 milliseconds before timing out.
[E ProcessGroupNCCL.cpp:489] Some NCCL operations have failed or timed out. Due to the asynchronous nature of CUDA kernels, subsequent GPU operations might run on corrupted/incomplete data.
"""


def test_a_rank_still_tokenising_while_the_others_time_out_is_a_straggler(tmp_path):
    report = _analyze(tmp_path, {"train.log": LLAMAFACTORY})
    top = report.findings[0]
    assert top.rule == "AN-RANK-BUSY" and top.category == "straggler" and top.ranks == [0]
    assert "280000/2969526" in top.title  # the bar that ran longest


def test_progress_bars_and_step_durations_are_read():
    bar = last_bar("Tokenizing Prompts (num_proc=64):  92%|█████████▏| 328986/359152 [29:58<12:05, 41.59 examples/s]")
    assert (bar["pct"], bar["n"], bar["total"], bar["elapsed"]) == ("92", "328986", "359152", "29:58")
    # fixtures/public/yolov5_4gpu_rank0_val_map_ranks123_broadcast_60s: a bar format without the bar itself
    bar = last_bar("               Class     Images     Labels          P          R     mAP@.5 mAP@.5:.95:  72% 23/32 "
                   "[01:07<00:25,  2.80s/it]")
    assert (bar["pct"], bar["n"], bar["total"], bar["elapsed"]) == ("72", "23", "32", "01:07")
    assert last_bar("loss 0.5 100% 3/3 done") is None  # a percent and a count without tqdm's [elapsed<left
    # fixtures/public/slow_rank3_completes
    assert durations(" 4/10 compute 0.60s sync_wait 0.02s") == [("compute", 0.6), ("sync_wait", 0.02)]


# fixtures/public/slow_rank3_completes (torchrun --tee 3, gloo; the job never fails)
def _slow_rank(node: str, ranks: tuple[int, int], seconds: tuple[str, str]) -> str:
    lines = []
    for step in range(1, 11):
        for local, (rank, compute) in enumerate(zip(ranks, seconds, strict=True)):
            lines.append(f"[default{local}]:[rank {rank}] step {step}/10 compute {compute}s sync_wait 0.63s")
    return "\n".join(lines) + "\n"


def test_a_rank_whose_steps_are_much_slower_is_a_straggler_though_nothing_fails(tmp_path):
    report = _analyze(tmp_path, {"node-a/console.log": _slow_rank("node-a", (0, 1), ("0.00", "0.01")),
                                 "node-b/console.log": _slow_rank("node-b", (2, 3), ("0.00", "0.60"))})
    assert report.verdict.category == "straggler"
    assert report.findings[0].rule == "AN-SLOW-RANK" and report.findings[0].ranks == [3]


def _dump(source: Path, **changes) -> dict:
    data = json.loads(source.read_text())
    for entry in data["entries"]:
        entry.update(changes)
    return data


@needs_samples
def test_a_rank_that_completed_the_previous_collective_is_late_not_diverged(tmp_path):
    # the real desync dumps as NCCL would record them: every collective that ran is completed
    for rank in (0, 1):
        data = _dump(SAMPLES / "desync" / f"fr_trace_json_rank_{rank}.json", state="completed")
        for entry in data["entries"]:
            entry["profiling_name"] = entry["profiling_name"].replace("gloo:", "nccl:")
        if rank == 0:
            data["entries"][-1]["state"] = "scheduled"  # the collective rank 0 waits in
        (tmp_path / f"nccl_trace_rank_{rank}.json").write_text(json.dumps(data))
    report = nccllens.analyze(str(tmp_path))
    late = [f for f in report.findings if f.rule == "AN-FLIGHT-LATE"]
    assert late and late[0].ranks == [1] and late[0].category == "straggler"


@needs_samples
def test_a_group_member_without_a_dump_is_named(tmp_path):
    data = _dump(SAMPLES / "desync" / "fr_trace_json_rank_0.json")
    data["pg_config"] = {"0": {"name": "0", "desc": "default_pg", "ranks": "[0, 1]"}}  # as NCCL writes it
    (tmp_path / "fr_trace_json_rank_0.json").write_text(json.dumps(data))
    report = nccllens.analyze(str(tmp_path))
    assert report.verdict.category != "none"
    found = [f for f in report.findings if f.rule == "AN-FLIGHT-NO-DUMP"]
    assert found and found[0].ranks == [1]


def test_frtrace_parser_reads_the_one_line_print_of_torch_2_4():
    from nccllens.parse.base import FileContext, Line

    text = ("Not all ranks joining collective for group 0:default_pg collective nccl:all_reduce  "
            "Missing ranks are {1}  [[3, 4]] [[3, 4]] 2 scheduled")
    events = list(parse_frtrace([Line("f", 1, text, text)], FileContext("f")))
    assert (events[0]["pg"], events[0]["op"], events[0]["key"]) == ("0:default_pg", "all_reduce", "1")


def test_errors_after_every_rank_finished_are_context(tmp_path):
    """fixtures/healthy_clean (real torchrun run, both agents report SUCCEEDED), plus a finding quoting a line
    printed after that (pytorch/pytorch#128680: the heartbeat monitor losing the store at exit)."""
    from nccllens.analyses.shutdown import quiet_after_finish
    from nccllens.report.model import Evidence, Finding

    fixture = Path(__file__).resolve().parents[2] / "fixtures" / "healthy_clean"
    report = nccllens.analyze(str(fixture))
    assert report.verdict.category == "none"
    log = fixture / "node-a" / "console.log"
    lines = log.read_text().splitlines()
    finished = next(i for i, text in enumerate(lines, 1) if "WorkerState.SUCCEEDED" in text)
    noise = ("[rank1]:[E614 11:14:03.086670611 ProcessGroupNCCL.cpp:1319] [PG 0 Rank 1] Failed to get exception "
             "dump flag from the global store.Connection reset by peer")

    def finding(line: int) -> Finding:
        return Finding(id="", rule="NL-X", category="peer_exited", severity="error", role="cause", confidence=0.6,
                       title="t", summary="s", remediation="r", evidence=[Evidence(str(log), line, noise)])

    after, before = finding(finished + 1), finding(finished - 1)
    quiet_after_finish([after, before], report.events, report.ranks)
    assert (after.severity, after.role) == ("info", "context")
    assert (before.severity, before.role) == ("error", "cause")


def test_gloo_the_rank_absent_from_the_set_that_timed_out_is_named(tmp_path):
    """fixtures/uneven_batches (real torchrun + gloo run) with rank 0's own timeout traceback left out: ranks
    1-3 time out in gloo, rank 0 is only in the failure table, stopped by the agent (-15): it never entered
    the collective."""
    fixture = Path(__file__).resolve().parents[2] / "fixtures" / "uneven_batches"
    files = {}
    for node in ("node-a", "node-b"):
        lines = (fixture / node / "console.log").read_text().splitlines(keepends=True)
        files[f"{node}/console.log"] = "".join(x for x in lines if not x.startswith("[rank0]:"))
    report = _analyze(tmp_path, files)
    found = [f for f in report.findings if f.rule == "AN-GLOO-ABSENT"]
    assert found and found[0].ranks == [0] and found[0].category == "straggler"
    # the untouched run: every rank timed out, nobody is absent
    assert not [f for f in nccllens.analyze(str(fixture)).findings if f.rule == "AN-GLOO-ABSENT"]


def test_a_job_stopped_at_its_wall_clock_limit_is_never_healthy(tmp_path):
    # GitHub Actions after a step's `timeout` stopped it (the line as CI logs quoted in public threads print it)
    report = _analyze(tmp_path, {"ci.log": "##[error]Process completed with exit code 124.\n"})
    assert report.verdict.category == "job_killed"
    assert report.findings[0].rule == "AN-WALLCLOCK-KILL"


@needs_samples
def test_a_missing_gloo_dump_is_named_without_pg_config(tmp_path):
    # gloo writes an empty pg_config: rank 1's dump alone still says rank 0 exists (ranks below it do)
    (tmp_path / "fr_trace_rank_1").write_bytes((SAMPLES / "desync" / "fr_trace_rank_1").read_bytes())
    report = nccllens.analyze(str(tmp_path))
    found = [f for f in report.findings if f.rule == "AN-FLIGHT-NO-DUMP"]
    assert found and found[0].ranks == [0] and report.verdict.category != "none"


PUBLIC = Path(__file__).resolve().parents[2] / "fixtures" / "public"


def test_a_one_node_run_stuck_in_its_first_collective_suspects_peer_to_peer(tmp_path):
    # fixtures/public/nccl248_1080ti_allreduce_hang_iommu: nccl-tests printed its header and no result row
    log = (PUBLIC / "nccl248_1080ti_allreduce_hang_iommu" / "all_reduce_perf.log").read_text()
    report = _analyze(tmp_path, {"all_reduce_perf.log": log})
    top = report.findings[0]
    assert top.rule == "AN-FIRST-COLLECTIVE-HANG" and top.category == "p2p_topology"
    assert top.hosts == ["jupyter-vmarkovtsev"] and "NCCL_P2P_DISABLE=1" in top.remediation
    # the same test on another host that completed (results, summary) is healthy
    ok = (PUBLIC / "nccltests_single_host_g2_ok_p2p_off" / "all_reduce_perf_g2.log").read_text()
    assert _analyze(tmp_path / "ok", {"all_reduce_perf_g2.log": ok}).verdict.category == "none"


def test_nccl_tests_column_header_without_a_row_is_the_first_size_hanging_even_without_nccl_lines(tmp_path):
    # fixtures/public/nccltests_2x4090_allreduce_hang_no_p2p (https://github.com/NVIDIA/nccl-tests/issues/117):
    # no NCCL_DEBUG, the column header (printed once the communicators are up) and no result row
    log = (PUBLIC / "nccltests_2x4090_allreduce_hang_no_p2p" / "all_reduce_perf.log").read_text()
    top = _analyze(tmp_path, {"all_reduce_perf.log": log}).findings[0]
    assert (top.rule, top.category, top.hosts) == ("AN-FIRST-COLLECTIVE-HANG", "p2p_topology", ["4090-01-R02"])


def test_an_nccl_tests_banner_whose_hash_a_paste_lost_still_starts_the_test(tmp_path):
    # https://github.com/NVIDIA/nccl/issues/182: NCCL 2.4 all_reduce_perf on two GPUs of one Ryzen box stops after the
    # ring is set up; the paste lost the banner's "# n" ("Thread 1 nGpus 2 minBytes 8 ...")
    log = (PUBLIC / "nccltests_ryzen_2gpu_p2p_direct_stuck_svm_virtualization" / "all_reduce_perf.log").read_text()
    top = _analyze(tmp_path, {"all_reduce_perf.log": log}).findings[0]
    assert (top.rule, top.category, top.hosts) == ("AN-FIRST-COLLECTIVE-HANG", "p2p_topology", ["kyoungrok-ryzen"])


def test_an_nccl_1x_test_is_one_process_on_one_node_even_without_a_host(tmp_path):
    # https://github.com/NVIDIA/nccl/issues/104: NCCL 1.x's single-process all_reduce_test on 8 M40s stops after
    # its column header ("> out-of-place in-place"); its device lines name no host, one process drives them all
    log = (PUBLIC / "nccl_single_test_8xm40_stall_acs_enabled" / "all_reduce_test.out").read_text()
    report = _analyze(tmp_path, {"all_reduce_test.out": log})
    top = report.findings[0]
    assert (top.rule, top.category, top.hosts) == ("AN-FIRST-COLLECTIVE-HANG", "p2p_topology", [])
    assert "the test's node" in top.title and "?" not in top.title


@pytest.mark.parametrize("case, rule", [("gloo_prep_busy_rank2_peers_time_out", "AN-RANK-BUSY"),
                                        ("gloo_hung_rank2_peers_time_out", "AN-GLOO-ABSENT")])
def test_real_gloo_runs_name_the_late_rank(tmp_path, case, rule):
    """Real torchrun + gloo runs (fixtures/public, made here): rank 2 busy preparing data, or hung, while the
    others time out; the rank that never entered the collective is named, as a straggler."""
    report = _analyze(tmp_path, {"console.log": (PUBLIC / case / "console.log").read_text()})
    top = report.findings[0]
    assert (top.rule, top.category, top.ranks) == (rule, "straggler", [2])


def test_a_restart_that_fails_in_set_up_is_no_divergence(tmp_path):
    """fixtures/public/single_node_restart_after_sigkill_fails (real run): attempt 0 dies in all_reduce after a
    SIGKILL, attempt 1 in creating its process group; the tracebacks of the two attempts are not compared."""
    log = (PUBLIC / "single_node_restart_after_sigkill_fails" / "node-a" / "console.log").read_text()
    report = _analyze(tmp_path, {"node-a/console.log": log})
    assert not [f for f in report.findings if f.rule == "AN-TRACEBACK-DIVERGENCE"]


# source: https://github.com/meta-pytorch/torchtune/issues/1165 (ranks 1-3 time out; rank 0 is saving a checkpoint)
RANKS_1_TO_3_TIME_OUT = """\
[rank3]:[E ProcessGroupNCCL.cpp:563] [Rank 3] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=15037, OpType=_ALLGATHER_BASE, NumelIn=131072512, NumelOut=524290048, Timeout(ms)=600000) ran for 600055 milliseconds before timing out.
[rank1]:[E ProcessGroupNCCL.cpp:563] [Rank 1] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=15037, OpType=_ALLGATHER_BASE, NumelIn=131072512, NumelOut=524290048, Timeout(ms)=600000) ran for 600059 milliseconds before timing out.
[rank2]:[E ProcessGroupNCCL.cpp:563] [Rank 2] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=15037, OpType=_ALLGATHER_BASE, NumelIn=131072512, NumelOut=524290048, Timeout(ms)=600000) ran for 600086 milliseconds before timing out.
"""


def test_without_a_stated_size_the_ranks_below_the_highest_seen_still_exist(tmp_path):
    (tmp_path / "train.log").write_text(RANKS_1_TO_3_TIME_OUT)
    report = nccllens.analyze(str(tmp_path))
    absent = next(f for f in report.findings if f.rule == "AN-COLLECTIVE-ABSENT")
    assert absent.ranks == [0]


def test_one_rank_timing_out_alone_names_no_absent_rank(tmp_path):
    (tmp_path / "train.log").write_text(RANKS_1_TO_3_TIME_OUT.splitlines()[0] + "\n")
    report = nccllens.analyze(str(tmp_path))
    assert not any(f.rule == "AN-COLLECTIVE-ABSENT" for f in report.findings)


# source: https://github.com/uzh-rpg/RVT/issues/18 (PyTorch ≤ 2.0 store-based barrier, Lightning + Hydra, 2 GPUs)
BARRIER_WAIT = """\
[2023-07-14 18:21:31,182][torch.distributed.distributed_c10d][INFO] - Waiting in store based barrier to initialize process group for rank: 0, key: store_based_barrier_key:1 (world_size=2, worker_count=1, timeout=0:30:00)
[2023-07-14 18:21:41,193][torch.distributed.distributed_c10d][INFO] - Waiting in store based barrier to initialize process group for rank: 0, key: store_based_barrier_key:1 (world_size=2, worker_count=1, timeout=0:30:00)
"""


def test_a_store_barrier_that_never_completes_names_the_rank_that_never_came(tmp_path):
    (tmp_path / "run.log").write_text(BARRIER_WAIT)
    report = nccllens.analyze(str(tmp_path))
    assert report.verdict.category == "rendezvous_timeout"
    assert report.findings[0].ranks == [1]
    assert "1 of 2 ranks" in report.findings[0].title


def test_a_store_barrier_that_completes_is_no_finding(tmp_path):
    # the completion line: "Rank 0: Completed store-based barrier for key:store_based_barrier_key:1 with 2 nodes."
    # (synthetic: built from that format string, torch 1.13 distributed_c10d.py _store_based_barrier)
    (tmp_path / "run.log").write_text(
        BARRIER_WAIT + "[2023-07-14 18:21:45,000][torch.distributed.distributed_c10d][INFO] - Rank 0: Completed "
        "store-based barrier for key:store_based_barrier_key:1 with 2 nodes.\n")
    report = nccllens.analyze(str(tmp_path))
    assert not any(f.rule == "AN-STORE-BARRIER-STUCK" for f in report.findings)


def test_rank_zero_validating_alone_while_the_others_time_out_in_broadcast_is_the_straggler(tmp_path):
    # https://github.com/ultralytics/yolov5/issues/4409 (fixtures/public/yolov5_4gpu_rank0_val_map_ranks123_broadcast_60s):
    # one shared console; rank 0's validation bar keeps moving while ranks 1-3 time out in BROADCAST
    case = Path(__file__).resolve().parents[2] / "fixtures" / "public" / "yolov5_4gpu_rank0_val_map_ranks123_broadcast_60s"
    report = _analyze(tmp_path, {"train.log": (case / "train.log").read_text()})
    top = report.findings[0]
    assert top.category == "straggler" and top.ranks == [0]


def test_a_silent_rank_while_the_others_only_time_out_is_a_timeout_suspect_not_a_dead_peer(tmp_path):
    # https://github.com/modelscope/DiffSynth-Studio/issues/458 (fixtures/public/diffsynth_lightning_modelparallel_8gpu_coalesced_seq610_timeout):
    # the others time out in one coalesced collective; nothing shows the silent rank died
    case = Path(__file__).resolve().parents[2] / "fixtures" / "public" / "diffsynth_lightning_modelparallel_8gpu_coalesced_seq610_timeout"
    files = {p.name: p.read_text() for p in case.iterdir() if p.name not in ("expected.toml", "SOURCE.md")}
    top = _analyze(tmp_path, files).findings[0]
    assert top.rule == "AN-SILENT-RANK" and top.category == "collective_timeout"


def test_a_fingerprint_mismatch_names_the_rank_that_counts_fewer_collectives(tmp_path):
    """fixtures/public/simpletuner_rank7_reduce_seq0_vs_allgather_seq101 (a SimpleTuner issue): rank 1 is at
    SequenceNumber 101 (ALLGATHER) and tells that rank 7 is at SequenceNumber 0 (REDUCE); rank 7 printed
    nothing. The rank whose fingerprint counts fewer collectives skipped what the others issued."""
    log = (PUBLIC / "simpletuner_rank7_reduce_seq0_vs_allgather_seq101" / "console.log").read_text()
    top = _analyze(tmp_path, {"console.log": log}).findings[0]
    assert (top.rule, top.category, top.ranks) == ("AN-FINGERPRINT-MISMATCH", "rank_divergence", [7])


def test_the_failed_call_nccl_tests_stops_at_is_an_error_of_its_host(tmp_path):
    # https://github.com/NVIDIA/nccl-tests/issues/264: 8x H100 with the Fabric Manager stopped (CUDA error 802)
    log = (PUBLIC / "nccltests_8xh100_cuda802_system_not_initialized_fabricmanager_off" / "run.log").read_text()
    report = _analyze(tmp_path, {"run.log": log})
    top = report.findings[0]
    assert (report.verdict.category, top.rule, top.hosts) == ("gpu_hardware", "NL-GPU-022", ["test"])
    failed = report.events.filter(report.events["kind"] == "progress.bench_failure")
    assert failed["value"].to_list() == ["system not yet initialized"]


# fixtures/public/minillm_2xh100_eval_rank1_allgather_5h_timeout_rank0_still_generating: tqdm shows 497/499
# as 100%; the all-gather's element counts state the group's size (998 = 2 x 499)
MINILLM = """\
Generation Evaluation: 100%|█████████▉| 497/499 [18:29:58<05:20, 160.10s/it][E ProcessGroupNCCL.cpp:475] [Rank 1] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=22134630, OpType=ALLGATHER, NumelIn=499, NumelOut=998, Timeout(ms)=18000000) ran for 18000109 milliseconds before timing out.
"""


def test_an_all_gather_states_its_group_size_and_a_rounded_bar_is_still_busy(tmp_path):
    report = _analyze(tmp_path, {"console.log": MINILLM})
    assert report.job.world_size == 2
    top = report.findings[0]
    assert (top.rule, top.category, top.ranks) == ("AN-RANK-BUSY", "straggler", [0])
    assert "497/499" in top.title


def test_group_size_from_element_counts():
    from nccllens.parse.torch_patterns import group_size

    assert group_size("ALLGATHER", "499", "998") == 2
    assert group_size("_ALLGATHER_BASE", "48128", "192512") == 4
    assert group_size("_REDUCE_SCATTER_BASE", "4096", "1024") == 4
    assert group_size("ALLREDUCE", "11", "11") is None  # an all-reduce keeps its size: nothing stated
    assert group_size("ALLGATHER", "499", "999") is None  # not a multiple: no size
    assert group_size("ALLGATHER", "0", "0") is None


# fixtures/public/yolov5_o365_rank0_label_scan_ranks267_allreduce_seq2_30min: rank 0's label scan bar, cut
# off by the watchdog's output before its counts, while ranks 2, 6 and 7 time out in the barrier
YOLO_CUT = """\
train: Scanning '/mnt/mfs2/hao.shen/hao.shen/data/o365_datasets/labels/train' images and labels...113162 found, 0 missing, 0 empty, 0 corrupt:   6%|▋ [E ProcessGroupNCCL.cpp:414] Some NCCL operations have failed or timed out. Due to the asynchronous nature of CUDA kernels, subsequent GPU operations might run on corrupted/incomplete data. To avoid data inconsistency, we are taking the entire process down.
terminate called after throwing an instance of 'std::runtime_error'
  what():  [Rank 7] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=2, OpType=ALLREDUCE, Timeout(ms)=1800000) ran for 1806530 milliseconds before timing out.
[E ProcessGroupNCCL.cpp:737] [Rank 6] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=2, OpType=ALLREDUCE, Timeout(ms)=1800000) ran for 1806610 milliseconds before timing out.
[E ProcessGroupNCCL.cpp:737] [Rank 2] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=2, OpType=ALLREDUCE, Timeout(ms)=1800000) ran for 1806649 milliseconds before timing out.
"""

# fixtures/public/yolov5_objects365_8gpu_rank0_cache_images_allreduce_seq3_timeout (second run): YOLO's bar
# format ``n/total elapsed`` right after rank 3's ``what():``
YOLO_CACHE = """\
[E ProcessGroupNCCL.cpp:460] To avoid data inconsistency, we are taking the entire process down.
terminate called after throwing an instance of 'std::runtime_error'
  what():  [Rank 3] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=3, OpType=ALLREDUCE, Timeout(ms)=18000000) ran for 18006754 milliseconds before timing out.
train: Caching images (867.2GB disk):  44%|████▍     | 634759/1443668 4:12:06
"""


@pytest.mark.parametrize("text", [YOLO_CUT, YOLO_CACHE])
def test_the_main_process_bar_cut_by_the_timeouts_is_a_busy_rank_0(tmp_path, text):
    top = _analyze(tmp_path, {"train.log": text}).findings[0]
    assert (top.rule, top.category, top.ranks) == ("AN-RANK-BUSY", "straggler", [0])


def test_what_ends_where_a_progress_bar_is_redrawn(tmp_path):
    report = _analyze(tmp_path, {"train.log": YOLO_CACHE})
    terminate = report.events.filter(report.events["kind"].cast(str) == "cpp.terminate")
    assert "Caching images" not in terminate["message"][0]
    bar = report.events.filter(report.events["kind"].cast(str) == "progress.bar")
    assert bar["detail"].to_list() == ["634759/1443668 [4:12:06<?]"]


# a tqdm bar in its usual shape goes to the dense progress summary, not to events: it still counts.
# Synthetic arrangement of real lines: the bar and the timeout of
# fixtures/public/minillm_2xh100_eval_rank1_allgather_5h_timeout_rank0_still_generating, each on a line of its own
def test_a_summarised_tqdm_bar_still_shows_a_busy_rank(tmp_path):
    text = ("[E ProcessGroupNCCL.cpp:475] [Rank 1] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=22134630, "
            "OpType=ALLGATHER, NumelIn=499, NumelOut=998, Timeout(ms)=18000000) ran for 18000109 milliseconds before timing out.\n"
            "Generation Evaluation: 100%|█████████▉| 497/499 [18:29:58<05:20, 160.10s/it]\n")
    top = _analyze(tmp_path, {"console.log": text}).findings[0]
    assert (top.rule, top.ranks) == ("AN-RANK-BUSY", [0])


# fixtures/lines/ad_stragglers_kills_timeouts.tsv (https://github.com/open-mmlab/mmtracking/issues/557): OpenMMLab's
# result-collection bar on the main process, its own watchdog's timeout glued after it; the fix was a longer timeout
MMTRACKING = (
    "[>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>           ] 1126168/1426764, 137.6 task/s, elapsed: 8183s, ETA:  2184s"
    "[E ProcessGroupNCCL.cpp:719] [Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=6, "
    "OpType=ALLREDUCE, Timeout(ms)=1800000) ran for 1808307 milliseconds before timing out.\n"
    "terminate called after throwing an instance of 'std::runtime_error'\n"
)


def test_an_openmmlab_bar_reads_as_a_bar_with_its_counts_and_clock():
    bar = last_bar(MMTRACKING.splitlines()[0])
    assert (bar["n"], bar["total"], bar["pct"], bar["elapsed"], bar["left"]) == (
        "1126168", "1426764", "78", "2:16:23", "36:24")


def test_a_bar_that_outlasted_the_timeout_makes_the_main_process_the_straggler(tmp_path):
    report = _analyze(tmp_path, {"train.log": MMTRACKING})
    top = report.findings[0]
    assert (top.rule, top.category, list(top.ranks)) == ("AN-RANK-BUSY", "straggler", [0])
    assert "1126168/1426764" in top.title


# fixtures/public/nanotron_rank0_grouping_texts_ranks2_3_allreduce_seq3_timeout: rank 0's bar with rank 2's watchdog
# line glued after it (tqdm redraws without a newline), that record hard-wrapped by the terminal at 175 columns
NANOTRON = Path(__file__).resolve().parents[2] / "fixtures/public/nanotron_rank0_grouping_texts_ranks2_3_allreduce_seq3_timeout"


def test_a_line_two_writers_were_glued_into_gives_each_its_record(tmp_path):
    report = _analyze(tmp_path, {"train.log": (NANOTRON / "train.log").read_text(encoding="utf-8")})
    kinds = report.events.select("line", "kind", "rank").rows()
    assert (1, "progress.bar", 0) in kinds and (1, "torch.watchdog_timeout", 2) in kinds
    top = report.findings[0]
    assert (top.rule, top.category, list(top.ranks)) == ("AN-RANK-BUSY", "straggler", [0])


# fixtures/public/flagembedding_allgather_rank1_seq6206_vs_6207_size_mismatch: a training bar with no rank, glued
# before rank 2's timeout, while ranks 0, 1 and 2 time out: the main process, the bars' writer, waits too, so the bar
# stopped with it and names no busy rank; rank 1, one collective behind, is the story
FLAGEMBEDDING = (Path(__file__).resolve().parents[2]
                 / "fixtures/public/flagembedding_allgather_rank1_seq6206_vs_6207_size_mismatch")


def test_a_bar_with_no_rank_while_the_main_process_waits_names_no_busy_rank(tmp_path):
    report = _analyze(tmp_path, {"console.log": (FLAGEMBEDDING / "console.log").read_text(encoding="utf-8")})
    assert "AN-RANK-BUSY" not in [f.rule for f in report.findings]
    top = report.findings[0]
    assert (top.category, list(top.ranks)) == ("rank_divergence", [1])


# fixtures/public/nccltests_2node_cxi_ofi_plugin_symbol_warnings_healthy: a two-node nccl-tests run that finished
# ("Out of bounds values : 0 OK", every communicator destroyed); NCCL printed one NCCL_CROSS_NIC line on one node
# only (the paste was cut): a setting that differs between the nodes of a job that finished broke nothing
CXI_HEALTHY = Path(__file__).resolve().parents[2] / "fixtures/public/nccltests_2node_cxi_ofi_plugin_symbol_warnings_healthy"


def test_a_setting_that_differs_between_nodes_of_a_finished_job_is_context(tmp_path):
    report = _analyze(tmp_path, {"nccl_tests.log": (CXI_HEALTHY / "nccl_tests.log").read_text(encoding="utf-8")})
    assert report.verdict.category == "none"
    mismatch = [f for f in report.findings if f.rule == "AN-CONFIG-MISMATCH"]
    assert mismatch and all((f.severity, f.role) == ("info", "context") for f in mismatch)


def test_ranks_the_desync_report_says_joined_the_collective_are_neither_busy_nor_missing(tmp_path):
    # https://github.com/hiyouga/LlamaFactory/issues/9496: a tqdm bar drawn once at 0/4325, then rank 6's timeout whose
    # desync report says all 16 ranks joined collective #730 and none finished: nobody was late, rank 0 included
    case = Path(PROJECT) / "fixtures" / "public" / "llamafactory_multinode_first_step_allreduce_730_all16_joined_none_finished"
    report = _analyze(tmp_path, {"node.log": (case / "node.log").read_text(encoding="utf-8")})
    assert not [f for f in report.findings if f.rule in ("AN-RANK-BUSY", "AN-RANK0-NOT-WAITING")]
    assert report.findings[0].category == "collective_timeout"


def test_a_node_whose_launcher_only_started_its_workers_has_not_failed(tmp_path):
    # fixtures/public/kubeflow_fsdp_llama2_2node_socket_no_net_plugin: one pod's torchrun log up to "Starting worker
    # group" and its NCCL set-up, and a grep of both pods' training epochs; the run trained two epochs and saved
    case = Path(PROJECT) / "fixtures/public/kubeflow_fsdp_llama2_2node_socket_no_net_plugin"
    report = _analyze(tmp_path, {p.name: p.read_text(encoding="utf-8") for p in case.glob("*.log")})
    assert not any(f.rule == "AN-SILENT-RANK" for f in report.findings)
    assert not any(f.severity in ("critical", "error") for f in report.findings)
    assert report.verdict.category in ("none", "unknown")


def test_a_launcher_that_started_its_workers_is_no_failed_node_beside_a_quiet_one(tmp_path):
    # lines as fixtures/public/kubeflow_fsdp_llama2_2node_socket_no_net_plugin prints them (torch 2.5 agent, NCCL
    # 2.21), one node each: neither node failed, so the quieter one did not "go silent while the others failed"
    report = _analyze(tmp_path, {
        "worker-0.log": "INFO 2024-12-10 18:28:01,790 [default] Starting worker group\n"
                        "fsdp-worker-0:73:356 [0] NCCL INFO Channel 00 : 0[0] -> 1[1] via SHM/direct/direct\n",
        "worker-1.log": "fsdp-worker-1:73:356 [0] NCCL INFO Channel 00 : 2[0] -> 3[1] via SHM/direct/direct\n"})
    assert not any(f.rule == "AN-SILENT-RANK" for f in report.findings)
