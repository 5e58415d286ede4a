"""Every fixture renders in every format and language, showing the verdict and the culprit."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

import pytest

import nccllens
from nccllens.report import render

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
CASES = sorted(p.parent for p in FIXTURES.rglob("expected.toml") if "generate" not in p.parts)


@cache
def _report(folder: Path, lang: str):
    return nccllens.analyze([str(folder)], lang=lang)


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("fmt", ["text", "json", "html", "md"])
@pytest.mark.parametrize("folder", CASES, ids=[str(p.relative_to(FIXTURES)) for p in CASES])
def test_every_fixture_renders(folder, fmt, lang):
    report = _report(folder, lang)
    out = render(report, fmt, color=False) if fmt == "text" else render(report, fmt)
    assert out.strip()
    if fmt == "json":
        data = json.loads(out)
        assert data["verdict"]["category"] == report.verdict.category
        return
    top = report.findings[0] if report.findings else None
    if top is not None and top.hosts and fmt != "html":
        assert top.hosts[0] in out
    if lang == "zh" and fmt in ("text", "md"):
        assert "结论" in out  # the Chinese heading of the verdict
