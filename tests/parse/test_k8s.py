"""k8s family: OOMKilled / Evicted / preempted / killed containers and crash-loop back-off.

Real lines from the public issue cited next to them; synthetic lines name the format they come from.
"""

from __future__ import annotations

import polars as pl
from hypothesis import given, settings
from hypothesis import strategies as st

from nccllens.parse import k8s
from nccllens.parse.base import FileContext, Line


def run(text: str) -> list[dict]:
    lines = [Line(file="x.log", line=i + 1, raw=s, message=s, row=i) for i, s in enumerate(text.split("\n"))]
    keep = pl.Series([ln.message for ln in lines]).str.contains(k8s.PREFILTER).to_list()
    survivors = [ln for ln, k in zip(lines, keep, strict=True) if k]
    events = list(k8s.parse(survivors, FileContext(path="x.log", year=2026)))
    assert all(e["kind"].startswith("k8s.") and e["family"] == "k8s" for e in events)
    assert events == list(k8s.parse(lines, FileContext(path="x.log", year=2026)))
    return events


def test_describe_and_get_pods_oomkilled():
    # real: https://github.com/hmcts/cnp-flux-config/pull/28772
    text = "\n".join([
        "NAME                                                 READY   STATUS      RESTARTS      AGE",
        "tax-tribunals-application-base-74464f6b98-2kj6g      0/1     OOMKilled   4 (57s ago)   2m40s",
        "    Last State:     Terminated",
        "      Reason:       OOMKilled",
    ])
    pods, reason = run(text)
    assert pods["kind"] == "k8s.killed" and pods["value"] == "OOMKilled"
    assert pods["key"] == "tax-tribunals-application-base-74464f6b98-2kj6g"
    assert reason["value"] == "OOMKilled" and reason["signal"] == "SIGKILL" and reason["level"] == "error"


def test_evicted_pod_describe():
    # real: https://github.com/Greenstand/treetracker-infrastructure/issues/49
    text = ("Status:         Failed\n"
            "Reason:         Evicted\n"
            "Message:        The node was low on resource: memory. Container treetracker-pgpool was using "
            "1275700Ki, which e")
    reason, message = run(text)
    assert reason["value"] == "Evicted"
    assert message["value"] == "Evicted" and message["key"] == "treetracker-pgpool"
    assert message["detail"] == "low on memory"


def test_event_table_eviction_lines():
    # real: https://github.com/FederatedAI/KubeFATE/issues/64
    text = "\n".join([
        "4m11s       Warning   Evicted               pod/egg-<id here>    The node was low on resource: memory. "
        "Container egg was using 5053216Ki, which exceeds its request of 0.",
        "4m11s       Normal    Killing               pod/egg-<id here>    Stopping container egg",
        "4m7s        Warning   Evicted               pod/egg-<id2 here>    The node had condition: [MemoryPressure].",
    ])
    low, condition = run(text)
    assert (low["value"], low["key"]) == ("Evicted", "egg")
    assert condition["value"] == "Evicted" and condition["detail"] == "MemoryPressure"


def test_low_on_resource_alone():
    # real: https://github.com/squat/kilo/issues/329
    (e,) = run("The node was low on resource: memory. Container kilo was using 30332Ki, which exceeds its "
               "request of 0.")
    assert (e["kind"], e["value"], e["key"]) == ("k8s.killed", "Evicted", "kilo")


def test_killing_container_and_back_off():
    # real: https://github.com/kubeflow/kubeflow/issues/1261 and https://github.com/kubernetes/kubernetes/issues/93826
    killing, backoff = run("Killing container with id docker://notebook:Need to kill Pod\n"
                           "Back-off restarting failed container")
    assert killing["value"] == "Killing" and killing["key"] == "docker://notebook"
    assert killing["detail"] == "Need to kill Pod"
    assert backoff["kind"] == "k8s.backoff" and backoff["level"] == "warning"


def test_exit_code_137_is_sigkill_and_exit_code_1_is_not_kept():
    # synthetic: built from kubectl describe's "      Exit Code:    %d" (container state block), kubectl 1.2x;
    # the "Exit Code: 1" line is real, from https://github.com/kubernetes/kubernetes/issues/93826
    (e,) = run("      Exit Code:    137\nExit Code: 1")
    assert (e["value"], e["exit_code"], e["signal"]) == ("ExitCode", 137, "SIGKILL")


def test_preempted_by():
    # synthetic: built from "Preempted by %v/%v on node %v" (kube-scheduler preemption event, ≈1.23; PR #114923)
    (e,) = run("Normal   Preempted  pod/trainer-worker-3   Preempted by default/high-prio-job on node gpu-node-7")
    assert (e["value"], e["host"], e["key"]) == ("Preempted", "gpu-node-7", "trainer-worker-3")


FRAGMENTS = ["OOMKilled", "Evicted", "Reason:", "   ", "The node was low on resource: ", "memory", ". Container ",
             "x was using 1Ki", "Preempted by ", "a/b", " on node ", "n1", "Killing container with id ", "docker://",
             ":", "Exit Code:", "137", "143", "Back-off restarting failed container", "pod/", "\n", "0/1"]


@settings(max_examples=300, deadline=None)
@given(st.one_of(st.text(), st.lists(st.sampled_from(FRAGMENTS), max_size=30).map("".join)))
def test_parse_never_raises(text):
    for e in run(text):
        assert e["kind"].startswith("k8s.")
