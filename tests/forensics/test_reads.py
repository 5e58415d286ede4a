"""``run_all`` skips an analysis whose declared inputs (``nccllens.analyses.reads``) are absent: that must
change no finding. On fixtures where the declared analyses find something: the same findings with and
without skipping, and each of them finds nothing once the event kinds (and summary families) it declared
are taken out of the table, so the declaration names everything it finds from."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

import nccllens
import nccllens.analyses as analyses
from nccllens.analyses.reads import can_find, declared, has_kind
from nccllens.timeline import normalize

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
# one folder for each analysis that declares its inputs and finds something in some fixture
FOLDERS = ["collective_mismatch_detail", "dataloader_hang_stacks", "node_never_joins", "wrong_socket_ifname",
           "public/flagembedding_allgather_rank1_seq6206_vs_6207_size_mismatch", "public/nccl_init_lines",
           "public/nccltests_2node_h100_hang_hpcx_net_plugin_only_on_some_nodes",
           "public/nccl248_1080ti_allreduce_hang_iommu", "public/fr_rank3_sigkilled_dump_missing",
           "public/fr_trace_missing_ranks_allreduce", "public/fr_straggler_reshard_rank2",
           "public/lightning_srun_2node_duplicate_global_ranks_hang",
           "public/powersgd_launch_2gpu_stale_filestore_barrier_worker_count_4_of_2",
           "public/chatmednorm_tokenizer_rank0_barrier_store_timeout",
           "public/anemoi_timelimit_callback_multinode_allreduce_vs_broadcast",
           "public/gloo_prep_busy_rank2_peers_time_out", "public/nccl_ras_allgather_opcount_mismatch",
           "public/slow_rank3_completes", "public/fairseq_32gpu_rank0_pyspy_stuck_dataloader_queue",
           "public/nccl276_7_survivors_hang_custreamsync_after_peer_killed",
           "public/rvt_lightning_hydra_2gpu_store_barrier_worker_count_1_of_2", "public/gather_vs_reduce_rank3",
           "public/walltime_kill_healthy_progress"]


def _inputs(folder: Path, monkeypatch) -> dict:
    """What ``run_analysis`` hands ``run_all`` for ``folder``."""
    seen: dict = {}
    real = analyses.run_all

    def spy(table, lang, job, status, summaries=None, ws=None, skip=True):
        seen.update(table=table, job=job, status=status, summaries=summaries, ws=ws)
        return real(table, lang, job, status, summaries=summaries, ws=ws, skip=skip)

    monkeypatch.setattr(analyses, "run_all", spy)
    nccllens.analyze(str(folder))
    monkeypatch.undo()
    return seen


def _without(table: pl.DataFrame, kinds: tuple[str, ...]) -> pl.DataFrame:
    names = table["kind"].cast(pl.String).fill_null("").unique().to_list()
    gone = [k for k in names if any(has_kind([k], want) for want in kinds)]
    return table.filter(~pl.col("kind").cast(pl.String).fill_null("").is_in(gone))


@pytest.mark.parametrize("name", FOLDERS)
def test_skipping_changes_nothing_and_declarations_are_complete(name: str, monkeypatch):
    got = _inputs(FIXTURES / name, monkeypatch)
    table, summaries = got["table"], got["summaries"]
    args = (table, "en", got["job"], got["status"])
    assert analyses.run_all(*args, summaries=summaries, ws=got["ws"]) == \
        analyses.run_all(*args, summaries=summaries, ws=got["ws"], skip=False)
    fired = 0
    for fn, call in analyses.steps(table, "en", got["job"], got["status"], summaries, got["ws"]):
        inputs = declared(fn)
        if inputs is None or not fn(*call()):
            continue
        fired += 1
        kinds, families = inputs
        bare = normalize(_without(table, kinds))
        rest = summaries.filter(~pl.col("family").cast(pl.String).is_in(list(families))) \
            if summaries is not None and summaries.height else summaries
        present = set(bare["kind"].cast(pl.String).drop_nulls().to_list())
        left = set(rest["family"].cast(pl.String).to_list()) if rest is not None and rest.height else set()
        assert not can_find(fn, present, left), fn.__name__
        again = dict(analyses.steps(bare, "en", summaries=rest))
        assert fn not in again or fn(*again[fn]()) == [], f"{fn.__name__} finds something without {inputs}"
    assert fired, f"no declared analysis finds anything in {name}"
