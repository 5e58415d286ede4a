"""horovod family: the stall inspector names the ranks a collective waits for.

Real lines: https://github.com/horovod/horovod/issues/1012 (0.16, mpirun --tag-output, fixtures/public/
horovod_docker_broadcast_stall_missing_rank1) and the ≥ 0.20 format as pasted in
https://github.com/DEKHTIARJonathan/HVD_TF_Worker_Desync_BugReport (README).
"""

from __future__ import annotations

from pathlib import Path

import nccllens
from nccllens.parse import horovod
from nccllens.parse.base import FileContext, Line

ROOT = Path(__file__).resolve().parents[2]


def run(*texts: str) -> list[dict]:
    lines = [Line(file="x.log", line=i + 1, raw=t, message=t, row=i) for i, t in enumerate(texts)]
    return list(horovod.parse(lines, FileContext(path="x.log")))


def test_missing_ranks_are_the_peer_even_when_mpirun_tags_interleave():
    (e,) = run("[2019-04-13 13:53:31.[1,0]<stderr>:851588: W horovod/common/operations.cc:588] "
               "HorovodBroadcast_conv2d_1_kernel_0 [missing ranks: 1]")
    assert (e["kind"], e["peer"], e["key"]) == ("horovod.stall", "rank 1", "HorovodBroadcast_conv2d_1_kernel_0")
    assert e["ts"].isoformat() == "2019-04-13T13:53:31.851588"


def test_the_head_line_is_a_stall_without_a_named_rank():
    (e,) = run("[2021-02-02 21:19:07.345988: W /tmp/pip-install-dxtho7yu/horovod_0bde588442554cf4b80c76441efc4e03/"
               "horovod/common/stall_inspector.cc:105] One or more tensors were submitted to be reduced, gathered or "
               "broadcasted by subset of ranks and are waiting for remainder of ranks for more than 10 seconds. This "
               "may indicate that different ranks are trying to submit different tensors or that only subset of "
               "ranks is submitting tensors, which will cause deadlock. ")
    assert e["kind"] == "horovod.stall" and e["timeout_ms"] == 10_000 and "peer" not in e


def test_the_missing_rank_is_the_culprit_not_the_coordinator_that_reports_it():
    report = nccllens.analyze(str(ROOT / "fixtures" / "public" / "horovod_docker_broadcast_stall_missing_rank1"))
    top = report.findings[0]
    assert (top.rule, top.ranks) == ("NL-HVD-001", [1])
    assert report.verdict.category == "rank_divergence" and "rank 1 never submitted" in top.title


def test_horovodrun_tags_on_the_missing_ranks_lines_are_read():
    """https://github.com/Lightning-AI/pytorch-lightning/pull/5155: horovodrun prints "[0]<stderr>:" (no slot
    number) before each line; rank 0 misses the broadcast, rank 1 the allreduces: both are named."""
    case = ROOT / "fixtures" / "public" / "lightning_horovod_modelcheckpoint_race_broadcast_vs_allreduce_stall"
    report = nccllens.analyze(str(case / "horovodrun.log"))
    assert report.verdict.category == "rank_divergence"
    assert report.findings[0].rule == "NL-HVD-001" and report.findings[0].ranks == [0, 1]


def test_the_stalled_ranks_shape_names_its_ranks():
    # https://github.com/google/automl/issues/563 (horovod 0.19: "Stalled ranks:", then "<rank>: [tensors]"):
    # rank 0 misses the broadcasts, rank 1 the allreduces
    report = nccllens.analyze(str(ROOT / "fixtures" / "public" / "horovod_efficientdet_2gpu_stall_rank0_broadcast_rank1_allreduce"))
    top = report.findings[0]
    assert (report.verdict.category, top.rule, top.ranks) == ("rank_divergence", "NL-HVD-001", [0, 1])


def test_the_oldest_shape_names_the_gaps_in_the_ready_ranks():
    # https://github.com/horovod/horovod/issues/215 (horovod 0.11, 32 ranks): every rank but 16 is ready
    report = nccllens.analyze(str(ROOT / "fixtures" / "public" / "horovod_32rank_keras_resnet_allreduce_stall_rank16_not_ready"))
    top = report.findings[0]
    assert (report.verdict.category, top.rule, top.ranks) == ("rank_divergence", "NL-HVD-001", [16])


def test_ranks_missing_different_tensors_name_the_smaller_side():
    # https://github.com/deepinsight/insightface/issues/1287 (horovodrun --prefix-output-with-timestamp): rank 0
    # misses noname.691941, ranks 1-7 miss noname.691943: rank 0 issued two more unnamed all-reduces
    case = ROOT / "fixtures" / "public" / "insightface_partialfc_horovod_rank0_noname_counter_ahead_stall"
    top = nccllens.analyze(str(case)).findings[0]
    assert (top.rule, top.category, top.ranks) == ("NL-HVD-001", "rank_divergence", [0])


def run_following(*texts: str) -> list[dict]:
    """``run``, with each line's following lines readable (as the pipeline gives them)."""
    lines = [Line(file="x.log", line=i + 1, raw=t, message=t, row=i) for i, t in enumerate(texts)]
    follow = {ln.line: lines[i + 1:] for i, ln in enumerate(lines)}
    return list(horovod.parse(lines, FileContext(path="x.log", _following=lambda line, n: follow[line.line][:n])))


def test_stalled_ops_on_the_lines_after_an_old_head_give_the_missing_ranks():
    # https://github.com/horovod/horovod/issues/364: the old head line, then "<tensor> [ready ranks: ...]" on a line
    # of its own; ranks 1 and 5 (gaps below the highest ready rank) did not submit the tensor
    (e,) = run_following("WARNING: One or more tensors were submitted to be reduced, gathered or broadcasted by subset of ranks "
               "and are waiting for remainder of ranks for more than 60 seconds. This may indicate that different ranks "
               "are trying to submit different tensors or that only subset of ranks is submitting tensors, which will "
               "cause deadlock. ",
               "allreduce.conv1.weight [ready ranks: 0, 7, 3, 2, 4, 6], ")
    assert e["kind"] == "horovod.stall" and e["peer"] == "ranks 1, 5" and e["key"] == "allreduce.conv1.weight"
