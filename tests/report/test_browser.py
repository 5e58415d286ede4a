"""The HTML report in a real headless Chromium: hostile log text stays text, the page renders."""

from __future__ import annotations

import re
import shutil
import subprocess

import pytest
from report_builders import xid_report

CHROMIUM = shutil.which("chromium")
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (apt-get install chromium)")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run"]


def chromium(tmp_path, *args: str) -> subprocess.CompletedProcess:
    profile = tmp_path / "profile"
    command = ["timeout", "20", CHROMIUM, *FLAGS, f"--user-data-dir={profile}", *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=30, check=False)


@pytest.fixture(scope="module")
def page(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("html")
    report = xid_report(hostile=True)
    path = tmp / "report.html"
    path.write_text(report.to_html(), encoding="utf-8")
    return tmp, path, report


def test_hostile_text_does_not_run_and_shows_escaped(page):
    tmp, path, report = page
    done = chromium(tmp, "--dump-dom", path.as_uri())
    assert done.returncode == 0, done.stderr[-2000:]
    dom = done.stdout
    title = re.search(r"<title>(.*?)</title>", dom).group(1)
    assert "pwned" not in title
    assert title == "nccllens report: GPU hardware failure"
    assert "&lt;script&gt;document.title='pwned'&lt;/script&gt;" in dom
    assert "&lt;img src=x onerror=\"document.title='pwned'\"&gt;" in dom
    assert not re.search(r"<img\b", dom)
    assert "GPU hardware failure: Xid 79: GPU has fallen off the bus on gpu-node-07" in dom
    assert sorted(map(int, re.findall(r'data-rank="(\d+)"', dom))) == [r.rank for r in report.ranks]


def test_screenshot_is_not_blank(page):
    tmp, path, _ = page
    png = tmp / "report.png"
    done = chromium(tmp, f"--screenshot={png}", "--window-size=1280,2000", "--hide-scrollbars", path.as_uri())
    assert png.exists(), done.stderr[-2000:]
    data = png.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    assert len(data) > 20_000  # a blank 1280x2000 page compresses to a few KB
