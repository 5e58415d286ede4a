"""Every fixture folder is a usable ground truth: real logs per node plus a valid expected.toml."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
TAXONOMY = Path(__file__).resolve().parents[2] / "shared" / "taxonomy.md"
# used only when ../shared is absent (a fresh clone elsewhere); keep in step with taxonomy.md
EMBEDDED_CATEGORIES = {
    "gpu_hardware", "gpu_oom", "host_oom", "shm_exhausted", "network_unreachable", "peer_exited",
    "ib_fabric", "ib_fallback", "network_interface", "collective_timeout", "rank_divergence",
    "straggler", "config_mismatch", "cuda_error", "p2p_topology", "job_killed", "rendezvous_timeout",
    "dataloader_crash", "application_error", "nccl_internal",
}
NOT_SCENARIOS = {"generate", "public", "holdout", "lines"}  # the generator, the real-log corpus
# (tests/test_corpus_layout.py) and the line collections (tests/test_line_collections.py)
REQUIRED = {
    "scenario": str, "provoked": str, "category": str, "culprit_ranks": list, "culprit_hosts": list,
    "healthy": bool, "torch": str, "command": str, "synthetic": bool,
}


def taxonomy_categories() -> set[str]:
    if not TAXONOMY.is_file():
        return EMBEDDED_CATEGORIES
    rows = re.findall(r"^\|\s*`([a-z0-9_]+)`\s*\|", TAXONOMY.read_text(encoding="utf-8"), re.MULTILINE)
    return set(rows)


def scenario_dirs() -> list[Path]:
    return sorted(p for p in FIXTURES.iterdir() if p.is_dir() and p.name not in NOT_SCENARIOS)


def load(folder: Path) -> dict:
    return tomllib.loads((folder / "expected.toml").read_text(encoding="utf-8"))


SCENARIOS = scenario_dirs()
IDS = [p.name for p in SCENARIOS]


def test_taxonomy_is_parsed_and_matches_embedded_fallback():
    categories = taxonomy_categories()
    assert {"application_error", "peer_exited", "rank_divergence"} <= categories
    assert EMBEDDED_CATEGORIES <= categories


def test_there_are_enough_scenarios_and_healthy_controls():
    expectations = [load(folder) for folder in SCENARIOS]
    assert len([e for e in expectations if not e["healthy"]]) >= 13
    assert len([e for e in expectations if e["healthy"]]) >= 2


@pytest.mark.parametrize("folder", SCENARIOS, ids=IDS)
def test_expected_toml_is_complete_and_typed(folder: Path):
    expected = load(folder)
    for key, kind in REQUIRED.items():
        assert isinstance(expected.get(key), kind), f"{folder.name}: {key} missing or not {kind.__name__}"
    assert expected["scenario"] == folder.name
    assert all(isinstance(rank, int) and rank >= 0 for rank in expected["culprit_ranks"])
    assert all(isinstance(host, str) and host for host in expected["culprit_hosts"])
    assert expected["provoked"].strip() and expected["command"].strip()


@pytest.mark.parametrize("folder", SCENARIOS, ids=IDS)
def test_category_is_from_the_taxonomy(folder: Path):
    expected = load(folder)
    allowed = taxonomy_categories()
    if expected["healthy"]:
        assert expected["category"] == "none"
    else:
        assert expected["category"] in allowed
    for other in expected.get("also_acceptable", []):
        assert other in allowed


@pytest.mark.parametrize("folder", SCENARIOS, ids=IDS)
def test_culprits_match_health(folder: Path):
    expected = load(folder)
    if expected["healthy"]:
        assert expected["culprit_ranks"] == [] and expected["culprit_hosts"] == []
    else:
        assert expected["culprit_ranks"] or expected["culprit_hosts"], f"{folder.name}: no culprit"


@pytest.mark.parametrize("folder", SCENARIOS, ids=IDS)
def test_every_node_has_a_real_console_log_naming_its_host(folder: Path):
    expected = load(folder)
    nodes = sorted(p for p in folder.iterdir() if p.is_dir())
    assert nodes, f"{folder.name}: no node folders"
    for node in nodes:
        console = node / "console.log"
        assert console.is_file() and console.stat().st_size > 0, f"{console} missing or empty"
        assert node.name in expected["command"], f"{node.name} was not launched by the recorded command"
    for host in expected["culprit_hosts"]:
        assert (folder / host).is_dir(), f"{folder.name}: culprit host {host} has no folder"


@pytest.mark.parametrize("folder", SCENARIOS, ids=IDS)
def test_real_runs_carry_torchrun_output(folder: Path):
    expected = load(folder)
    if expected["synthetic"]:
        pytest.skip("synthetic fixture")
    text = "\n".join(p.read_text(encoding="utf-8", errors="replace") for p in folder.glob("*/console.log"))
    assert "torch/distributed/" in text, f"{folder.name}: no torchrun/torch.distributed line in the consoles"


@pytest.mark.parametrize("folder", SCENARIOS, ids=IDS)
def test_key_lines_are_in_the_named_hosts_logs(folder: Path):
    """The outcome recorded in expected.toml is what the captured logs really show."""
    for host, texts in load(folder).get("key_lines", {}).items():
        logs = [p for p in (folder / host).rglob("*") if p.is_file()]
        text = "\n".join(p.read_text(encoding="utf-8", errors="replace") for p in logs)
        for wanted in texts:
            assert wanted in text, f"{folder.name}/{host}: {wanted!r} not in its logs"


def test_failure_fixtures_show_the_culprit_host_in_a_failure_table_or_traceback():
    """Where torchrun reported a failure on the culprit host, the table names that host."""
    checked = 0
    for folder in SCENARIOS:
        expected = load(folder)
        for host in expected["culprit_hosts"]:
            console = (folder / host / "console.log").read_text(encoding="utf-8", errors="replace")
            if "ChildFailedError" in console:
                assert f"host      : {host}" in console, f"{folder.name}: failure table without {host}"
                checked += 1
    assert checked >= 8
