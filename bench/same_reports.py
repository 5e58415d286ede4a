"""Write ``nccllens analyze --format json`` of every fixture folder (fixtures/* and fixtures/public/*,
the holdout left out) with the checkout this script runs from, into OUT; compare two such folders.

    PYTHONPATH=TREE python bench/same_reports.py write OUT     # in TREE's folder, one process for all
    python bench/same_reports.py compare OUT_A OUT_B           # which reports differ

Run ``write`` once per tree (e.g. a ``git archive`` of main and this branch), then ``compare``.
"""

from __future__ import annotations

import contextlib
import io
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def folders() -> list[Path]:
    fixtures = ROOT / "fixtures"
    out = []
    for parent in (fixtures, fixtures / "public"):
        out += [p for p in sorted(parent.iterdir()) if p.is_dir() and p.name not in ("holdout", "generate", "public")]
    return out


def write(out: Path) -> None:
    from nccllens import commands
    from nccllens.main import parse_analyze

    out.mkdir(parents=True, exist_ok=True)
    for folder in folders():
        name = str(folder.relative_to(ROOT / "fixtures")).replace("/", "__")
        options = parse_analyze([str(folder), "--format", "json", "--exit-zero", "-o", str(out / f"{name}.json")])
        options["output"] = Path(options["output"])
        with contextlib.redirect_stdout(io.StringIO()):
            commands.analyze(options.pop("paths"), **options)


def compare(a: Path, b: Path) -> int:
    names = sorted({p.name for p in a.glob("*.json")} | {p.name for p in b.glob("*.json")})
    differ = [n for n in names if not (a / n).exists() or not (b / n).exists()
              or (a / n).read_bytes() != (b / n).read_bytes()]
    print(f"{len(names)} reports, {len(differ)} differ")
    for n in differ:
        print("  differs:", n)
    return 1 if differ else 0


if __name__ == "__main__":
    if sys.argv[1] == "write":
        write(Path(sys.argv[2]))
    else:
        sys.exit(compare(Path(sys.argv[2]), Path(sys.argv[3])))
