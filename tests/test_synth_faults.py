"""Each injected fault of the cluster-log synthesiser is the top finding, with its culprit, at 8, 512
and 4,096 ranks (small corpora; bench/run.py repeats the check at 1 GiB and 10 GiB)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

import nccllens

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
import synth  # noqa: E402

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

CASES = [(fault, 8, 2) for fault in synth.FAULTS] + [
    ("xid79", 512, 64), ("exception", 512, 64), ("host_oom", 512, 64), ("ib", 512, 64),
    ("divergence", 512, 64), ("xid79", 4096, 512),
]


@pytest.mark.parametrize(("fault", "ranks", "hosts"), CASES, ids=[f"{f}-{r}r" for f, r, _ in CASES])
def test_injected_fault_is_the_top_finding(tmp_path, fault, ranks, hosts):
    out = synth.write_job(tmp_path / "job", ranks, hosts, fault, total_bytes=ranks * 400)
    expected = tomllib.loads((out / "expected.toml").read_text())
    report = nccllens.analyze([str(out)])
    assert report.verdict.category == expected["category"], report.verdict.summary
    if expected["category"] == "none":
        assert not [f for f in report.findings if f.severity in ("critical", "error")]
        return
    if expected["category"] == "unknown":  # the missing node: say whose logs are missing, blame nobody
        first, last = expected["culprit_ranks"][0], expected["culprit_ranks"][-1]
        assert f"{first}-{last}" in report.verdict.summary
        return
    top = report.findings[0]
    assert top.role == "cause"
    assert sorted(top.hosts) == sorted(expected["culprit_hosts"]), top.title
    if expected["culprit_ranks"]:
        assert sorted(top.ranks) == sorted(expected["culprit_ranks"]), top.title
