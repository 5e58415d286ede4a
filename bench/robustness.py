"""Score the dev set with every log line wrapped the way pastes and log collectors wrap it.

    python bench/robustness.py                      # every wrapping, one line of figures each
    python bench/robustness.py --wrap compose -v    # one wrapping, with the cases it changes
    python bench/robustness.py --wrap merged -v     # one of the whole-paste reshapings

A bug ticket rarely holds a log as the program wrote it: the paste is indented under a list item, quoted,
copied from a terminal that hard-wrapped long lines, saved on Windows, or collected by ``docker compose logs``.
The verdict must not depend on that. Two reshapings go further, as bug threads do with whole logs: ``merged``
pastes every file of a case into one block, one after another (what a reporter does with the logs of several
nodes), and ``tail50`` keeps only the last 50 lines of each file (what a reporter copies from a long log). Either
may remove what a label rests on (a host named only by a file's name, a cause printed early), so a loss there is
a lead to read, not necessarily a defect. Each wrapping is applied to every text file of every dev case (the holdout
is never read here), the case is scored as ``bench/accuracy.py`` scores it, and the count of cases right (top-1
with the culprit, where the label names one) is set beside the count for the plain files. A wrapping that
loses cases is a mechanism to fix in reading, for every log that comes that way.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import accuracy  # noqa: E402

TEXT_SUFFIXES = {".log", ".txt", ".out", ".err", ""}


def _hard_wrap(width: int) -> Callable[[str], str]:
    def wrap(line: str) -> str:
        return "\n".join(line[i:i + width] for i in range(0, max(len(line), 1), width))
    return wrap


WRAPPINGS: dict[str, Callable[[str], str]] = {
    "plain": lambda line: line,
    "indent4": lambda line: "    " + line if line else line,  # a paste inside a Markdown list item
    "quote": lambda line: "> " + line,  # a reply quoting the log
    "crlf": lambda line: line + "\r",  # saved or pasted on Windows
    "compose": lambda line: "trainer-1  | " + line,  # docker compose logs
    "wrap100": _hard_wrap(100),  # copied from a terminal 100 columns wide
}


def _merged(staged: Path) -> None:
    """Every text file of the case pasted into one ``paste.log``, in path order (binary files stay)."""
    parts = []
    for path in sorted(p for p in staged.rglob("*") if p.is_file() and p.suffix in TEXT_SUFFIXES):
        try:
            parts.append(path.read_text(encoding="utf-8").rstrip("\n"))
        except UnicodeDecodeError:
            continue
        path.unlink()
    (staged / "paste.log").write_text("\n".join(parts) + "\n", encoding="utf-8")


def _tail(count: int) -> Callable[[Path], None]:
    def keep_tail(staged: Path) -> None:
        for path in staged.rglob("*"):
            if path.is_file() and path.suffix in TEXT_SUFFIXES:
                try:
                    lines = path.read_text(encoding="utf-8").rstrip("\n").split("\n")
                except UnicodeDecodeError:
                    continue
                path.write_text("\n".join(lines[-count:]) + "\n", encoding="utf-8")
    return keep_tail


RESHAPINGS: dict[str, Callable[[Path], None]] = {
    "merged": _merged,  # the logs of several nodes pasted one after another into one block
    "tail50": _tail(50),  # only the end of each log
}


def right(case: accuracy.Case, staged: Path) -> bool:
    outcome = accuracy.score_case(case, staged)
    return bool(outcome.top1) and outcome.culprit is not False


def wrapped_copy(case: accuracy.Case, root: Path, index: int, wrap: Callable[[str], str]) -> Path:
    staged = accuracy.stage(case, root, index)
    for path in staged.rglob("*"):
        if not path.is_file() or path.suffix not in TEXT_SUFFIXES:
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue  # binary (a flight-recorder dump): as it is
        path.write_text("\n".join(wrap(line) for line in text.split("\n")), encoding="utf-8")
    return staged


def reshaped_copy(case: accuracy.Case, root: Path, index: int, reshape: Callable[[Path], None]) -> Path:
    staged = accuracy.stage(case, root, index)
    reshape(staged)
    return staged


def score(wrapping: str, cases: list[accuracy.Case]) -> dict[str, bool]:
    with tempfile.TemporaryDirectory(prefix="nccllens-robustness-") as tmp:
        if wrapping in RESHAPINGS:
            return {case.folder.name: right(case, reshaped_copy(case, Path(tmp), i, RESHAPINGS[wrapping]))
                    for i, case in enumerate(cases, 1)}
        return {case.folder.name: right(case, wrapped_copy(case, Path(tmp), i, WRAPPINGS[wrapping]))
                for i, case in enumerate(cases, 1)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--wrap", choices=sorted([*WRAPPINGS, *RESHAPINGS]), action="append",
                        help="a wrapping or reshaping to score (repeatable; default: all)")
    parser.add_argument("-v", "--verbose", action="store_true", help="list the cases a wrapping changes")
    args = parser.parse_args()
    cases = [accuracy.load_case(folder) for folder in accuracy.case_folders("dev")]
    plain = score("plain", cases)
    print(f"{'wrapping':<10} {'right':>7} {'of':>5} {'lost':>5} {'won':>5}")
    print(f"{'plain':<10} {sum(plain.values()):>7} {len(cases):>5}")
    for name in args.wrap or [*(w for w in WRAPPINGS if w != "plain"), *RESHAPINGS]:
        got = score(name, cases)
        lost = sorted(k for k, ok in plain.items() if ok and not got[k])
        won = sorted(k for k, ok in plain.items() if not ok and got[k])
        print(f"{name:<10} {sum(got.values()):>7} {len(cases):>5} {len(lost):>5} {len(won):>5}")
        if args.verbose:
            for k in lost:
                print(f"    lost {k}")
            for k in won:
                print(f"    won  {k}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
