"""Real lines of the fixture logs, for tests that check a pattern transformation on what programs print."""

from __future__ import annotations

from pathlib import Path

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"


def fixture_lines(per_file: int) -> list[str]:
    """The first ``per_file`` lines of every fixture log (the holdout left out), in path order."""
    lines: list[str] = []
    for path in sorted(FIXTURES.rglob("*")):
        if "holdout" in path.parts or not path.is_file() or path.suffix not in (".log", ".txt", ""):
            continue
        try:
            lines += path.read_text(errors="replace").splitlines()[:per_file]
        except OSError:
            continue
    return lines
