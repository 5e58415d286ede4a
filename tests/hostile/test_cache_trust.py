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


def _crafted(value):
    """``value`` with every string in it replaced by one no log holds (keys and dict keys kept)."""
    if isinstance(value, str):
        return "ZZZ-NEVER-IN-A-LOG"
    if isinstance(value, list):
        return [_crafted(v) for v in value]
    if isinstance(value, dict):
        return {k: v if k in ("digest", "key") else _crafted(v) for k, v in value.items()}
    return value


def test_a_crafted_cache_changes_no_finding(tmp_path):
    logs, cache = plant(tmp_path / "logs"), tmp_path / "cache"
    assert _top(logs, cache) == ["gpu_oom", [3]]
    files = sorted(cache.glob("*.json"))  # the plan's parts and products, the rule set, the analyses' texts
    assert {f.name.split("-")[0] for f in files} >= {"plan", "rules"}
    for path in files:
        data = json.loads(path.read_text())
        if path.name.startswith("plan-") and path.name.count("-") == 1:  # the parts: every literal crafted
            data["literals"] = {p: [["ZZZ-NEVER-IN-A-LOG"], False] for p in data["literals"]}
        else:
            data = _crafted(data)  # keeps the old digest
        path.write_text(json.dumps(data))
    assert _top(logs, cache) == ["gpu_oom", [3]]
    # and the crafted files were replaced by good ones
    assert not [f.name for f in cache.glob("*.json") if "ZZZ-NEVER" in f.read_text()]


def test_a_key_file_others_could_have_written_turns_caching_off(tmp_path):
    logs, cache = plant(tmp_path / "logs"), tmp_path / "cache"
    cache.mkdir()
    (cache / ".key").write_bytes(b"k" * 32)
    os.chmod(cache / ".key", 0o644)
    assert _top(logs, cache) == ["gpu_oom", [3]]
    assert not list(cache.glob("plan-*.json"))
