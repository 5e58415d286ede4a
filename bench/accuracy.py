"""Score nccllens on the real-log corpus: does the report name the right first cause?

    python bench/accuracy.py                  # the dev set (fixtures/<scenario>, fixtures/public/<case>)
    python bench/accuracy.py --set holdout    # the blind holdout: figures only, never per-case output
    python bench/accuracy.py --set all --json  # machine-readable figures
    python bench/accuracy.py --failures       # dev only: which cases miss, and what the report said

Every case is copied under a neutral folder name (``case-001``...) before it is analysed, so a
case's folder name, which often carries its label, cannot help. Figures (docs/accuracy.md):

- top-1: the report calls the run failed (a cause in the verdict; or, behind an `unknown`
  one, signs of failure: error findings, warning symptoms, ranks that did not end normally) and findings[0] has the case's category (or an `also_ok` one); for a healthy case, no finding is an error and the verdict names no failure (`none`, or
  `unknown` with no cause: nothing in an excerpt showed the job finished).
- exact: findings[0]'s category is the labelled category itself.
- culprit: findings[0] names the labelled hosts and ranks (cases that name a culprit).
- healthy-clean: healthy cases with no error finding and no failure named.
- no-failure misses: failed cases that the report called `none` (which needs a sign the job finished).
- grep: the first pattern of an expert's ordered grep list that matches any line (bench/grep_baseline.py).
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

REPO = Path(__file__).resolve().parents[1]
FIXTURES = REPO / "fixtures"
sys.path.insert(0, str(Path(__file__).resolve().parent))

from grep_baseline import grep_category  # noqa: E402

SETS = ("dev", "holdout", "all")


@dataclass
class Case:
    folder: Path
    label: dict

    @property
    def healthy(self) -> bool:
        return bool(self.label.get("healthy"))

    @property
    def category(self) -> str:
        return "none" if self.healthy else self.label["category"]

    @property
    def allowed(self) -> set[str]:
        extra = self.label.get("also_ok", []) + self.label.get("also_acceptable", [])
        return {self.category, *extra}


@dataclass
class Outcome:
    category: str
    top1: bool
    exact: bool
    culprit: bool | None  # None: the case names no culprit
    said_none: bool
    grep: bool
    said: str = ""
    detail: dict = field(default_factory=dict)


def case_folders(which: str) -> list[Path]:
    dev = [p.parent for p in FIXTURES.glob("*/expected.toml") if p.parent.name != "generate"]
    dev += [p.parent for p in (FIXTURES / "public").glob("*/expected.toml")]
    holdout = [p.parent for p in (FIXTURES / "holdout").glob("*/expected.toml")]
    chosen = {"dev": dev, "holdout": holdout, "all": dev + holdout}[which]
    return sorted(chosen)


def load_case(folder: Path) -> Case:
    return Case(folder, tomllib.loads((folder / "expected.toml").read_text(encoding="utf-8")))


def stage(case: Case, root: Path, index: int) -> Path:
    """Copy the case's logs (not its label or notes) under a neutral name."""
    target = root / f"case-{index:03d}"
    shutil.copytree(case.folder, target, ignore=shutil.ignore_patterns("expected.toml", "SOURCE.md"))
    return target


def culprit_matches(case: Case, top) -> bool | None:
    want_ranks = set(case.label.get("culprit_ranks", []))
    want_hosts = set(case.label.get("culprit_hosts", []))
    if case.healthy or not (want_ranks or want_hosts):
        return None
    got_ranks, got_hosts = set(top.ranks) if top else set(), set(top.hosts) if top else set()
    hosts_ok = not want_hosts or got_hosts == want_hosts
    # A host-level cause (an Xid, the OOM killer) may name every rank of the right host.
    ranks_ok = not want_ranks or got_ranks == want_ranks or (
        bool(want_hosts) and hosts_ok and want_ranks <= got_ranks
    )
    return hosts_ok and ranks_ok


def score_case(case: Case, staged: Path) -> Outcome:
    import nccllens
    from nccllens.report.outcome import TROUBLE

    report = nccllens.analyze(str(staged))
    top = report.findings[0] if report.findings else None
    serious = [f for f in report.findings if f.severity in ("critical", "error")]
    verdict = report.verdict.category
    if case.healthy:
        # clean: no error finding, and no failure named (``unknown`` without a cause: nothing showed the job
        # finished, which a healthy excerpt need not show)
        top1 = verdict in ("none", "unknown") and report.verdict.finding is None and not serious
        exact = top1
    else:
        # the report calls the run failed: a cause, or, behind an unknown cause, signs of failure (error
        # findings, warning symptoms or causes, ranks whose state shows they did not end normally); an
        # ``unknown`` verdict without them says only that nothing showed the job finished
        signs = bool(serious) or any(r.state in TROUBLE for r in report.ranks) or any(
            f.severity == "warning" and f.role in ("symptom", "cause") for f in report.findings)
        failed = verdict != "none" and (verdict != "unknown" or signs)
        top1 = failed and top is not None and top.category in case.allowed
        exact = failed and top is not None and top.category == case.category
    said = f"{verdict}; top={top.rule}:{top.category} ranks={top.ranks} hosts={top.hosts}" if top else verdict
    return Outcome(
        category=case.category,
        top1=top1,
        exact=exact,
        culprit=culprit_matches(case, top) if not case.healthy else None,
        said_none=not case.healthy and verdict == "none",
        grep=grep_category(staged) in case.allowed,
        said=said,
    )


def figures(outcomes: list[Outcome]) -> dict:
    def pct(values):
        values = [v for v in values if v is not None]
        return (round(100 * sum(values) / len(values), 1), len(values)) if values else (None, 0)

    def block(items):
        return {
            "cases": len(items),
            "top1": pct(o.top1 for o in items),
            "exact": pct(o.exact for o in items),
            "culprit": pct(o.culprit for o in items),
            "grep_top1": pct(o.grep for o in items),
            "said_none": sum(o.said_none for o in items),
        }

    by_category = defaultdict(list)
    for outcome in outcomes:
        by_category[outcome.category].append(outcome)
    healthy = by_category.get("none", [])
    return {
        "overall": block(outcomes),
        "healthy_clean": pct(o.top1 for o in healthy),
        "no_failure_misses": sum(o.said_none for o in outcomes),
        "per_category": {name: block(items) for name, items in sorted(by_category.items())},
    }


def run(which: str) -> tuple[list[Case], list[Outcome]]:
    cases = [load_case(folder) for folder in case_folders(which)]
    outcomes = []
    with tempfile.TemporaryDirectory(prefix="nccllens-accuracy-") as tmp:
        for index, case in enumerate(cases, 1):
            outcomes.append(score_case(case, stage(case, Path(tmp), index)))
    return cases, outcomes


def show(value) -> str:
    share, count = value
    return f"{share:5.1f}% ({count})" if share is not None else "    -     "


def print_table(which: str, result: dict) -> None:
    print(f"set: {which}")
    print(f"{'category':22} {'n':>4}  {'top-1':>12} {'exact':>12} {'culprit':>12} {'grep top-1':>12} {'no failure':>10}")
    rows = [*result["per_category"].items(), ("OVERALL", result["overall"])]
    for name, block in rows:
        cells = " ".join(f"{show(block[k]):>12}" for k in ("top1", "exact", "culprit", "grep_top1"))
        print(f"{name:22} {block['cases']:>4}  {cells} {block['said_none'] or '':>10}")
    print(f"healthy-clean: {show(result['healthy_clean'])}   failed runs called 'no failure': "
          f"{result['no_failure_misses']}")


def record_floor(result: dict) -> None:
    overall = result["overall"]
    floor = {
        "overall": {k: overall[k][0] for k in ("top1", "exact", "culprit")},
        "cases": {k: overall[k][1] for k in ("top1", "exact", "culprit")},
        "healthy_clean": result["healthy_clean"][0],
        "no_failure_misses": result["no_failure_misses"],
    }
    (REPO / "bench" / "accuracy_floor.json").write_text(json.dumps(floor, indent=2, sort_keys=True) + "\n")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--set", choices=SETS, default="dev", dest="which")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument("--failures", action="store_true", help="dev set only: list the cases that miss")
    parser.add_argument("--record-floor", action="store_true",
                        help="dev set only: write these figures to bench/accuracy_floor.json (the CI floor)")
    options = parser.parse_args(argv)
    if (options.failures or options.record_floor) and options.which != "dev":
        parser.error("--failures and --record-floor are for the dev set only: the holdout is scored blind")
    cases, outcomes = run(options.which)
    result = figures(outcomes)
    if options.json:
        print(json.dumps(result, indent=2, sort_keys=True))
    else:
        print_table(options.which, result)
    if options.record_floor:
        record_floor(result)
    if options.failures:
        for case, outcome in zip(cases, outcomes, strict=True):
            if not outcome.top1 or outcome.culprit is False:
                rel = case.folder.relative_to(FIXTURES)
                print(f"MISS {rel}: want {sorted(case.allowed)} ranks={case.label.get('culprit_ranks')} "
                      f"hosts={case.label.get('culprit_hosts')} | said {outcome.said}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
