"""A value the logs leave unknown never shows as ``?``: the clause is reworded or dropped, and a
command gets a placeholder the shell rejects."""

from __future__ import annotations

import pytest

from nccllens.engine.findings import interpolate

SOURCE = {"file": "node-a/console.log"}


@pytest.mark.parametrize(("template", "values", "expected"), [
    ("Rank {rank} on {host} hit an uncorrectable GPU memory/NVLink error", SOURCE,
     "A rank on the node that wrote node-a/console.log hit an uncorrectable GPU memory/NVLink error"),
    ("Rank {rank} on {host} hit an uncorrectable GPU memory/NVLink error", {},
     "A rank hit an uncorrectable GPU memory/NVLink error"),
    ("Store wait timed out for key {key} (rank(s) {ranks})", {"key": "/k"}, "Store wait timed out for key /k"),
    ("First error in time: {kind} on {where} (rank {rank})", {"kind": "torch.store_error", "where": "node-b",
                                                               "rank": "?"},
     "First error in time: torch.store_error on node-b"),
    ("Collective {op} (SeqNum {seq}) timed out after {seconds} ms on rank(s) {ranks}", {"ranks": "2"},
     "Collective timed out on rank(s) 2"),
    ("{host} 上 rank {rank} 遇到不可纠正的显存错误", SOURCE, "写出 node-a/console.log 的节点上某个 rank 遇到不可纠正的显存错误"),
    ("时间上最早的错误：{where}（rank {rank}）上的 {kind}", {"kind": "torch.store_error", "where": "node-b"},
     "时间上最早的错误：node-b 上的 torch.store_error"),
    ("rank {ranks}（{host}）显存 OOM", {"ranks": "3"}, "rank 3 显存 OOM"),
    ("1. 驱逐 {host}；这是硬件错误。", {}, "1. 驱逐出问题的节点；这是硬件错误。"),
    ("test the route: `nc -zv $MASTER_ADDR $MASTER_PORT` on {host}.", SOURCE,
     "test the route: `nc -zv $MASTER_ADDR $MASTER_PORT` on the node that wrote node-a/console.log."),
])
def test_unknown_values_are_worded_around(template, values, expected):
    assert interpolate(template, values) == expected


def test_a_command_with_an_unknown_host_gets_a_placeholder_the_shell_rejects_and_says_so():
    text = interpolate("1. Drain {host}: `scontrol update nodename={host} state=drain`", SOURCE)
    assert "nodename=<node> state=drain" in text and "?" not in text
    assert text.startswith("1. Drain the node that wrote node-a/console.log:")
    assert "`<node>` stands for the node that wrote node-a/console.log" in text
    zh = interpolate("1. 在 {host} 上 `dmesg -T`，然后 `scontrol update nodename={host} state=drain`。", {})
    assert zh.startswith("1. 在出问题的节点上 `dmesg -T`") and "nodename=<node>" in zh and "`<node>` 代指出问题的节点" in zh


def test_known_values_are_unchanged():
    values = {"host": "gpu-07", "rank": 3, "file": "x.log"}
    assert interpolate("Rank {rank} on {host}: `scontrol update nodename={host}` {{x}}", values) == \
        "Rank 3 on gpu-07: `scontrol update nodename=gpu-07` {x}"


def test_durations_are_said_as_people_say_them():
    values = {"op": "ALLREDUCE", "seq": 2, "timeout_ms": 1_800_000, "ranks": "0"}
    assert interpolate("Collective {op} (SeqNum {seq}) timed out after {timeout_ms} ms on rank(s) {ranks}", values) == \
        "Collective ALLREDUCE (SeqNum 2) timed out after 30 min on rank(s) 0"
    assert interpolate("rank {ranks} 上集合通信 {op}（SeqNum {seq}）等待 {timeout_ms} ms 超时", values) == \
        "rank 0 上集合通信 ALLREDUCE（SeqNum 2）等待 30 分钟超时"
    assert interpolate("waited {timeout_ms} ms", {"timeout_ms": 1500}) == "waited 1500 ms"  # short: as written
