"""slurm family: slurmstepd cancellations and OOM kills, srun task failures.

Real lines from fixtures/public/slurm (sources in that folder) or the public issue cited next to them.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import polars as pl
from hypothesis import given, settings
from hypothesis import strategies as st

import nccllens
from nccllens.parse import slurm
from nccllens.parse.base import FileContext, Line

FIXTURES = str(Path(__file__).resolve().parents[2] / "fixtures" / "public" / "slurm")


def run(text: str) -> list[dict]:
    lines = [Line(file="x.log", line=i + 1, raw=s, message=s, row=i) for i, s in enumerate(text.split("\n"))]
    keep = pl.Series([ln.message for ln in lines]).str.contains(slurm.PREFILTER).to_list()
    survivors = [ln for ln, k in zip(lines, keep, strict=True) if k]
    events = list(slurm.parse(survivors, FileContext(path="x.log", year=2026)))
    assert all(e["kind"].startswith("slurm.") and e["family"] == "slurm" for e in events)
    everything = list(slurm.parse(lines, FileContext(path="x.log", year=2026)))
    assert events == everything  # the PREFILTER keeps every line parse() reads
    return events


def test_job_cancelled_due_to_time_limit_with_host_and_time():
    # real: https://github.com/marbl/canu/issues/1052
    (e,) = run("slurmstepd: error: *** JOB 3884617 ON node023 CANCELLED AT 2018-08-19T16:30:21 DUE TO TIME LIMIT ***")
    assert e["kind"] == "slurm.cancelled"
    assert (e["value"], e["host"], e["key"]) == ("TIME LIMIT", "node023", "JOB 3884617")
    assert e["ts"] == datetime(2018, 8, 19, 16, 30, 21) and e["ts_kind"] == "absolute"
    assert e["level"] == "error"


def test_job_and_step_cancelled_redacted_host_and_srun_abort():
    aborted, job, step = run(open(f"{FIXTURES}/job_and_step_cancelled_due_to_time_limit.log").read())
    assert aborted["kind"] == "slurm.step_error" and aborted["value"].startswith("Job step aborted")
    assert job["key"] == "JOB 494583" and "host" not in job  # "ON ..." was redacted in the issue
    assert step["key"] == "STEP 494583.0" and step["value"] == "TIME LIMIT"


def test_preemption_and_requeue_and_user_cancel():
    # real: https://github.com/facebookincubator/submitit/issues/1613
    text = ("slurmstepd: error: *** STEP 37361369.0 ON learnfair5146 CANCELLED AT 2021-03-15T17:50:23 ***\n"
            "slurmstepd: error: *** JOB 37361369 ON learnfair5146 CANCELLED AT 2021-03-15T18:00:46 DUE TO "
            "PREEMPTION ***")
    plain, preempted = run(text)
    assert plain["kind"] == "slurm.cancelled" and plain["value"] == "CANCELLED" and plain["host"] == "learnfair5146"
    assert preempted["value"] == "PREEMPTION"
    requeue = [e for e in run(open(f"{FIXTURES}/job_cancelled_due_to_requeue_preemption.log").read())
               if e["kind"] == "slurm.cancelled"]
    # submitit's own line on the node comes first: the signal Slurm sent before requeueing the job
    assert [e["value"] for e in requeue] == ["PREEMPTION", "JOB REQUEUE", "JOB REQUEUE"]
    assert requeue[0]["signal"] == "SIGUSR2" and requeue[0]["host"] == "SERVER_NAME"


def test_submitit_time_limit_names_the_node():
    # real: https://github.com/facebookincubator/submitit/issues/1656
    (e,) = run("[2021-10-21 11:50:15,216][submitit][WARNING] - Caught signal SIGUSR1 on rmc-gpu05: this job is timed-out.")
    assert (e["kind"], e["value"], e["host"], e["signal"]) == ("slurm.cancelled", "TIME LIMIT", "rmc-gpu05", "SIGUSR1")


def test_submitit_refusing_to_requeue_a_timed_out_job_is_a_time_limit():
    # real: https://github.com/facebookincubator/submitit/issues/1776 (a job that was not checkpointable)
    (e,) = run("Job not requeued because: timed-out and not checkpointable.")
    assert (e["kind"], e["value"]) == ("slurm.cancelled", "TIME LIMIT")


def test_node_failure_is_its_own_kind():
    # synthetic: built from "*** %s ON %s CANCELLED AT %s DUE TO NODE FAILURE ***" (slurmstepd), Slurm 23.x
    (e,) = run("slurmstepd: error: *** JOB 5512 ON gpu-a17 CANCELLED AT 2026-01-01T10:00:00 DUE TO NODE FAILURE ***")
    assert e["kind"] == "slurm.node_fail" and e["host"] == "gpu-a17" and e["value"] == "NODE FAILURE"


def test_old_cancel_format_with_host_at_the_end():
    # real: https://github.com/marbl/canu/issues/1067
    (e,) = run("slurmstepd: *** JOB 830329 CANCELLED AT 2018-08-06T17:21:44 DUE TO TIME LIMIT on n447 ***")
    assert (e["kind"], e["value"], e["host"]) == ("slurm.cancelled", "TIME LIMIT", "n447")


def test_slurmstepd_with_host_suffix():
    # real: https://github.com/DataBiosphere/toil/issues/4706
    (e,) = run("slurmstepd-phoenix-07: error: *** JOB 1449736 ON phoenix-07 CANCELLED AT 2023-12-03T12:47:09 "
               "DUE TO TIME LIMIT ***")
    assert e["host"] == "phoenix-07" and e["value"] == "TIME LIMIT"


def test_oom_kill_events_both_wordings_and_srun_out_of_memory():
    # real: https://github.com/chrisknewman/tusas/issues/149
    text = ("slurmstepd: error: Detected 1 oom_kill event in StepId=440575.0. Some of the step tasks have been OOM "
            "Killed.\n"
            "srun: error: nid001277: tasks 1-3: Out Of Memory\n"
            "srun: Terminating StepId=440575.0\n"
            "slurmstepd: error: *** STEP 440575.0 ON nid001277 CANCELLED AT 2023-12-05T07:16:01 ***")
    oom, tasks, terminating, cancelled = run(text)
    assert oom["kind"] == "slurm.oom_kill" and (oom["key"], oom["value"]) == ("440575.0", "1")
    assert tasks["kind"] == "slurm.oom_kill" and tasks["host"] == "nid001277" and "rank" not in tasks
    assert tasks["key"] == "tasks 1-3"
    assert terminating["kind"] == "slurm.step_error" and terminating["key"] == "440575.0"
    assert cancelled["value"] == "CANCELLED"
    (old,) = run(open(f"{FIXTURES}/slurmstepd_oom_kill_event_batch.log").read())
    assert old["kind"] == "slurm.oom_kill" and old["key"] == "191.batch"


def test_an_oom_report_without_the_daemons_name_is_still_one():
    # real: fixtures/public/lightning_srun_16gpu_slurm_oom_kill_dataloader_workers (the job's owner pasted
    # the message with its slurmd-log timestamp, without "slurmstepd:")
    (e,) = run("[2025-10-16T08:52:15.650] error: Detected 3 oom_kill events in StepId=269582.0")
    assert (e["kind"], e["key"], e["value"], e["signal"]) == ("slurm.oom_kill", "269582.0", "3", "SIGKILL")
    assert run("The step may have been killed for lack of memory (no report)") == []


def test_single_task_failures_give_rank_exit_code_and_signal():
    # real: https://github.com/nextflow-io/nextflow/issues/5932 and https://github.com/hafs-community/HAFS/issues/101
    oom, bus = run("srun: error: sdumont6156: task 0: Out Of Memory\nsrun: error: Orion-18-69: task 289: Bus error")
    assert (oom["rank"], oom["host"], oom["signal"]) == (0, "sdumont6156", "SIGKILL")
    assert (bus["kind"], bus["rank"], bus["signal"]) == ("slurm.step_error", 289, "SIGBUS")
    exited = [e for e in run(open(f"{FIXTURES}/job_cancelled_due_to_requeue_preemption.log").read())
              if e.get("exit_code") is not None]
    assert [(e["exit_code"], e["key"]) for e in exited] == [(1, "tasks 2-3")]
    killed = run(open(f"{FIXTURES}/step_cancelled_scancel_srun_debug.log").read())
    (task0,) = [e for e in killed if e.get("rank") is not None]
    assert (task0["rank"], task0["signal"], task0["host"]) == (0, "SIGTERM", "DEL2212S020")


def test_multinode_time_limit_fixture():
    events = run(open(f"{FIXTURES}/step_cancelled_due_to_time_limit_multinode.log").read())
    assert [e["kind"] for e in events].count("slurm.cancelled") == 1
    terminated = [e for e in events if e.get("signal") == "SIGTERM"]
    assert {e["host"] for e in terminated} == {"nid01934", "nid01935"}


def test_srun_debug_chatter_is_not_kept():
    lines = open(f"{FIXTURES}/step_cancelled_scancel_srun_debug.log").read().split("\n")
    debug = "\n".join(ln for ln in lines if ln.startswith("srun: debug") or ln.startswith("srun: launch/"))
    assert run(debug) == []


FRAGMENTS = ["slurmstepd: ", "error: ", "*** ", "JOB ", "STEP ", "123", ".0", " ON ", "node01", " CANCELLED AT ",
             "2026-01-01T10:00:00", " DUE TO ", "TIME LIMIT", " ***", "srun: error: ", ": task ", "tasks 1-3",
             ": Killed", "Exited with exit code ", "Detected 1 oom_kill event in StepId=", "\n", " "]


@settings(max_examples=300, deadline=None)
@given(st.one_of(st.text(), st.lists(st.sampled_from(FRAGMENTS), max_size=30).map("".join)))
def test_parse_never_raises(text):
    for e in run(text):
        assert e["kind"].startswith("slurm.")


def test_slurmstepd_with_its_host_after_a_dash_names_that_host_not_a_prefix_host():
    import nccllens

    # real: https://github.com/ZwwWayne/K-Net/issues/30 (fixtures/public/knet_slurm_cgroup_oom_gpu20_15_task0)
    report = nccllens.analyze(str(Path(FIXTURES).parent / "knet_slurm_cgroup_oom_gpu20_15_task0"))
    top = report.findings[0]
    assert (report.verdict.category, top.hosts, top.ranks) == ("host_oom", ["gpu20-15"], [0])
    assert not any("slurmstepd-" in h for f in report.findings for h in f.hosts)


def test_the_accounting_memory_kill_is_an_oom_kill_and_its_at_some_point_warning_is_not():
    # real: https://github.com/bcbio/bcbio-nextgen/issues/2393 (killed), https://github.com/pepkit/geofetch/issues/13
    # (the warning, printed by jobs that finished too)
    kill, warning = run("slurmstepd-dback-c11-n01: error: Job 848444 exceeded memory limit (33715636 > 32757760), being killed\n"
                        "slurmstepd: error: Exceeded job memory limit at some point.")
    assert (kill["kind"], kill["host"], kill["key"], kill["signal"]) == ("slurm.oom_kill", "dback-c11-n01", "848444", "SIGKILL")
    assert warning["kind"] == "slurm.memory_warning" and warning["level"] == "warning"


def test_the_node_srun_or_salloc_reports_as_failed_is_the_peer_not_the_printer():
    # real: https://github.com/huggingface/m4-logs (an 8-node job's logbook) and https://github.com/nebius/soperator/issues/854
    srun, salloc = run("srun: error: Node failure on jean-zay-iam37\nsalloc: error: Node failure on worker-1")
    assert (srun["kind"], srun["peer"], srun["level"]) == ("slurm.node_fail", "jean-zay-iam37", "error")
    assert (salloc["kind"], salloc["peer"]) == ("slurm.node_fail", "worker-1")
    assert "host" not in srun  # printed by srun on the batch host, not by the node that failed


def test_a_program_slurm_could_not_start_is_the_cause_not_the_step_cancellation(tmp_path):
    # real: https://github.com/huggingface/accelerate/issues/2192 (accelerate not on the step's PATH, 2 nodes)
    (tmp_path / "job.err").write_text(
        "slurmstepd: error: execve(): accelerate: No such file or directory\n"
        "srun: error: cdr2601: task 1: Exited with exit code 2\n"
        "srun: Terminating StepId=19389846.0\n"
        "slurmstepd: error: *** STEP 19389846.0 ON cdr2550 CANCELLED AT 2023-11-27T16:36:09 ***\n"
        "srun: error: cdr2550: task 0: Terminated\n")
    report = nccllens.analyze(str(tmp_path))
    assert report.verdict.category == "application_error"
    assert report.findings[0].rule == "NL-JOB-051"
    assert "execve" in report.findings[0].title
