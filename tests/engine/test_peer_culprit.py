"""``culprit = "peer"`` (issue 16 §3.6): the finding blames the peer its messages name; the ranks and
hosts that printed them are kept as ``reported_by``. Real lines, each with its source."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

import nccllens
from nccllens.engine.peers import target_of
from nccllens.engine.validate import check_document

ROOT = Path(__file__).resolve().parents[2]


def _finding(report, rule: str):
    return next(f for f in report.findings if f.rule == rule)


@pytest.mark.parametrize(("peer", "ranks", "hosts"), [
    ("rank 3", (3,), ()),
    ("ranks 1, 5", (1, 5), ()),
    ("[::ffff:0.104.99.143]:47389", (), ("0.104.99.143",)),  # an IPv4-mapped address, as c10d prints it
    ("6841231:47389", (), ("6841231",)),  # a host name of digits only
    ("10.0.0.4<56849>", (), ("node4",)),  # NCCL's addr<port>, owned by node4's Bootstrap line
    ("a100-22.cluster.local<51159>", (), ("a100-22",)),  # an FQDN whose first label is a host in the logs
])
def test_what_a_peer_names(peer, ranks, hosts):
    target = target_of(peer, {"10.0.0.4": "node4"}, frozenset({"a100-22"}))
    assert (target.ranks, target.hosts) == (ranks, hosts)


@pytest.mark.parametrize("peer", ["[127.0.0.1]:33512", "[localhost]:29500", "[::]:29400", ":29500",
                                  "this local rank", ""])
def test_loopback_and_wildcards_name_no_other_host(peer):
    assert target_of(peer) is None


def test_the_store_host_that_could_not_be_reached(tmp_path):
    # real: fixtures/public/opensora_numeric_hostname_store_timeout (https://github.com/hpcaitech/Open-Sora/issues/667)
    shutil.copytree(ROOT / "fixtures/public/opensora_numeric_hostname_store_timeout", tmp_path / "case",
                    ignore=shutil.ignore_patterns("*.toml", "*.md"))
    found = _finding(nccllens.analyze(str(tmp_path / "case")), "NL-STORE-001")
    assert found.hosts == ["6841231"] and found.ranks == []
    assert found.reported_by == {"ranks": [], "hosts": []}


def test_the_rank_a_monitored_barrier_waits_on(tmp_path):
    # real: torch 2.13 TORCH_DISTRIBUTED_DEBUG=DETAIL run, torchrun --tee 3 (NL-TORCH-026's example)
    (tmp_path / "console.log").write_text(
        "[default0]:[rank0]:[E1122 02:47:18.374266894 ProcessGroupGloo.cpp:2901] [Rank 0]: Rank 1 failed to pass "
        "monitoredBarrier in 10000 ms\n", encoding="utf-8")
    found = _finding(nccllens.analyze(str(tmp_path)), "NL-TORCH-026")
    assert found.ranks == [1]
    assert found.reported_by["ranks"] == [0]


def test_the_coordinators_report_names_the_culprit_the_others_only_point_at_it(tmp_path):
    # real: https://github.com/QwenAudio/CosyVoice/issues/180 (fixtures/public/cosyvoice_join_monitored_barrier_rank2_
    # missing_uneven_workload): ranks 1 and 3 point at rank 0's log, rank 0 names rank 2
    pointer = ("[E ProcessGroupGloo.cpp:138] Rank 3 successfully reached monitoredBarrier, but received errors while "
               "waiting for send/recv from rank 0. Please check rank 0 logs for faulty rank.\n")
    (tmp_path / "alone").mkdir()
    (tmp_path / "alone" / "console.log").write_text(pointer, encoding="utf-8")
    alone = nccllens.analyze(str(tmp_path / "alone"))
    assert (alone.findings[0].rule, alone.findings[0].ranks) == ("NL-TORCH-037", [0])  # rank 0: all they can name
    (tmp_path / "both").mkdir()
    (tmp_path / "both" / "console.log").write_text(
        pointer + "[E ProcessGroupGloo.cpp:138] [Rank 0]: Rank 2 failed to pass monitoredBarrier in 30000 ms\n",
        encoding="utf-8")
    both = nccllens.analyze(str(tmp_path / "both"))
    assert (both.findings[0].rule, both.findings[0].ranks) == ("NL-TORCH-026", [2])
    assert _finding(both, "NL-TORCH-037").explained_by == both.findings[0].id


def test_the_rank_a_unique_id_fetch_waits_on(tmp_path):
    # real: https://github.com/NVIDIA-NeMo/Speech/issues/14399 (NL-TORCH-015's example)
    (tmp_path / "console.log").write_text(
        "B-nemo-ft3/0 [default1]:[rank1]: torch.distributed.DistBackendError: [1] is setting up NCCL communicator "
        "and retrieving ncclUniqueId from [0] via c10d key-value store by key '0', but store->get('0') got error: "
        "wait timeout after 600000ms, keys: /default_pg/0//cuda//0\n", encoding="utf-8")
    report = nccllens.analyze(str(tmp_path))
    found = _finding(report, "NL-TORCH-015")
    assert found.ranks == [0]  # (the store parser already gives this event the missing rank as its rank)
    # the store timeout that carries it names the same peer, and it is the top finding
    assert (report.findings[0].rule, report.findings[0].ranks) == ("NL-STORE-008", [0])


def test_the_host_that_closed_the_connection(tmp_path):
    # real: fixtures/public/nccl_remote_rank_segfault_broken_pipe (NCCL names the peer by its FQDN; the
    # logs name hosts by their short name)
    shutil.copytree(ROOT / "fixtures/public/nccl_remote_rank_segfault_broken_pipe", tmp_path / "case",
                    ignore=shutil.ignore_patterns("*.toml", "*.md"))
    found = _finding(nccllens.analyze(str(tmp_path / "case")), "NL-NET-003")
    assert found.hosts == ["a100-st-p4d24xlarge-22"]
    assert found.reported_by["hosts"]


def test_loopback_peers_keep_the_printers(tmp_path):
    # real: torch 2.13 Gloo run on one host (NL-TORCH-021's example): the peer is on the same machine
    (tmp_path / "rank1.log").write_text(
        "[rank1] caught builtins.RuntimeError: [/__w/pytorch/pytorch/third_party/gloo/gloo/transport/tcp/pair.cc:537] "
        "Read error [127.0.0.1]:41882: Connection reset by peer. This is typically caused by a remote worker "
        "hanging or crashing\n", encoding="utf-8")
    found = _finding(nccllens.analyze(str(tmp_path)), "NL-TORCH-021")
    assert found.ranks == [1] and found.reported_by == {}


def test_culprit_must_be_reporter_or_peer():
    doc = {"id": "TEST-NET-001", "culprit": "victim"}
    problems = check_document(doc, 'id = "TEST-NET-001"\nculprit = "victim"\n', "x.toml")
    assert any("culprit 'victim' must be one of reporter, peer" in p.message for p in problems)
    doc["culprit"] = "peer"
    assert not any("culprit" in p.message for p in check_document(doc, 'culprit = "peer"\n', "x.toml"))
