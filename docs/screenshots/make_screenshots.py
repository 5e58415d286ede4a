"""Regenerate the report screenshots from a real fixture (needs chromium on PATH):

    cd /work/main && PYTHONPATH=. python docs/screenshots/make_screenshots.py [fixtures/<name>]
"""

from __future__ import annotations

import math
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import nccllens
from nccllens.report.text import build

HERE = Path(__file__).resolve().parent
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run", "--hide-scrollbars"]


def shoot(source: Path, png: Path, size: str, profile: str) -> None:
    chromium = shutil.which("chromium")
    if chromium is None:
        sys.exit("chromium is not installed")
    subprocess.run(["timeout", "30", chromium, *FLAGS, f"--user-data-dir={profile}", f"--screenshot={png}",
                    f"--window-size={size}", source.as_uri()], check=True, capture_output=True)


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
        size = f"{math.ceil(float(box.group(1)))},{math.ceil(float(box.group(2)))}" if box else "1400,2400"
        shoot(svg, HERE / "report-terminal.png", size, f"{tmp}/profile")


if __name__ == "__main__":
    main(*sys.argv[1:])
