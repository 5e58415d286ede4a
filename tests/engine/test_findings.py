"""From a hit to a Finding: interpolated text per language, culprits, evidence, first_seen."""

from __future__ import annotations

from engine_helpers import WATCHDOG, XID79, event, rule, table

from nccllens.engine.findings import compact_ranks, finding_from_hit, interpolate
from nccllens.engine.match import evaluate


def test_compact_ranks():
    assert compact_ranks([8, 0, 1, 2, 3]) == "0-3,8"
    assert compact_ranks([5, 6]) == "5,6"
    assert compact_ranks([3, 3, 4, 5, 10, 11, 12, 20]) == "3-5,10-12,20"
    assert compact_ranks([]) == ""


def test_interpolate_words_around_unknown_and_null_values():
    assert interpolate("GPU {pci} on {host} ({count})", {"pci": "0000:5d:00", "host": None, "count": 3}) == (
        "GPU 0000:5d:00 (3)")  # no "on ?": the clause goes (engine/wording.py; tests/engine/test_wording.py)
    assert interpolate("{nope} and {{literal}} and ${NCCL_IB_HCA}", {}) == "And {literal} and ${NCCL_IB_HCA}"


def test_finding_carries_culprits_evidence_and_text_in_both_languages():
    rows = [
        event(WATCHDOG, line=10 + r, file=f"rank{r}.log", rank=r, host=f"node{r // 4}",
              ts=f"2024-10-03T18:37:{10 - r:02d}", seq=6463, op="ALLREDUCE")
        for r in (0, 1, 2, 3, 8, 9)
    ]
    r = rule(pattern="Watchdog caught")
    (hit,) = evaluate([r], table(*rows))
    en = finding_from_hit(hit, "en")
    assert en.rule == "TEST-X-001" and en.category == "gpu_hardware" and en.severity == "error"
    assert en.ranks == [0, 1, 2, 3, 8, 9] and en.hosts == ["node0", "node2"]
    assert en.count == 6
    assert en.first_seen == "2024-10-03T18:37:01"  # rank 9 printed first
    assert en.title == "on node2 ranks 0-3,8,9 xid"  # no xid in the lines: worded around, no "?"
    assert [e.rank for e in en.evidence] == [9, 8, 3, 2, 1]  # five lines, earliest first
    assert en.evidence[0].file == "rank9.log" and en.evidence[0].line == 19 and en.evidence[0].text == WATCHDOG
    assert en.evidence[0].ts == "2024-10-03T18:37:01"
    zh = finding_from_hit(hit, "zh")
    assert zh.title == "node2 上 rank 0-3,8,9"


def test_typed_placeholders_come_from_the_first_event_that_states_them():
    r = rule(pattern="fallen off")
    events = table(event(XID79, line=1, host="gpu-node-07"), event(XID79, line=2, xid=79, host="gpu-node-07"))
    (hit,) = evaluate([r], events)
    f = finding_from_hit(hit, "en")
    assert f.title == "on gpu-node-07 a rank xid 79"  # no rank in the lines: "a rank", never "?"
    assert f.ranks == [] and f.first_seen is None


def test_explains_lists_rule_ids_then_categories():
    from engine_helpers import GOOD

    from nccllens.engine.loader import load_rules

    gpu = next(r for r in load_rules([GOOD], builtin=False) if r.id == "TEST-GPU-001")
    (hit,) = evaluate([gpu], table(event(XID79, pci="0000:5d:00", host="n1", rank=3)))
    f = finding_from_hit(hit, "en")
    assert f.explains == ["TEST-TORCH-001", "collective_timeout"]
    assert f.title == "GPU 0000:5d:00 fell off the bus on n1 (ranks 3)"
    assert f.confidence == 0.9 and f.references == ["https://docs.nvidia.com/deploy/xid-errors/"]


def test_a_line_read_more_closely_than_an_exception_in_the_training_code_explains_it():
    # https://github.com/kubeflow/pytorch-operator/issues/125: "ValueError: host not found: Name or service
    # not known" is a name that does not resolve, not a bug in the training code
    from pathlib import Path

    import nccllens

    case = Path(__file__).resolve().parents[2] / "fixtures" / "public" / "pytorchjob_worker_before_master_dns_host_not_found"
    report = nccllens.analyze(str(case))
    top, app = report.findings[0], next(f for f in report.findings if f.rule == "NL-APP-012")
    assert (report.verdict.category, top.rule) == ("network_unreachable", "NL-NET-008")
    assert app.explained_by == top.id
