"""The terminal report without rich prints the bytes rich prints (issue 17, item 5: the fixed cost).

Piped output is neither coloured nor wrapped; ``PlainConsole`` then lays the report out without importing rich,
and must give the same text, or say it cannot (``NeedsRich``) so that rich lays it out.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import nccllens
from nccllens.report import text as terminal_text
from nccllens.report.plain_console import NeedsRich, PlainConsole
from nccllens.terminal import safe_report

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "public"
CASES = sorted(p.parent for p in FIXTURES.glob("*/expected.toml"))[::25]

PIECES = st.lists(st.sampled_from(list("ab c-…:[]()/_.") + ["中文", "ｆｕｌｌ", "é", "\t", "\n", "\r", "\x07", "\x1b",
                                                          "\x0b", "😀", "\u200b", "  ", "xxxxxxxxxx"]),
                  max_size=40).map("".join)


def rich_lines(width: int, prints: list[tuple[str, dict]]) -> str:
    console = terminal_text._console(False, width, False)
    for text, options in prints:
        console.print(console.Text(text), **options)
    return console.file.getvalue()


def plain_lines(width: int, prints: list[tuple[str, dict]]) -> str:
    console = PlainConsole(width)
    for text, options in prints:
        console.print(console.Text(text), **options)
    return console.getvalue()


OPTIONS = st.sampled_from([{}, {"soft_wrap": True}, {"no_wrap": True, "overflow": "ellipsis"}])


@settings(max_examples=300, deadline=None)
@given(width=st.integers(40, 120), prints=st.lists(st.tuples(PIECES, OPTIONS), max_size=6))
def test_plain_console_prints_what_rich_prints_or_says_it_cannot(width, prints):
    try:
        plain = plain_lines(width, prints)
    except NeedsRich:
        return
    assert plain == rich_lines(width, prints)


@pytest.mark.parametrize("case", CASES, ids=lambda p: p.name)
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_piped_reports_are_the_same_with_and_without_rich(case, lang):
    report = safe_report(nccllens.analyze(str(case), lang=lang))
    for verbose in (False, True):
        for width in (100, 48):
            with_rich = terminal_text.build(report, False, width, lang, verbose, False, False).file.getvalue()
            try:
                without = terminal_text.build(report, False, width, lang, verbose, False, False,
                                              console=PlainConsole(width)).getvalue()
            except NeedsRich:
                continue
            assert without == with_rich


def test_a_line_rich_would_wrap_is_left_to_rich(tmp_path):
    console = PlainConsole(40)
    with pytest.raises(NeedsRich):
        console.print(console.Text("x" * 41))
