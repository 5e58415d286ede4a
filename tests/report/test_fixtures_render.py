"""Every fixture renders in every format and language, showing the verdict and the culprit."""

from __future__ import annotations

import json
import re
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


UNKNOWN_MARK = re.compile(r"(?<!\$)\?")  # a "?" that is not the shell's "$?"


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("folder", CASES, ids=[str(p.relative_to(FIXTURES)) for p in CASES])
def test_no_question_mark_stands_for_an_unknown_value(folder, lang):
    """An unknown host or rank is worded around ("on the node that wrote <file>", `<node>` in a command),
    never printed as ``?``: in titles, remediations and the verdict, in both languages."""
    report = _report(folder, lang)
    said = [report.verdict.summary, *report.verdict.texts.values()]
    for f in report.findings:
        said += [f.title, f.remediation] + [t.get(k, "") for t in f.texts.values() for k in ("title", "remediation")]
    assert not [s for s in said if UNKNOWN_MARK.search(s)]
