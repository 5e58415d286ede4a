"""openmpi family: which process mpirun says failed, and which host it could not reach.

Real lines: https://github.com/horovod/horovod/issues/469, https://github.com/PaddlePaddle/Paddle/issues/13288,
https://github.com/horovod/horovod/issues/926, https://github.com/kubeflow/kubeflow/issues/3789
(fixtures/public/kubeflow_openmpi_mpiexec_tcp_worker14_unreachable).
"""

from __future__ import annotations

from pathlib import Path

import nccllens
from nccllens.parse import openmpi
from nccllens.parse.base import FileContext, Line

ROOT = Path(__file__).resolve().parents[2]


def run(*texts: str) -> list[dict]:
    lines = [Line(file="x.log", line=i + 1, raw=t, message=t, row=i) for i, t in enumerate(texts)]
    follow = {ln.line: lines[i + 1:] for i, ln in enumerate(lines)}
    ctx = FileContext(path="x.log", _following=lambda line, n: follow[line.line][:n])
    return list(openmpi.parse(lines, ctx))


def test_the_process_mpirun_noticed_has_its_rank_node_and_signal():
    (e,) = run("mpirun noticed that process rank 140 with PID 363 on node 10.87.102.19 exited on signal 9 (Killed).")
    assert (e["kind"], e["rank"], e["host"], e["pid"], e["signal"]) == (
        "openmpi.process_exit", 140, "10.87.102.19", 363, "SIGKILL")


def test_a_redacted_or_empty_node_is_not_a_host():
    (a,) = run("mpirun noticed that process rank 7 with PID 0 on node HOSTNAME exited on signal 9 (Killed).")
    (b,) = run("mpirun noticed that process rank 0 with PID 0 on node exited on signal 4 (Illegal instruction).")
    assert "host" not in a and "host" not in b and (a["rank"], b["signal"]) == (7, "SIGILL")


def test_the_first_process_with_a_non_zero_status_is_read_from_the_lines_after():
    # synthetic: built from Open MPI's help-orterun.txt text ("%s detected that one or more processes exited
    # with non-zero status, thus causing" / "Process name: [[%d,%d],%d]" / "Exit code:    %d"), Open MPI 4.x
    e, = run("mpirun detected that one or more processes exited with non-zero status, thus causing",
             "the job to be terminated. The first process to do so was:", "",
             "  Process name: [[52013,1],3]", "  Exit code:    1")
    assert (e["rank"], e["exit_code"]) == (3, 1)


def test_the_unreachable_remote_host_is_the_culprit():
    report = nccllens.analyze(str(ROOT / "fixtures" / "public" / "kubeflow_openmpi_mpiexec_tcp_worker14_unreachable"))
    top = report.findings[0]
    assert report.verdict.category == "network_unreachable"
    assert (top.rule, top.hosts) == ("NL-NET-012", ["test-openmpi-worker-14.mpi-test.tfworkflow"])


def test_a_lost_daemon_names_the_node_it_ran_on():
    from nccllens.extract import events_from_text

    # source: https://github.com/NVIDIA/nccl-tests/issues/299 (Open MPI 5, PRTE)
    prte = events_from_text(
        "PRTE has lost communication with a remote daemon.\n\n"
        "  HNP daemon   : [prterun-yj-videogen-multinode-job-master-0-34@0,0] on node yj-videogen-multinode-job-master-0\n"
        "  Remote daemon: [prterun-yj-videogen-multinode-job-master-0-34@0,1] on node (worker_ip)\n")
    lost = prte.filter(prte["kind"].cast(str) == "openmpi.lost_daemon").row(0, named=True)
    assert lost["peer"] == "(worker_ip)" and lost["host"] == "yj-videogen-multinode-job-master-0"
    # source: https://github.com/aws/aws-parallelcluster/issues/301 (Open MPI 3)
    orte = events_from_text(
        " ORTE has lost communication with its daemon located on node:\n\n"
        "   hostname:  ip-10-15-20-17.ec2.internal\n")
    lost = orte.filter(orte["kind"].cast(str) == "openmpi.lost_daemon").row(0, named=True)
    assert lost["peer"] == "ip-10-15-20-17.ec2.internal"


# https://github.com/NVIDIA/nccl-tests/issues/338: a 2-node nccl-tests run whose other process failed first
HUNG_UP = """gpu: Test CUDA failure common.cu:1030 'system not yet initialized'
 .. gpu pid 3018: Test failure common.cu:937
--------------------------------------------------------------------------
An MPI communication peer process has unexpectedly disconnected.  This
usually indicates a failure in the peer process (e.g., a crash or
otherwise exiting without calling MPI_FINALIZE first).

Although this local MPI process will likely now behave unpredictably
(it may even hang or crash), the root cause of this problem is the
failure of the peer -- that is what you need to investigate.  For
example, there may be a core file that you can examine.  More
generally: such peer hangups are frequently caused by application bugs
or other external events.

  Local host: gpu
  Local PID:  4870
  Peer host:  gpu
--------------------------------------------------------------------------
"""


def test_a_peer_that_hung_up_names_the_local_and_the_peer_host():
    (e,) = run(*HUNG_UP.splitlines()[3:])
    assert (e["kind"], e["host"], e["peer"]) == ("openmpi.peer_disconnected", "gpu", "gpu")


def test_the_peer_that_hung_up_is_named_and_yields_to_the_error_before_it(tmp_path):
    (tmp_path / "run.log").write_text(HUNG_UP, encoding="utf-8")
    report = nccllens.analyze(str(tmp_path))
    assert report.findings[0].rule != "NL-NET-016"  # the CUDA failure the peer died of comes first
    hung = [f for f in report.findings if f.rule == "NL-NET-016"]
    assert hung and hung[0].category == "peer_exited" and hung[0].hosts == ["gpu"]


def test_a_peer_host_alone_is_the_culprit(tmp_path):
    # https://github.com/horovod/horovod/issues/1950: the message's first and last lines as pasted
    (tmp_path / "run.log").write_text("An MPI communication peer process has unexpectedly disconnected.  This\n"
                                      "  Peer host:  reco-zl-c4-reco316\n", encoding="utf-8")
    report = nccllens.analyze(str(tmp_path))
    assert report.verdict.category == "peer_exited" and report.findings[0].hosts == ["reco-zl-c4-reco316"]
