"""Matching rules on small event tables: kinds, patterns, where, aggregates, relations between rules."""

from __future__ import annotations

from pathlib import Path

import pytest
from engine_helpers import IB_NONE, SOCKET, WATCHDOG, XID63, XID79, event, rule, table

from nccllens.engine.match import combined_pattern, evaluate, rule_expr


def fired(rules, events) -> dict[str, list[int]]:
    """rule id -> the line numbers of its matched events, in the order the hit keeps them."""
    return {h.rule.id: h.events["line"].to_list() for h in evaluate(rules, events)}


def test_kinds_pattern_and_where_combine():
    events = table(
        event(XID79, kind="kernel.xid", line=1, xid=79, pci="0000:5d:00"),
        event(XID63, kind="kernel.xid", line=2, xid=63, pci="0000:10:1c"),
        event(XID79, kind="other.text", line=3),
    )
    assert fired([rule(kinds=["kernel.xid"])], events) == {"TEST-X-001": [1, 2]}
    assert fired([rule(kinds=["kernel.xid"], where={"xid": 79})], events) == {"TEST-X-001": [1]}
    assert fired([rule(pattern=r"fallen off the bus")], events) == {"TEST-X-001": [1, 3]}
    assert fired([rule(kinds=["kernel.xid"], pattern="(?i)ROW REMAPPER")], events) == {"TEST-X-001": [2]}


def test_where_lists_and_comparisons_ignore_nulls_but_none_of_a_list_holds_for_a_missing_value():
    events = table(
        event("exit -9", kind="torchrun.worker_failed", line=1, exit_code=-9, signal="SIGKILL"),
        event("exit 1", kind="torchrun.worker_failed", line=2, exit_code=1),
        event("no code", kind="torchrun.worker_failed", line=3),
    )
    assert fired([rule(kinds=["torchrun.worker_failed"], where={"exit_code": {"lt": 0}})], events) == {
        "TEST-X-001": [1]}
    assert fired([rule(kinds=["torchrun.worker_failed"], where={"exit_code": {"ge": -9, "le": 1, "ne": 0}})],
                 events) == {"TEST-X-001": [1, 2]}
    assert fired([rule(kinds=["torchrun.worker_failed"], where={"signal": ["SIGKILL", "SIGBUS"]})], events) == {
        "TEST-X-001": [1]}
    assert fired([rule(kinds=["torchrun.worker_failed"], where={"exit_code": {"ne": 1}})], events) == {
        "TEST-X-001": [1]}
    # "none of these": an event without the value is none of them (NL-APP-014 leaves out the exceptions whose
    # ``key`` says they are a collective's, and every other exception has no key)
    assert fired([rule(kinds=["torchrun.worker_failed"], where={"exit_code": {"not_in": [1, 0]}})], events) == {
        "TEST-X-001": [1, 3]}


def test_no_event_no_hit_and_empty_table():
    assert evaluate([rule(pattern="fallen off")], table(event(XID63))) == []
    assert evaluate([rule(pattern="fallen off")], table()) == []


def test_min_ranks_min_hosts_and_single_host():
    rows = [event(WATCHDOG, line=i + 1, rank=i, host=f"node{i // 2}") for i in range(4)]
    events = table(*rows)
    assert "TEST-X-001" in fired([rule(pattern="Watchdog caught", min_ranks=4)], events)
    assert fired([rule(pattern="Watchdog caught", min_ranks=5)], events) == {}
    assert "TEST-X-001" in fired([rule(pattern="Watchdog caught", min_hosts=2)], events)
    assert fired([rule(pattern="Watchdog caught", single_host=True)], events) == {}
    assert "TEST-X-001" in fired([rule(pattern="Watchdog caught", single_host=True)], table(*rows[:2]))


def test_requires_and_absent():
    events = table(event(IB_NONE, line=1), event(SOCKET, line=2))
    ib = rule("TEST-IB-001", pattern="No device found")
    socket_after_no_ib = rule("TEST-IB-002", pattern="Using network Socket", requires=["TEST-IB-001"])
    socket_alone = rule("TEST-IB-003", pattern="Using network Socket", absent=["TEST-IB-001"])
    assert set(fired([ib, socket_after_no_ib, socket_alone], events)) == {"TEST-IB-001", "TEST-IB-002"}
    only_socket = table(event(SOCKET, line=1))
    assert set(fired([ib, socket_after_no_ib, socket_alone], only_socket)) == {"TEST-IB-003"}


def test_requires_follows_chains_and_aliases():
    events = table(event(IB_NONE, line=1), event(SOCKET, line=2), event(XID79, line=3))
    a = rule("TEST-A-001", pattern="fallen off")
    b = rule("TEST-B-001", pattern="No device found", absent=["TEST-A-001"])
    c = rule("TEST-C-001", pattern="Using network", requires=["TEST-B-001"])
    assert set(fired([a, b, c], events)) == {"TEST-A-001"}  # A silences B, so C loses its requirement


def test_before_and_after_by_timestamp():
    events = table(
        event(WATCHDOG, line=1, file="rank1.log", ts="2024-10-03T18:37:01"),
        event(XID79, line=9, file="dmesg.txt", ts="2024-10-03T18:06:55"),
    )
    gpu = rule("TEST-GPU-001", pattern="fallen off")
    timeout_after_gpu = rule("TEST-T-001", pattern="Watchdog caught", after="TEST-GPU-001")
    timeout_before_gpu = rule("TEST-T-002", pattern="Watchdog caught", before="TEST-GPU-001")
    assert set(fired([gpu, timeout_after_gpu, timeout_before_gpu], events)) == {"TEST-GPU-001", "TEST-T-001"}
    # after/before also need the other rule to have fired
    assert fired([timeout_after_gpu], events) == {}


def test_before_falls_back_to_file_and_line_without_timestamps():
    events = table(event(XID79, line=5, file="node.log"), event(WATCHDOG, line=7, file="node.log",
                                                              ts="2024-10-03T18:37:01"))
    gpu = rule("TEST-GPU-001", pattern="fallen off", before="TEST-T-001")
    timeout = rule("TEST-T-001", pattern="Watchdog caught")
    assert set(fired([gpu, timeout], events)) == {"TEST-GPU-001", "TEST-T-001"}
    reversed_lines = table(event(XID79, line=8, file="node.log"), event(WATCHDOG, line=7, file="node.log"))
    assert set(fired([gpu, timeout], reversed_lines)) == {"TEST-T-001"}


def test_hit_events_earliest_first_and_hits_ordered_by_rule_id():
    events = table(
        event(WATCHDOG, line=3, ts="2024-10-03T18:37:03"),
        event(WATCHDOG, line=1, ts="2024-10-03T18:37:09"),
        event(WATCHDOG, line=2),
    )
    hits = evaluate([rule("TEST-Z-001", pattern="Watchdog"), rule("TEST-A-001", pattern="Watchdog")], events)
    assert [h.rule.id for h in hits] == ["TEST-A-001", "TEST-Z-001"]
    assert hits[0].events["line"].to_list() == [3, 1, 2]


def test_combined_pattern_matches_what_any_rule_matches():
    import polars as pl

    rules = [rule(pattern="(?i)FALLEN OFF"), rule(pattern=r"Using network \w+"), rule(kinds=["kernel.xid"])]
    pattern = combined_pattern(rules)
    found = pl.Series([XID79, SOCKET, XID63, IB_NONE]).str.contains(pattern).to_list()
    assert found == [True, True, False, False]
    assert combined_pattern([rule(kinds=["kernel.xid"])]) == ""


def test_rule_expr_is_one_polars_expression():
    import polars as pl

    expr = rule_expr(rule(kinds=["kernel.xid"], pattern="Xid", where={"xid": [79, 48]}))
    assert isinstance(expr, pl.Expr)
    out = table(event(XID79, kind="kernel.xid", xid=79), event(XID63, kind="kernel.xid", xid=63)).select(expr)
    assert out.to_series().to_list() == [True, False]


def _alone(rules, events) -> dict[str, list[int]]:
    """What each rule selects when it is evaluated by itself over every row (the reference)."""
    out = {}
    for r in rules:
        picked = events.filter(rule_expr(r))
        if picked.height:
            out[r.id] = sorted(picked["line"].to_list())
    return out


@pytest.mark.parametrize("small_table", [0, 10**9])  # the literal gates searched by polars, and in Python
def test_rules_in_groups_select_what_each_selects_alone(small_table, monkeypatch):
    # more rules than one alternation holds (GROUP_SIZE), patterns that overlap, kinds and where mixed in,
    # a rule without a pattern: evaluating the groups first must not change any rule's events
    from nccllens.engine import match
    from nccllens.regex_groups import GROUP_SIZE

    monkeypatch.setattr(match, "SMALL_TABLE", small_table)
    events = table(
        event(XID79, kind="kernel.xid", line=1, xid=79),
        event(XID63, kind="kernel.xid", line=2, xid=63),
        event(WATCHDOG, kind="torch.watchdog_timeout", line=3),
        event(IB_NONE, kind="nccl.net_ib", line=4),
        event(SOCKET, kind="nccl.using_network", line=5),
        event("(?i) is not a pattern here", kind="other.text", line=6),
    )
    words = ["Xid", "fallen off", "Row Remapper", "Watchdog", "(?i)watchdog", "NET/IB", "No device",
             "Socket", r"\d+ milliseconds", "^NVRM", "(?i)ROW remapper", "not a pattern", "(?i:no DEVICE)",
             "(?:timed|timing) out", "[0-9]+ ms"]
    rules = [rule(f"TEST-X-{i:03d}", pattern=words[i % len(words)]) for i in range(2 * GROUP_SIZE + 5)]
    rules += [rule("TEST-Y-001", kinds=["kernel.xid"], where={"xid": 79}),
              rule("TEST-Y-002", kinds=["kernel.xid"], pattern="Remapper"),
              rule("TEST-Y-003", pattern="timing out", where={"line": {"ge": 3}})]
    assert {h: sorted(lines) for h, lines in fired(rules, events).items()} == _alone(rules, events)


@pytest.mark.parametrize("small_table", [0, 10**9])  # the literal gates searched by polars, and in Python
def test_packaged_rules_select_the_same_in_groups_on_a_real_job(small_table, monkeypatch):
    from nccllens.analysis import Options, load_rules
    from nccllens.engine import match
    from nccllens.engine.match import _selections
    from nccllens.extract import extract

    monkeypatch.setattr(match, "SMALL_TABLE", small_table)
    rules = load_rules(Options())
    fixtures = Path(__file__).parents[2] / "fixtures"
    events, _ = extract([str(fixtures)], [r.match.pattern for r in rules if r.match.pattern], workers=0)

    def spots(frame):
        return sorted(zip(frame["file"].cast(str).to_list(), frame["line"].to_list(), strict=True))

    expected = {r.id: spots(events.filter(rule_expr(r))) for r in rules}
    expected = {rid: found for rid, found in expected.items() if found}
    assert len(expected) > 20  # the fixtures exercise many rules
    assert {rid: spots(frame) for rid, frame in _selections(rules, events).items()} == expected
