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
# fixtures/holdout is a blind test set: never analysed here
CASES = sorted(p.parent for p in FIXTURES.rglob("expected.toml") if not {"generate", "holdout"} & set(p.parts))


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


# a "?" standing for a value ("rank ?", "nodename=?", "(?)"), not a question's or the shell's "$?"
UNKNOWN_MARK = re.compile(r"(?:^|(?<=[\s(=（]))\?(?=$|[\s),.;:，。；：）])")


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


@cache
def _patterns() -> dict[str, str]:
    from nccllens.engine import load_rules

    return {r.id: r.match.pattern for r in load_rules([]) if r.match.pattern}


def _quotes_a_match(text: str, pattern: str) -> bool:
    """``pattern`` (polars' regex engine, as the rules run) matches ``text`` or what follows one of its
    prefixes (``host:pid:tid [0] NCCL INFO ``, ``[rank3]: ``), as a rule matching a message does."""
    import polars as pl

    starts = [0] + [i + 1 for i, ch in enumerate(text) if ch in " :]"]
    return bool(pl.Series([text[i:] for i in starts]).str.contains(pattern).any())


@pytest.mark.parametrize("folder", CASES, ids=[str(p.relative_to(FIXTURES)) for p in CASES])
def test_the_first_evidence_line_is_the_line_that_matched(folder):
    """Not a ChildFailedError table row or a bare ``Traceback (most recent call last):``: the first
    quoted line of a rule's finding is a line its pattern matches."""
    report = _report(folder, "en")
    wrong = [(f.rule, f.evidence[0].text) for f in report.findings
             if f.rule in _patterns() and f.evidence and not _quotes_a_match(f.evidence[0].text, _patterns()[f.rule])]
    assert not wrong
