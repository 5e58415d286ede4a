"""Dense families: summarised per (file, process, key) in polars; lines a pattern wants still reach the parsers.

Every line here is synthetic, built from NCCL's verbatim format strings (shared/reference/nccl_logs.md §2:
``Channel %02d/%d : %d[%lx] -> %d[%lx] [send|receive] via NET/%s/%d[/GDRDMA]`` and ``%s: opCount %lx
sendbuff %p recvbuff %p count %zu datatype %d op %d root %d comm %p [nranks=%d] stream %p``) and from the
progress shapes of Megatron, tqdm and the HF Trainer.
"""

from __future__ import annotations

import polars as pl

from nccllens.analysis import Options, load_rules
from nccllens.extract import combined_prefilter, extract_source_tables
from nccllens.ingest.sources import Source
from nccllens.regex_groups import pattern_groups

PRE = "gpu-node-001:40000:{tid} [0] NCCL INFO "


def _coll(op_count: int, op: str = "AllReduce", count: int = 1048576, comm: str = "0x55d0c8a1b2c0") -> str:
    return (PRE.format(tid=40000) + f"{op}: opCount {op_count:x} sendbuff 0x7f3a2c000000 recvbuff 0x7f3a2c000000 "
            f"count {count} datatype 7 op 0 root 0 comm {comm} [nranks=8] stream 0x55d0c9a1b2c0")


def _channel(ch: int, via: str, tid: int = 40012) -> str:
    return PRE.format(tid=tid) + f"Channel {ch:02d}/0 : 3[3] -> 4[4] [send] via {via}"


def _extract(lines: list[str], name: str = "node/nccl.gpu-node-001.40000.log"):
    patterns = [r.match.pattern for r in load_rules(Options()) if r.match.pattern]
    data = ("\n".join(lines) + "\n").encode()
    return extract_source_tables(Source(name, lambda: iter([data]), len(data)), combined_prefilter(patterns),
                                 pattern_groups(patterns))


def test_coll_and_transport_lines_become_one_row_per_process_and_key():
    lines = ([_channel(ch, "NET/IB/0/GDRDMA", tid=40012 + ch % 3) for ch in range(32)]
             + [_channel(ch, "P2P/CUMEM/read") for ch in range(4)]
             + [_coll(i) for i in range(1, 300)] + [_coll(i, comm="0x55d0c8ffff00") for i in range(1, 40)])
    events, info, summary = _extract(lines)
    assert info.lines == len(lines)
    assert set(events["kind"].cast(pl.String)) == {"other.file_end"}  # no line reached a parser
    rows = {(r["family"], r["key"]): r for r in summary.to_dicts()}
    assert rows[("nccl.transport", "NET/IB/0/GDRDMA")]["count"] == 32
    assert rows[("nccl.transport", "P2P/CUMEM/read")]["count"] == 4
    coll = rows[("nccl.coll", "0x55d0c8a1b2c0")]
    assert (coll["count"], coll["first_seq"], coll["last_seq"], coll["op"], coll["size"], coll["nranks"]) == (
        299, 1, 299, "AllReduce", 1048576, 8)
    assert (coll["first_line"], coll["last_line"], coll["host"], coll["pid"]) == (37, 335, "gpu-node-001", 40000)
    assert rows[("nccl.coll", "0x55d0c8ffff00")]["last_seq"] == 39


def test_lines_a_pattern_wants_still_reach_the_parsers():
    shm = PRE.format(tid=40012) + "Channel 09 : 6[6] -> 7[7] via SHM/direct/direct"  # NL-SYS-006 wants it
    nan = "[rank3]: Step: 120, loss=nan, grad_norm=inf"  # NL-APP-015 wants it
    events, _, summary = _extract([_coll(1), shm, "[rank3]: step 119 loss 2.5", nan])
    texts = events.filter(pl.col("kind") == "other.text")["raw"].to_list()
    assert texts == [shm, nan]
    fams = summary.group_by("family").agg(pl.col("count").sum()).sort("family").rows()
    assert fams == [("nccl.coll", 1), ("nccl.transport", 1), ("progress", 2)]


def test_an_error_that_names_a_step_is_not_progress():
    lines = ["[rank1]: step 10 loss 2.0", "[rank1]: RuntimeError: step 11 failed: CUDA error: an illegal memory access"]
    events, _, summary = _extract(lines)
    assert summary["count"].to_list() == [1]
    assert "python.exception" in set(events["kind"].cast(pl.String))


def test_progress_shapes_and_their_last_step():
    lines = ["[rank2]: step 100 loss 2.3", "[rank2]: step 200 loss 2.1",
             " iteration      300/  500000 | consumed samples:        12800 | lm loss: 2.345678E+00 |",
             "Epoch 1:  50%|█████     | 500/1000 [01:40<01:40,  5.00it/s, loss=2.34, v_num=0]",
             "{'loss': 2.1234, 'grad_norm': 1.5, 'learning_rate': 5e-05, 'epoch': 0.1}"]
    _, _, summary = _extract(lines, name="train.log")
    got = {r["key"]: (r["count"], r["last_seq"], r["rank"]) for r in summary.to_dicts()}
    assert got == {"step": (2, 200, 2), "iteration": (1, 300, None), "tqdm": (1, 500, None), "hf": (1, None, None)}


def test_small_files_in_a_batch_get_their_own_rows(tmp_path):
    from nccllens.extract import extract_tables

    for rank in range(3):
        lines = [_coll(i).replace("40000", str(40000 + rank)) for i in range(1, 50 - rank)]
        (tmp_path / f"nccl.gpu-node-001.{40000 + rank}.log").write_text("\n".join(lines) + "\n")
    _, _, summary = extract_tables([str(tmp_path)], workers=0)
    got = sorted((r["pid"], r["last_seq"], r["first_line"], r["last_line"]) for r in summary.to_dicts())
    assert got == [(40000, 49, 1, 49), (40001, 48, 1, 48), (40002, 47, 1, 47)]


def test_ranks_sharing_one_console_get_one_progress_row_each():
    # a node's console with its ranks' lines interleaved under torchrun's "[rankN]:" tags, and the same steps
    # under the other tag shapes of parse.dense._TAG_WHO; the first line's tag is not every line's
    lines = [f"[rank{r}]: step {s} loss 2.{s}" for s in (10, 20, 30) for r in (4, 5, 6)]
    lines += [f"[default7]:step {s} loss 2.0" for s in (10, 20)] + [f"[1,3]<stdout>:step {s} loss 2.0" for s in (10, 20)]
    _, _, summary = _extract(lines, name="gpu-node-001/console.log")
    got = {(r["rank"], r["local_rank"]): (r["count"], r["last_seq"]) for r in summary.to_dicts()}
    assert got == {(4, None): (3, 30), (5, None): (3, 30), (6, None): (3, 30), (None, 7): (2, 20), (3, None): (2, 20)}


def test_progress_shapes_found_without_capture_groups_name_the_shape_the_capture_names():
    from nccllens.parse.dense import PROGRESS, PROGRESS_SHAPES, classify

    lines = ["[rank2]: step 100 loss 2.3", "Step: 3, loss=nan", "oops step 3", "STEP 5",
             " iteration      300/  500000 | consumed samples:        12800 | lm loss: 2.345678E+00 |",
             "Epoch 1:  50%|█████     | 500/1000 [01:40<01:40,  5.00it/s, loss=2.34, v_num=0]",
             "step: 5%|##| 1/2 [00:01<00:01, 1.0it/s]", "{'loss': 2.1234, 'epoch': 0.1}", "{'step': 5}"]
    frame = pl.DataFrame({"raw": lines}).with_row_index("row")
    shapes = pl.col("raw").str.extract_groups(PROGRESS)
    named = pl.coalesce([pl.when(shapes.struct.field(s).is_not_null()).then(pl.lit(s)) for s in PROGRESS_SHAPES])
    expected = frame.with_columns(named.alias("key")).filter(pl.col("key").is_not_null())
    dense, _ = classify(frame)
    assert dense.select("row", "key").equals(expected.select("row", "key"))
    assert dense["key"].to_list() == ["step", "step", "step", "iteration", "tqdm", "tqdm", "hf", "hf"]
