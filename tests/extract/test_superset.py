"""The engine never misses a line: every branch, rewritten for Hyperscan, matches whatever Python's
engine matches (real lines from the fixtures and reference logs, and text built around them)."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nccllens.extract import engine
from nccllens.extract.superset import superset

pytestmark = pytest.mark.skipif(not engine.wanted(), reason="hyperscan is not importable here")

# real lines (fixtures/, shared/reference) with non-ASCII text a Unicode \w, \d or \s matches
REAL = [
    "gpu-node-063:43556:43556 [4] NCCL INFO Channel 00/0 : 508[4] -> 509[5] via P2P/IPC/read",
    "[Thu Nov 20 10:00:01 2025] NVRM: Xid (PCI:0000:5b:00): 79, pid=1234, GPU has fallen off the bus.",
    "torch.distributed.elastic.multiprocessing.api: [ERROR] failed (exitcode: 1) local_rank: 0 (pid: 7) of binary",
    "Epoch 3 step 100: Loss = NaN",
    "Training completed successfully",
    "RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB",
    "torch.OutOfMemoryError: CUDA out of memory.",
]


def _branches():
    from nccllens.analysis import Options, load_rules
    from nccllens.parse import load_families
    from nccllens.parse.dense_rows import branches

    pats = [f.prefilter for f in load_families()] + [r.match.pattern for r in load_rules(Options()) if r.match.pattern]
    return [b for p in pats for b in branches(p)]


def test_every_packaged_branch_has_a_rewrite():
    assert all(superset(b) is not None for b in _branches())


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(REAL) | st.text(alphabet="aé٣ \u00a0:=/()[]-_.0123456789xyzNCL", max_size=50),
                min_size=1, max_size=6))
def test_a_line_python_matches_the_rewrite_matches(parts):
    line = "".join(parts)
    for branch in _BRANCHES:
        if re.search(branch, line):
            assert _found(_database(superset(branch)), line.encode()), (branch, line)


def _found(db, data: bytes) -> bool:
    hits: list[int] = []
    db.scan(data, match_event_handler=lambda ident, *_: hits.append(ident))
    return bool(hits)


_BRANCHES = _branches() if engine.wanted() else []
_DBS: dict[str, object] = {}


def _database(expression: str):
    import hyperscan as hs

    if expression not in _DBS:
        db = hs.Database(mode=hs.HS_MODE_BLOCK)
        db.compile(expressions=[expression.encode()],
                   flags=[hs.HS_FLAG_UTF8 | hs.HS_FLAG_MULTILINE | hs.HS_FLAG_ALLOWEMPTY])
        _DBS[expression] = db
    return _DBS[expression]


def _fixture_lines(limit: int = 4000) -> list[str]:
    """Real lines of the fixture logs (the holdout left out), NCCL's first."""
    from tests.extract.real_lines import fixture_lines

    lines = fixture_lines(per_file=400)
    lines.sort(key=lambda s: "NCCL" not in s)
    return lines[:limit]


def test_the_scan_parts_of_a_branch_find_every_line_it_matches():
    from nccllens.extract.superset import scan_parts

    lines = _fixture_lines() + REAL
    for branch in _BRANCHES:
        parts = scan_parts(branch)
        if parts == [branch]:
            continue
        compiled = [re.compile(p) for p in parts]
        for line in lines:
            if re.search(branch, line):
                assert any(c.search(line) for c in compiled), (branch, line)


def test_an_unselective_prefix_is_dropped_and_a_selective_one_kept():
    from nccllens.extract.superset import scan_parts

    nccl = next(b for b in _BRANCHES if b.startswith("NCCL (?:INFO|TRACE) "))
    split = scan_parts(nccl)
    assert len(split) > 10 and not any(p.startswith("NCCL (?:INFO") for p in split)
    assert "Connected (?:all rings|all trees|NVLS tree|CollNet\\w*|all \\w+)" in split
    # a prefix that holds a selective literal stays: it is what the scan keys on
    assert scan_parts("Watchdog caught collective operation timeout: (?:WorkNCCL|Work)") == [
        "Watchdog caught collective operation timeout: (?:WorkNCCL|Work)"]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from([r for r in REAL if r.isascii()])
                | st.text(alphabet="a \t\x1c:=/()[]-_.0123456789xyzNCLEF", max_size=50), min_size=1, max_size=6))
def test_on_ascii_text_the_ascii_rewrite_matches_what_python_matches(parts):
    line = "".join(parts)
    for branch in _BRANCHES:
        if re.search(branch, line):
            assert _found(_database(superset(branch, ascii=True)), line.encode()), (branch, line)


def test_the_ascii_rewrite_finds_every_ascii_fixture_line_python_matches():
    lines = [ln for ln in _fixture_lines() if ln.isascii()]
    for branch in _BRANCHES:
        compiled = re.compile(branch)
        hits = [ln for ln in lines if compiled.search(ln)]
        if hits:
            db = _database(superset(branch, ascii=True))
            assert all(_found(db, ln.encode()) for ln in hits), branch


def test_behind_a_prefix_without_any_literal_an_alternative_with_a_common_token_is_looked_for_alone():
    from nccllens.extract.superset import scan_parts

    # the NCCL 2.0-2.2 branch: the line head ``host:pid:tid [dev] `` keys nothing, every NCCL line holds it;
    # ``WARN`` is a token of every line of some format, yet it keys the scan where the head cannot
    head = r"[^\s:\[\]]+:\d+:\d+ \[\d+\] "
    parts = scan_parts(head + r"(?:\S+\.(?:cu|cc|cpp|h):\d+ WARN |Connected all rings|\w+ \d+)")
    assert parts == [r"\S+\.(?:cu|cc|cpp|h):\d+ WARN ", "Connected all rings", head + r"(?:\w+ \d+)"]
    # behind a prefix with a literal of its own (if a common token), an alternative needs a selective one
    assert scan_parts(r"NCCL: (?:WARN \d+|TRACE \d+)") == [r"NCCL: (?:WARN \d+|TRACE \d+)"]


def test_the_ascii_rewrite_keeps_hyperscans_ascii_classes():
    assert superset(r"[EF]\d{4} \w+\s", ascii=True) == r"[EF]\d{4} \w+[\t\x0b\x0c\r \x1c-\x1f]"
    assert "\\x{80}" in superset(r"[EF]\d{4}")


def test_a_branch_without_any_literal_is_looked_for_by_its_lettered_head():
    from nccllens.extract.superset import head, scan_parts

    # glog's line head (a level letter, then a time stamp): keyed on nothing, the whole branch was verified
    # back from every "] " of every line; its head before the first unbounded repeat is a superset
    glog = r"(?:[EF])\d{4} \d\d:\d\d:\d\d\.\d{6}\s+\d+ [^\s\]]+:\d+\] (?:.*)$"
    assert scan_parts(glog) == [r"(?:[EF])\d{4} \d\d:\d\d:\d\d\.\d{6}"]
    # a head of digits and separators (a time stamp) would match every line of a log that prints one,
    # a short head selects nothing, and a branch with a literal keeps its own
    assert head(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d+: (?:[EF]) [^\s\]]+:\d+\] (?:.*)$") is None
    assert head(r"\d%\s+\d+/\d+\s*\[\d+:\d+<") is None
    assert scan_parts(r"Watchdog caught collective operation timeout: \S+") == [
        r"Watchdog caught collective operation timeout: \S+"]


def test_a_prefix_keyed_only_on_what_every_line_of_a_dense_family_holds_is_dropped():
    from nccllens.extract.superset import scan_parts

    # NL-SYS-006's pattern: every NCCL transport line holds "Channel", " : ", "] -> " and "] via "; what
    # tells an SHM line from the others is the transport after them
    shm = r"Channel \d+(?:/\d+)? : \d+\[[0-9a-f]+\] -> \d+\[[0-9a-f]+\] via (?:SHM/|direct shared memory)"
    assert scan_parts(shm) == ["SHM/", "direct shared memory"]
    line = "ubuntu:39964:40050 [6] NCCL INFO Channel 09 : 6[6] -> 7[7] via SHM/direct/direct"  # source: https://github.com/NVIDIA/nccl-tests/issues/166 (NL-SYS-006)
    assert re.search(shm, line) and any(re.search(p, line) for p in scan_parts(shm))
