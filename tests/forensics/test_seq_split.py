"""Ranks of one process group that time out in different works: their sequences of collectives diverged."""

from __future__ import annotations

import nccllens

# source: https://github.com/huggingface/accelerate/issues/3250 (FSDP checkpoint save, two ranks)
ACCELERATE = """\
[rank0]:[E1122 06:40:00.504052851 ProcessGroupNCCL.cpp:616] [Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=122, OpType=_REDUCE_SCATTER_BASE, NumelIn=106343680, NumelOut=53171840, Timeout(ms)=600000) ran for 600080 milliseconds before timing out.
[rank1]:[E1122 06:40:01.902604829 ProcessGroupNCCL.cpp:616] [Rank 1] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=126, OpType=_ALLGATHER_BASE, NumelIn=378702080, NumelOut=757404160, Timeout(ms)=600000) ran for 600079 milliseconds before timing out.
"""


def test_two_ranks_in_different_works_diverged(tmp_path):
    (tmp_path / "watchdog.log").write_text(ACCELERATE)
    report = nccllens.analyze(str(tmp_path))
    top = report.findings[0]
    assert (report.verdict.category, top.rule) == ("rank_divergence", "AN-SEQ-SPLIT")
    assert top.ranks == [0]  # no majority: rank 0 alone on its side
    assert "0:122 (_REDUCE_SCATTER_BASE), 1:126 (_ALLGATHER_BASE)" in top.summary


def test_ranks_in_the_same_work_are_no_split(tmp_path):
    # the same lines, both ranks in work 122 (synthetic edit): a plain timeout, nobody out of step
    (tmp_path / "watchdog.log").write_text(ACCELERATE.replace("SeqNum=126, OpType=_ALLGATHER_BASE",
                                                              "SeqNum=122, OpType=_REDUCE_SCATTER_BASE"))
    assert "AN-SEQ-SPLIT" not in {f.rule for f in nccllens.analyze(str(tmp_path)).findings}


def test_works_far_apart_are_other_groups_not_a_split(tmp_path):
    # synthetic edit: numbers 1,000 apart are not one group's sequence in step or out of it
    (tmp_path / "watchdog.log").write_text(ACCELERATE.replace("SeqNum=126,", "SeqNum=1126,"))
    assert "AN-SEQ-SPLIT" not in {f.rule for f in nccllens.analyze(str(tmp_path)).findings}
