"""Score nccllens on single lines and on each thread's few lines, collected from public threads.

    python bench/line_probe.py [--set dev|holdout] [-v]      # fixtures/lines/*.tsv, or fixtures/lines/holdout/
    python bench/line_probe.py FILE.tsv ...

A case of the corpus (``bench/accuracy.py``) is a whole paste; a line collection asks a narrower question
of many more sources: does nccllens read a real line of a kind it was never tuned on? Each row of a
``fixtures/lines/*.tsv`` file is ``category<TAB>role<TAB>url<TAB>line``: the root-cause category of the public
thread (from its resolution; a trailing ``?`` where the thread leaves it uncertain), the line's role in it
(``cause``, ``consequence``, ``harmless``: a scary line of a run that worked), the thread and the line as
pasted. Every line is analysed alone, and every thread's lines together (in file order):

- a cause line (or a thread) is read right when the report's first finding has the thread's category;
- a harmless line (or a thread of them) is read right when no error finding is raised and no cause is named.

Consequence lines are counted apart (a consequence alone need not name its cause). Beside each figure, the
first-match grep baseline of ``bench/grep_baseline.py`` on the same text.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from grep_baseline import grep_category  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
LINES = ROOT / "fixtures" / "lines"


def read_rows(paths: list[Path]) -> list[tuple[str, str, str, str]]:
    rows = []
    for path in paths:
        for text in path.read_text(encoding="utf-8").splitlines():
            parts = text.split("\t", 3)
            if len(parts) == 4 and not text.startswith("#"):
                rows.append((parts[0].rstrip("?"), parts[1], parts[2], parts[3]))
    return rows


def verdict(text: str, want: str) -> tuple[bool, bool, str]:
    """(nccllens right, grep right, what nccllens said) for ``text`` as one log file."""
    import nccllens

    with tempfile.TemporaryDirectory() as tmp:
        Path(tmp, "console.log").write_text(text + "\n", encoding="utf-8")
        with contextlib.redirect_stderr(io.StringIO()):
            report = nccllens.analyze(tmp)
        grep = grep_category(Path(tmp))
    top = report.findings[0] if report.findings else None
    if want == "none":
        serious = any(f.severity in ("error", "critical") for f in report.findings)
        ok = report.verdict.category in ("none", "unknown") and report.verdict.finding is None and not serious
        return ok, grep in ("none", None, ""), report.verdict.category
    said = f"{top.rule}:{top.category}" if top else report.verdict.category
    return bool(top and top.category == want), grep == want, said


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("tsv", nargs="*", type=Path)
    parser.add_argument("--set", choices=("dev", "holdout"), default="dev",
                        help="the collections looked at while changing code (dev), or the held-out ones")
    parser.add_argument("-v", "--verbose", action="store_true", help="list the rows and threads read wrong")
    args = parser.parse_args(argv)
    rows = read_rows(args.tsv or sorted((LINES if args.set == "dev" else LINES / "holdout").glob("*.tsv")))
    tally: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0, 0])  # (scope, role) -> n, ours, grep
    threads: dict[str, list[tuple[str, str, str, str]]] = {}
    for row in rows:
        threads.setdefault(row[2], []).append(row)
        want, role, url, line = row
        ours, grep, said = verdict(line, "none" if role == "harmless" else want)
        cell = tally[("line", role)]
        cell[0] += 1
        cell[1] += ours
        cell[2] += grep
        if args.verbose and not ours and role != "consequence":
            print(f"  line   {role:11} want {want:20} said {said:40} {line[:100]}")
    for url, group in threads.items():
        harmless = all(r[1] == "harmless" for r in group)
        want = "none" if harmless else group[0][0]
        ours, grep, said = verdict("\n".join(r[3] for r in group), want)
        cell = tally[("thread", "harmless" if harmless else "failed")]
        cell[0] += 1
        cell[1] += ours
        cell[2] += grep
        if args.verbose and not ours:
            print(f"  thread want {want:20} said {said:40} {url}")
    print(f"{len(rows)} lines from {len(threads)} threads")
    print(f"{'scope':8} {'role':12} {'n':>5} {'nccllens':>10} {'grep':>10}")
    for (scope, role), (n, ours, grep) in sorted(tally.items()):
        print(f"{scope:8} {role:12} {n:5d} {ours:5d} ({100 * ours / n:3.0f}%) {grep:4d} ({100 * grep / n:3.0f}%)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
