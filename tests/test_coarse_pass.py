"""The coarse key pass and the survivor masks are shortcuts: they must give exactly what the slow way
gives (every line with a literal found, the same family for every survivor)."""

from __future__ import annotations

import os
import re

from hypothesis import given, settings
from hypothesis import strategies as st

from nccllens.extract import combined_prefilter
from nccllens.parse import load_families
from nccllens.parse.lines import ReadStats, frame
from nccllens.parse.masks import masks
from nccllens.parse.pieces import PIECE, candidate_lines
from nccllens.prefilter_keys import _case_class, greedy_keys, hot, key_groups
from nccllens.regex_groups import pattern_groups

# Real lines (from fixtures/ and shared/reference) mixed with filler, for the equivalence properties.
REAL = [
    "gpu-node-063:43556:43556 [4] NCCL INFO Channel 00/0 : 508[4] -> 509[5] via P2P/IPC/read",
    "node-b:1234:1301 [1] NCCL INFO AllReduce: opCount 3 sendbuff 0x7f recvbuff 0x7f count 1 datatype 7 op 0",
    "[rank3]:[E1122 10:01:02.123 ProcessGroupNCCL.cpp:632] [Rank 3] Watchdog caught collective operation "
    "timeout: WorkNCCL(SeqNum=42, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for "
    "600010 milliseconds before timing out.",
    "[Thu Nov 20 10:00:01 2025] NVRM: Xid (PCI:0000:5b:00): 79, pid=1234, GPU has fallen off the bus.",
    "KeyError: 'missing'",
    "torch.distributed.elastic.multiprocessing.api: [ERROR] failed (exitcode: 1) local_rank: 0 (pid: 7) of binary",
    "node-a:99:99 [0] NCCL INFO NET/Socket : Using [0]eth0:10.0.0.1<0>",
    "Epoch 3 step 100: Loss = NaN",
    "Training completed successfully",
    "connect to 10.0.0.2<1234> failed : Connection Refused",
    "plain text with nothing to see",
]


def _plan():
    """The plain path's plan (literals, keys, regex groups): what these shortcuts are for."""
    from nccllens.analysis import Options, load_rules

    before = os.environ.get("NCCLLENS_ENGINE")
    os.environ["NCCLLENS_ENGINE"] = "fallback"
    try:
        return combined_prefilter([r.match.pattern for r in load_rules(Options()) if r.match.pattern])
    finally:
        if before is None:
            del os.environ["NCCLLENS_ENGINE"]
        else:
            os.environ["NCCLLENS_ENGINE"] = before


PLAN = _plan()
GROUPS = tuple(re.compile(g) for g in PLAN.keys)


def _has_literal(line: str) -> bool:
    low = line.lower()
    return any(x in line for x in PLAN.literals) or any(x in low for x in PLAN.literals_nocase)


def test_every_packaged_literal_holds_a_key():
    for lit in PLAN.literals + PLAN.literals_nocase:
        variants = {lit, lit.upper(), lit.lower(), lit.title()}
        for v in variants:
            if v == lit or lit in PLAN.literals_nocase:
                assert any(g.search(v) for g in GROUPS), f"no key finds {v!r}"


@given(st.lists(st.text(alphabet="abcdeXYZ :-_()0123", min_size=3, max_size=30), min_size=1, max_size=40))
def test_greedy_keys_cover_every_literal(literals):
    keys = greedy_keys(tuple(literals))
    assert all(any(k in lit for k in keys) for lit in literals)


@given(st.text(alphabet="abcXYZ 0:-✓", min_size=1, max_size=12))
def test_case_class_matches_every_ascii_case_variant(key):
    regex = re.compile(_case_class(key)[0])
    assert regex.fullmatch(key) and regex.fullmatch(key.upper()) and regex.fullmatch(key.lower())


def test_no_packaged_key_starts_like_a_common_log_word():
    # ``Count not open`` as a key stops the searcher at every ``opCount`` of a TRACE log
    assert not [k for k in greedy_keys(PLAN.literals) if hot(k)]
    assert greedy_keys(("opCount not open x",)) == ["t not open x"]
    assert greedy_keys(("NCCL_",)) == ["CL_"]  # too short to cut: its first position that is not hot


def test_key_groups_are_few_enough_for_the_simd_searcher():
    assert len(PLAN.keys) <= 16
    assert key_groups(("abcdefgh",), ()) == ("abcdefgh",)


def _expected(block: bytes) -> tuple[dict[int, str], int, tuple[int, str] | None]:
    df = frame(block, 1, ReadStats())
    last = df.row(df.height - 1) if df.height else None
    return dict(zip(df["line"].to_list(), df["raw"].to_list(), strict=True)), df.height, last


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(REAL) | st.text(alphabet="abc xyz", max_size=60), min_size=1, max_size=400),
       st.booleans(), st.integers(min_value=1, max_value=3000))
def test_candidate_lines_keep_every_line_with_a_literal_at_its_number(lines, final_newline, pad):
    filler = ["x" * pad] * (PIECE // max(pad, 1) // 50 + 1)  # a few pieces of nothing
    text = "\n".join(filler + lines + filler + lines) + ("\n" if final_newline else "")
    block = text.encode()
    cand = candidate_lines(block, 1, PLAN.keys, ReadStats())
    assert cand is not None
    expected, count, last = _expected(block)
    got = dict(zip(cand.frame["line"].to_list(), cand.frame["raw"].to_list(), strict=True))
    assert cand.lines == count and cand.last == last
    for number, raw in expected.items():
        if _has_literal(raw):
            assert got.get(number) == raw
    assert all(expected[n] == raw for n, raw in got.items())


def test_blocks_that_need_cleaning_are_left_to_frame():
    for block in (b"a\r\nb\n", b"a\x00b\n", b"\x1b[0ma\n", b"\xff\xfe\n"):
        assert candidate_lines(block, 1, PLAN.keys, ReadStats()) is None


@settings(max_examples=80, deadline=None)
@given(st.lists(st.sampled_from(REAL) | st.text(max_size=80), min_size=1, max_size=30))
def test_masks_equal_searching_every_whole_pattern(messages):
    from nccllens.analysis import Options, load_rules

    rules = pattern_groups([r.match.pattern for r in load_rules(Options()) if r.match.pattern])
    targets = tuple((f.name, (f.prefilter,)) for f in load_families()) + (("_rules", rules),)
    got = masks(messages, targets)
    assert got is not None
    for name, patterns in targets:  # what the masks replaced: every whole pattern on every message
        regexes = [re.compile(p) for p in patterns]
        want = [any(r.search(m) for r in regexes) for m in messages]
        assert got[name] == want, name


def test_a_group_of_branches_is_read_branch_by_branch():
    # a rule group's shape: one non-capturing group of a case-sensitive branch and a (?i:...) one; each branch
    # waits for its own literal instead of being tried on every message
    from nccllens.parse.masks import index

    pattern = r"(?:Got completion (?:from peer \S+ )?with error 12,|(?i:transport retry count(?:er)? exceeded))"
    targets = (("ib", (pattern,)),)
    assert not index(targets).always
    messages = ["NET/IB : Got completion from peer 10.0.0.2<5> with error 12, opcode 0, len 0",
                "ibv_poll_cq: Transport Retry Counter Exceeded", "NCCL INFO Channel 00 : 0 1"]
    assert masks(messages, targets)["ib"] == [True, True, False]
