"""Ranks and world sizes from a log are validated (issue 19): a rank beyond any plausible job is a
malformed value, never range(2**31)."""

from __future__ import annotations

import nccllens
from nccllens.events import MAX_RANK
from tests.hostile.planted import analyze_planted

BIG = "9" * 5000
LINES = "\n".join([
    "[rank2147483646]: RuntimeError: NCCL error in: x",
    "node1:123:456 [0] NCCL INFO comm 0x5 rank 2147483000 nranks 2147483647 cudaDev 0 busId 7000 - Init COMPLETE",
    "node1:123:457 [0] NCCL INFO comm 0x6 rank 4999999 nranks 5000000 cudaDev 0 busId 7000 - Init COMPLETE",
    "[default4999999]:RuntimeError: x",
    "WORLD_SIZE=2147483647",
    "I1125 10:00:00.000000 1 torch/distributed/run.py:1] group_rank=3000000 world_size=2147483647",
    f"[rank{BIG}]: RuntimeError: NCCL error",  # int() refuses 4,300 digits: the line once stopped the run
    f"node1:{BIG}:{BIG} [{BIG}] NCCL INFO comm 0x5 rank {BIG} nranks {BIG} cudaDev {BIG} busId 7000 - Init COMPLETE",
    f"E1125 10:00:00.000000 {BIG} ProcessGroupNCCL.cpp:{BIG}] [Rank {BIG}] Watchdog caught collective operation "
    f"timeout: WorkNCCL(SeqNum={BIG}, OpType=ALLREDUCE, NumelIn={BIG}, Timeout(ms)={BIG}) ran for {BIG} ms",
    f"  rank      : {BIG} (local_rank: {BIG})",
]) + "\n"


def test_ranks_and_world_sizes_beyond_any_job_are_not_believed(tmp_path):
    (tmp_path / "node1.log").write_text(LINES)
    report = analyze_planted(tmp_path)
    assert report.job.world_size is None or report.job.world_size <= MAX_RANK
    ranks = report.events["rank"].drop_nulls()
    assert not len(ranks) or ranks.max() < MAX_RANK
    assert len(report.ranks) <= 16  # the rank table follows the ranks seen, not a stated 2**31


def test_ranks_text_is_bounded_too(tmp_path):
    (tmp_path / "node1.log").write_text(LINES * 3)
    from nccllens.report.rank_table import render_ranks

    text = render_ranks(nccllens.analyze([str(tmp_path)]))
    assert len(text) < 20_000
