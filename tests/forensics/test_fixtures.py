"""Every fixture with an expected.toml: verdict category and findings[0]'s culprit ranks and hosts."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

import nccllens

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
# The scenarios this project captured or curated by hand (their expected.toml names the `scenario`): each
# must come out right. The wider real-log corpus (fixtures/public/<case>, fixtures/holdout/<case>) is
# scored as a whole by bench/accuracy.py, with a floor in tests/test_accuracy_floor.py.
CASES = sorted(p.parent for p in FIXTURES.rglob("expected.toml")
               if "generate" not in p.parts and "holdout" not in p.parts
               and "scenario" in tomllib.loads(p.read_text(encoding="utf-8")))


@pytest.mark.parametrize("folder", CASES, ids=[str(p.relative_to(FIXTURES)) for p in CASES])
def test_fixture_verdict_and_culprit(folder: Path):
    expected = tomllib.loads((folder / "expected.toml").read_text(encoding="utf-8"))
    report = nccllens.analyze(str(folder))
    if expected.get("healthy"):
        serious = [f"{f.rule}: {f.title}" for f in report.findings if f.severity in ("critical", "error")]
        assert not serious, serious
        # no failure named: "none" where the logs show the job finished, else "unknown" (nothing shows it did)
        assert report.verdict.finding is None and report.verdict.category in ("none", "unknown")
        return
    allowed = {expected["category"], *expected.get("also_acceptable", [])}
    assert report.verdict.category in allowed, report.verdict.summary
    top = report.findings[0]
    assert top.role == "cause" and top.category in allowed
    job_hosts = set(report.job.hosts)
    if expected["culprit_ranks"]:
        assert sorted(top.ranks) == sorted(expected["culprit_ranks"]), top.title
    if expected["culprit_hosts"]:
        assert sorted(top.hosts) == sorted(expected["culprit_hosts"]), top.title
    else:  # the logs do not single out a host: the top finding must not blame one host among several
        assert not top.hosts or set(top.hosts) == job_hosts or len(job_hosts) <= 1 and not expected["culprit_ranks"]
