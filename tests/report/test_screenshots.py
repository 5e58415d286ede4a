"""The 512-rank synthetic hang's HTML report photographed by headless Chromium in both languages (what
docs/screenshots/make_screenshots.py does), and the Chinese page's DOM: no English interface string left
outside log text, paths and ids."""

from __future__ import annotations

import importlib.util
import re
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest

from nccllens.report.labels import CATEGORIES, LABELS, STATES

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = shutil.which("chromium")
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (apt-get install chromium)")


def _make_screenshots():
    spec = importlib.util.spec_from_file_location("make_screenshots", ROOT / "docs" / "screenshots" / "make_screenshots.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def shots(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("shots")
    make = _make_screenshots()
    report = make.hang_report(tmp)
    return tmp, report, {lang: (make.shoot_html(report, lang, tmp / f"hang512-{lang}.png", tmp), tmp / f"hang512-{lang}.png")
                         for lang in ("en", "zh")}


def test_the_512_rank_hang_is_photographed_in_both_languages(shots):
    _, report, pages = shots
    assert len(report.ranks) == 512 and report.verdict.category == "rank_divergence"
    sizes = {}
    for lang, (_, png) in pages.items():
        data = png.read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n"
        assert int.from_bytes(data[16:20], "big") == 1400 and int.from_bytes(data[20:24], "big") == 2400
        sizes[lang] = len(data)
        assert len(data) > 100_000  # 512 coloured cells and two screens of text, not a blank page
    assert pages["en"][1].read_bytes() != pages["zh"][1].read_bytes()


class _Visible(HTMLParser):
    """The text a reader of the page in ``lang`` sees: the other language's spans, style, log text (``pre``),
    commands and ids (``code``), file locations and links left out; tooltips (``title``) kept."""

    SKIP_TAGS = {"style", "pre", "code", "a", "circle"}  # a circle's tooltip is the log line itself

    def __init__(self, other: str) -> None:
        super().__init__()
        self.other, self.stack, self.text = other, [], []

    def handle_starttag(self, tag, attrs):
        classes = (dict(attrs).get("class") or "").split()
        skip = tag in self.SKIP_TAGS or f"l-{self.other}" in classes or "loc" in classes
        if tag not in ("input", "meta", "br", "rect", "line") or skip:
            self.stack.append(skip or (bool(self.stack) and self.stack[-1]))
        for name, value in attrs:
            if name in ("aria-label", "alt", "placeholder") and not skip and value:
                self.text.append(value)

    def handle_endtag(self, tag):
        if self.stack and tag not in ("input", "meta", "br", "rect", "line"):
            self.stack.pop()

    def handle_data(self, data):
        if not (self.stack and self.stack[-1]):
            self.text.append(data)


def english_left(html: Path, tmp: Path) -> list[str]:
    """The English interface strings (labels, states, categories) a reader of the Chinese page still sees."""
    done = subprocess.run(["timeout", "30", CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu",
                           f"--user-data-dir={tmp / 'dom'}", "--dump-dom", html.as_uri()],
                          capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    parser = _Visible("en")
    parser.feed(done.stdout)
    seen = " ".join(" ".join(parser.text).split())
    seen = re.sub(r"`[^`]*`|'[^']*'", " ", seen)  # commands and quoted log words inside the Chinese prose
    assert "规则" in seen and "处理建议" in seen and "?" not in seen
    english = {pair[0] for table in (LABELS, STATES, CATEGORIES) for pair in table.values() if pair[0] != pair[1]}
    return sorted(e for e in english if len(e) > 3 and re.search(r"(?<![\w-])" + re.escape(e) + r"(?![\w-])", seen))


def test_the_chinese_page_of_the_hang_has_no_english_interface_string(shots):
    tmp, _, pages = shots
    assert english_left(pages["zh"][0], tmp) == []


def test_the_chinese_page_of_a_two_node_failure_has_no_english_interface_string(tmp_path):
    import nccllens

    report = nccllens.analyze([str(ROOT / "fixtures" / "exception_one_rank")])  # analysed in English
    html = tmp_path / "multinode-zh.html"
    html.write_text(report.to_html(lang="zh"), encoding="utf-8")
    assert english_left(html, tmp_path) == []
