"""Regenerate the report screenshots (needs chromium on PATH, a CJK font such as fonts-wqy-microhei for the
Chinese pages, and pngquant to keep each PNG small):

    PYTHONPATH=. python docs/screenshots/make_screenshots.py

- ``report-html.png``, ``report-terminal.png``: fixtures/exception_peers_time_out (HTML and terminal).
- ``multinode-en.png``, ``multinode-zh.png``: the HTML of fixtures/exception_one_rank (two nodes, rank 3's
  KeyError), in English and Chinese.
- ``hang512-en.png``, ``hang512-zh.png``: the HTML of a synthetic 512-rank hang on 64 hosts
  (``bench/synth.py --fault missing_node``: one node's ranks never reach collective 4000), both languages.

``shoot_html`` is what tests/report/test_screenshots.py uses too.
"""

from __future__ import annotations

import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import nccllens
from nccllens.report.text import build

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run", "--hide-scrollbars"]
SIZE = "1400,2400"
HANG = ["--ranks", "512", "--hosts", "64", "--fault", "missing_node", "--bytes", "8M"]


def shoot(source: Path, png: Path, size: str, profile: str) -> None:
    chromium = shutil.which("chromium")
    if chromium is None:
        sys.exit("chromium is not installed")
    subprocess.run(["timeout", "60", chromium, *FLAGS, f"--user-data-dir={profile}", f"--screenshot={png}",
                    f"--window-size={size}", source.as_uri()], check=True, capture_output=True)
    if shutil.which("pngquant"):  # a palette of 256 colours: a third of the bytes, the same picture
        subprocess.run(["pngquant", "--quality=70-95", "--speed=1", "--force", "--output", str(png), str(png)],
                       check=False, capture_output=True)


def shoot_html(report, lang: str, png: Path, tmp: Path) -> Path:
    """The HTML of ``report`` in ``lang``, written under ``tmp`` and photographed to ``png``; the HTML's path."""
    html = tmp / f"{png.stem}.html"
    html.write_text(report.to_html(lang=lang), encoding="utf-8")
    shoot(html, png, SIZE, str(tmp / "profile"))
    return html


def hang_report(tmp: Path):
    """The report of the 512-rank synthetic hang, written under ``tmp`` and read from there (so its paths read
    ``hang512/gpu-node-000/console.log``, not a temporary folder's)."""
    subprocess.run([sys.executable, str(ROOT / "bench" / "synth.py"), str(tmp / "hang512"), *HANG], check=True,
                   capture_output=True)
    here = Path.cwd()
    os.chdir(tmp)
    try:
        return nccllens.analyze(["hang512"])
    finally:
        os.chdir(here)


def main(fixture: str = "fixtures/exception_peers_time_out") -> None:
    report = nccllens.analyze([fixture])
    with tempfile.TemporaryDirectory() as tmp:
        html = Path(tmp) / "report.html"
        html.write_text(report.to_html(), encoding="utf-8")
        shoot(html, HERE / "report-html.png", "1280,2200", f"{tmp}/profile")
        console = build(report, color=True, width=110, lang="en")
        svg = Path(tmp) / "terminal.svg"
        console.save_svg(str(svg), title=f"nccllens analyze {fixture}")
        box = re.search(r'viewBox="0 0 ([\d.]+) ([\d.]+)"', svg.read_text(encoding="utf-8"))
        size = f"{math.ceil(float(box.group(1)))},{math.ceil(float(box.group(2)))}" if box else SIZE
        shoot(svg, HERE / "report-terminal.png", size, f"{tmp}/profile")
        multinode = nccllens.analyze(["fixtures/exception_one_rank"])
        hang = hang_report(Path(tmp))
        for lang in ("en", "zh"):
            shoot_html(multinode, lang, HERE / f"multinode-{lang}.png", Path(tmp))
            shoot_html(hang, lang, HERE / f"hang512-{lang}.png", Path(tmp))


if __name__ == "__main__":
    main(*sys.argv[1:])
