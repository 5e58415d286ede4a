"""Single-node jobs (issue 16 §3.10): a local rank is the global rank only when the logs show one node."""

from __future__ import annotations

import shutil
from pathlib import Path

import polars as pl

import nccllens
from nccllens.timeline import normalize

ROOT = Path(__file__).resolve().parents[1]


def _staged(tmp_path: Path, case: str) -> Path:
    # under a neutral name: the case's folder name must not hint a rank
    target = tmp_path / "case-001"
    shutil.copytree(ROOT / "fixtures" / "public" / case, target, ignore=shutil.ignore_patterns("*.toml", "*.md"))
    return target


def test_one_launcher_console_maps_local_rank_to_rank(tmp_path):
    # real: fixtures/public/dodnet_apex_ddp_shape_mismatch_rank1 (torch.distributed.launch, torch 1.13: the
    # agent reports "failed (exitcode: 1) local_rank: 1"; nothing names a second node)
    report = nccllens.analyze(str(_staged(tmp_path, "dodnet_apex_ddp_shape_mismatch_rank1")))
    assert report.findings[0].ranks == [1]


def test_torchrun_113_console(tmp_path):
    # real: fixtures/public/firefly_tokenizer_json_parse_torchrun113 (torchrun 1.13, rich traceback)
    report = nccllens.analyze(str(_staged(tmp_path, "firefly_tokenizer_json_parse_torchrun113")))
    assert report.findings[0].ranks == [0]


def test_two_agents_keep_local_ranks_local(tmp_path):
    # the same agent line (torch 1.13 format, as in the dodnet case) from two nodes' consoles: local rank 0
    # is a different global rank on each, and nothing says which
    line = ("ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: 1) local_rank: 0 (pid: 26536) "
            "of binary: /usr/bin/python\n")
    for name in ("a.log", "b.log"):
        (tmp_path / name).write_text(line, encoding="utf-8")
    table = normalize(nccllens.analyze(str(tmp_path)).events)
    failed = table.filter(pl.col("kind") == "torchrun.worker_failed")
    assert failed.height == 2 and failed["rank"].null_count() == 2


def test_a_world_beyond_the_node_keeps_local_ranks_local(tmp_path):
    # one console, but the NCCL communicator has 16 ranks and the agent runs 8 per node (torchrun's own
    # "Using nproc_per_node=8." line and an NCCL 2.2x Init COMPLETE line, as they print them)
    (tmp_path / "console.log").write_text(
        "W1122 02:34:31.090000 10806 torch/distributed/run.py:793] Using nproc_per_node=8.\n"
        "node1:2211:2211 [0] NCCL INFO comm 0x55d0 rank 0 nranks 16 cudaDev 0 busId 18000 - Init COMPLETE\n"
        "E1122 02:50:18.886000 1328 torch/distributed/elastic/multiprocessing/api.py:1002] failed (exitcode: 1) "
        "local_rank: 3 (pid: 1352) of binary: /work/torchvenv/bin/python3\n", encoding="utf-8")
    table = normalize(nccllens.analyze(str(tmp_path)).events)
    failed = table.filter(pl.col("kind") == "torchrun.worker_failed")
    assert failed["rank"].to_list() == [None]
