"""Caches are checked, never trusted (issue 19): a crafted cache file changes no finding."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.hostile.planted import plant

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ("import json, sys, nccllens; r = nccllens.analyze([sys.argv[1]]); "
          "print(json.dumps([r.findings[0].category, r.findings[0].ranks] if r.findings else None))")


def _top(logs: Path, cache: Path):
    env = {**os.environ, "NCCLLENS_CACHE_DIR": str(cache)}
    done = subprocess.run([sys.executable, "-c", SCRIPT, str(logs)], capture_output=True, text=True, env=env,
                          cwd=ROOT, timeout=300)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_a_crafted_cache_changes_no_finding(tmp_path):
    logs, cache = plant(tmp_path / "logs"), tmp_path / "cache"
    assert _top(logs, cache) == ["gpu_oom", [3]]
    (plan,) = cache.glob("plan-*.json")
    data = json.loads(plan.read_text())
    data["literals"] = {p: [["ZZZ-NEVER-IN-A-LOG"], False] for p in data["literals"]}  # keeps the old digest
    plan.write_text(json.dumps(data))
    rules = next(cache.glob("rules-*.json"), None)
    if rules is not None:
        held = json.loads(rules.read_text())
        for entry in held.values():
            for doc in entry["value"]:
                if isinstance(doc[1].get("match"), dict) and doc[1]["match"].get("pattern"):
                    doc[1]["match"]["pattern"] = "ZZZ-NEVER-IN-A-LOG"
        rules.write_text(json.dumps(held))
    assert _top(logs, cache) == ["gpu_oom", [3]]
    # and the crafted files were replaced by good ones
    assert "ZZZ-NEVER" not in plan.read_text()


def test_a_key_file_others_could_have_written_turns_caching_off(tmp_path):
    logs, cache = plant(tmp_path / "logs"), tmp_path / "cache"
    cache.mkdir()
    (cache / ".key").write_bytes(b"k" * 32)
    os.chmod(cache / ".key", 0o644)
    assert _top(logs, cache) == ["gpu_oom", [3]]
    assert not list(cache.glob("plan-*.json"))
