"""The prefilter plan's slow parts are kept between runs (nccllens.plan_cache)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "exception_one_rank"

RUN = """
import json, sys
from nccllens import plan_cache, prefilter
from nccllens import extract as pipeline
events, _ = pipeline.extract([sys.argv[1]], workers=0)
print(json.dumps({"held": plan_cache._held, "known": len(prefilter.known_literals()),
                  "events": events.select("file", "line", "kind", "rank", "message").rows()}))
"""


def _run(cache: Path, **extra: str) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "NCCLLENS_NO_CACHE"}
    env.update(NCCLLENS_CACHE_DIR=str(cache), **extra)
    out = subprocess.run([sys.executable, "-c", RUN, str(FIXTURE)], env=env, capture_output=True, text=True,
                         check=True, timeout=120)
    return json.loads(out.stdout)


def _stamps(folder: Path) -> dict[str, int]:
    return {p.name: p.stat().st_mtime_ns for p in folder.glob("plan-*.json")}


def test_the_second_run_reads_the_plan_and_finds_the_same_events(tmp_path):
    first = _run(tmp_path)
    files = _stamps(tmp_path)
    # written after the plan was built: the parts, and the plan and the index of these patterns
    assert sorted(name.count("-") for name in files) == [1, 3, 3] and first["held"][0] > 0
    second = _run(tmp_path)
    assert second["events"] == first["events"] and second["events"]
    assert second["held"] == first["held"] and second["known"] == first["known"]
    assert _stamps(tmp_path) == files  # nothing new learnt: nothing rewritten


def test_a_damaged_or_forged_cache_is_ignored(tmp_path, monkeypatch):
    from nccllens import cache_files

    monkeypatch.setenv("NCCLLENS_CACHE_DIR", str(tmp_path))
    expected = _run(tmp_path)["events"]
    for path in sorted(tmp_path.glob("plan-*.json")):
        good = path.read_bytes()
        forged = good.replace(b'"literals":{', b'"literals":{"x":[["forged"],false],', 1)
        for text in (b"{not json", json.dumps({"literals": {"x": [[1, 2], "yes"]}, "groups": []}).encode(),
                     json.dumps({"literals": {}, "groups": [["a", "b"]]}).encode(), b"[]", good[:-9],
                     good.replace(b'"value":', b'"value":1,"v":', 1), forged):
            path.write_bytes(text)
            assert _run(tmp_path)["events"] == expected
            if path.name.count("-") > 1:  # a product is built and written again, whole
                assert cache_files.read_signed(path, path.name)
            else:  # the parts are written again when something is built from them
                for product in tmp_path.glob("plan-*-*-*.json"):
                    product.unlink()
                path.write_bytes(text)
                assert _run(tmp_path)["events"] == expected
                assert cache_files.read_signed(path, path.name)


def test_no_cache_when_turned_off(tmp_path):
    assert _run(tmp_path, NCCLLENS_NO_CACHE="1")["events"]
    assert not list(tmp_path.iterdir())


def test_an_unwritable_cache_directory_is_not_an_error(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    assert _run(blocker / "cache")["events"]  # the cache's parent is a file: nothing written, no error


def test_the_cache_keeps_the_newest_key_choices(tmp_path, monkeypatch):
    from nccllens import plan_cache, prefilter_keys

    groups = {((f"lit{i}",), ()): (f"key{i}",) for i in range(plan_cache.MAX_GROUPS + 4)}
    monkeypatch.setenv("NCCLLENS_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(prefilter_keys, "_GROUPS", groups)
    monkeypatch.setattr(plan_cache, "_held", (0, 0))
    plan_cache.save()
    saved = json.loads(next(tmp_path.glob("plan-*.json")).read_text())["groups"]  # a JSON object, signed
    assert [g[2] for g in saved] == [[f"key{i}"] for i in range(4, plan_cache.MAX_GROUPS + 4)]


def test_a_kept_plan_and_index_are_the_ones_built(tmp_path, monkeypatch):
    """The finished plan and branch index read back from the cache equal those built from the patterns,
    with and without the compiled engine (they are the cache's whole saving on a small run)."""
    from nccllens import plan_cache
    from nccllens.analysis import Options, load_rules
    from nccllens.extract import plan
    from nccllens.parse import masks
    from nccllens.parse.survivors import mask_targets
    from nccllens.regex_groups import pattern_groups

    monkeypatch.setattr(plan_cache, "_MEMO", {})
    patterns = [r.match.pattern for r in load_rules(Options()) if r.match.pattern]
    for engine in ("fallback", ""):
        monkeypatch.setenv("NCCLLENS_ENGINE", engine)
        built = plan.combined_prefilter(patterns)
        (key, kept), = plan_cache._MEMO["plan"].items()
        assert plan._from_json(kept) == built
        plan_cache._MEMO.clear()
    masks.index.cache_clear()
    targets = mask_targets(pattern_groups(patterns))
    built = masks.index(targets)
    (key, kept), = plan_cache._MEMO["index"].items()
    assert masks._from_json(kept) == built
    masks.index.cache_clear()
    assert masks.index(targets) == built  # recalled, not built


def test_a_kept_plan_that_is_not_one_is_built_again(monkeypatch):
    from nccllens import plan_cache
    from nccllens.extract import plan

    monkeypatch.setattr(plan_cache, "_MEMO", {})
    built = plan.combined_prefilter(["NCCL WARN"])
    key = next(iter(plan_cache._MEMO["plan"]))
    for bad in ({"literals": [1]}, {**plan._as_json(built), "watch": [[1, 2]]}, [], "x"):
        plan_cache._MEMO["plan"][key] = bad
        assert plan.combined_prefilter(["NCCL WARN"]) == built
