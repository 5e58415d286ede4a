"""Extraction elsewhere, analysis here: per-file event shards give the report the logs give.

The corpus is written by bench/synth.py (every file marked synthetic, lines built from verbatim
format strings); its expected.toml names the category the injected fault should get.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest

try:
    import tomllib
except ImportError:  # Python 3.10
    import tomli as tomllib

import nccllens
from nccllens.analysis import Options, load_rules
from nccllens.event_io import write_events
from nccllens.extract import combined_prefilter, extract_source_tables
from nccllens.ingest.sources import iter_sources
from nccllens.regex_groups import pattern_groups

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "fleet_extract.py"
# real torchrun run (torch 2.13 CPU, two simulated nodes); see its expected.toml
WRAPPER_FIXTURE = ROOT / "fixtures" / "wrapper_hides_exit_code"


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("synth") / "logs"
    subprocess.run([sys.executable, str(ROOT / "bench" / "synth.py"), str(out), "--ranks", "8", "--hosts", "2",
                    "--fault", "xid79", "--bytes", "1M"], check=True, capture_output=True)
    return out


@pytest.fixture(scope="module")
def direct(corpus):
    return nccllens.analyze(str(corpus))


def _expected(corpus: Path) -> dict:
    return tomllib.loads((corpus / "expected.toml").read_text())


def _shard_per_file(logs: Path, shards: Path) -> int:
    """What a fleet worker does, file by file, without an engine: extract, then write one shard."""
    rule_patterns = [rule.match.pattern for rule in load_rules(Options()) if rule.match.pattern]
    pattern = combined_prefilter(rule_patterns)
    rule_patterns = pattern_groups(rule_patterns)  # grouped once, not once per file
    written = 0
    for i, source in enumerate(iter_sources([str(logs)])):
        events, _, summaries = extract_source_tables(source, pattern, rule_patterns)
        if events.height:
            write_events(events, shards / f"events-{i:05d}.parquet", summaries)
            written += 1
    return written


def _findings(report) -> list[tuple]:
    return [(f.rule, f.category, f.role, f.severity, f.ranks, f.hosts, f.count, f.first_seen,
             [(e.file, e.line, e.rank, e.host) for e in f.evidence]) for f in report.findings]


def test_per_file_shards_give_the_same_report_as_the_logs(corpus, direct, tmp_path):
    shards = tmp_path / "shards"
    shards.mkdir()
    assert _shard_per_file(corpus, shards) >= 9  # 8 NCCL debug files, 2 consoles, the Xid dmesg

    via = nccllens.analyze(str(shards))

    assert direct.verdict.category == _expected(corpus)["category"] == "gpu_hardware"
    assert via.verdict == direct.verdict
    assert _findings(via) == _findings(direct)
    culprit = via.findings[0]
    assert culprit.hosts == _expected(corpus)["culprit_hosts"] == ["gpu-node-001"]
    # the evidence still points at the original log lines, not at the shards
    assert culprit.evidence[0].file == f"{corpus}/gpu-node-001/dmesg.txt"
    assert "Xid" in culprit.evidence[0].text
    assert via.events.equals(direct.events)
    assert {i.kind for i in via.inputs} == {"events_parquet"}


def test_shards_carry_the_schema_version_and_the_summaries(corpus, tmp_path):
    from nccllens.extract import extract_tables

    shards = tmp_path / "shards"
    shards.mkdir()
    _shard_per_file(corpus, shards)
    shard = sorted(shards.iterdir())[0]
    assert pl.read_parquet_metadata(shard)["nccllens.events_schema_version"] == "3"
    assert pl.read_parquet_schema(shard)["rank"] == pl.Int32()
    # the per-rank COLL summaries travel in the shards' metadata and come back as the logs give them
    direct = extract_tables([str(corpus)], workers=0)[2]
    via = extract_tables([str(shards)], workers=0)[2]
    assert direct.filter(pl.col("family") == "nccl.coll").height == 8
    assert via.equals(direct)


@pytest.mark.parametrize("version", ["1", "2"])
def test_version_1_and_2_shards_still_read(corpus, tmp_path, version):
    """A shard written before the summaries (1) or the repeat counts (2) existed: the same findings."""
    shards = tmp_path / "v1"
    shards.mkdir()
    _shard_per_file(corpus, shards)
    for shard in shards.iterdir():
        table = pl.read_parquet(shard).drop("count", "last_line", "last_ts")  # neither version had them
        table.write_parquet(shard, metadata={"nccllens.events_schema_version": version})
    via = nccllens.analyze(str(shards))
    assert via.verdict.category == "gpu_hardware"
    assert {i.kind for i in via.inputs} == {"events_parquet"}


def test_the_wrapper_fixture_has_a_line_only_a_rule_keeps():
    """The precondition of the next test: `training finished` (the wrapper's echo) is kept: by the
    progress family as the job's end, or by a rule's pattern."""
    direct = nccllens.analyze(str(WRAPPER_FIXTURE))
    kept = direct.events.filter(pl.col("kind").is_in(["other.text", "progress.finished"]))["message"].to_list()
    assert "training finished" in kept
    assert "AN-MASKED-EXIT" in [f.rule for f in direct.findings]


def test_cli_event_shards_give_the_same_findings(tmp_path):
    from typer.testing import CliRunner

    from nccllens.cli import app

    direct = nccllens.analyze(str(WRAPPER_FIXTURE))
    shards = tmp_path / "cli-shards"
    assert CliRunner().invoke(app, ["events", str(WRAPPER_FIXTURE), "-o", f"{shards}/"]).exit_code == 0
    via = nccllens.analyze(str(shards))
    assert via.verdict.category == direct.verdict.category == "application_error"
    assert _findings(via) == _findings(direct)


_NO_ENGINE = importlib.util.find_spec("dask") is None or importlib.util.find_spec("distributed") is None
_NO_FSSPEC = importlib.util.find_spec("fsspec") is None


@pytest.mark.skipif(_NO_ENGINE or _NO_FSSPEC, reason="the example needs dask.distributed and fsspec, which are not "
                    "installed here (pip install 'dask[distributed]'; see docs/scaling.md)")
def test_fleet_example_on_a_local_dask_cluster(corpus, direct, tmp_path):
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    run = subprocess.run([sys.executable, str(EXAMPLE), str(corpus), str(tmp_path / "shards"), "--workers", "2"],
                         capture_output=True, text=True, env=env, timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]
    report = json.loads(run.stdout)
    assert report["verdict"]["category"] == direct.verdict.category == "gpu_hardware"
    assert report["verdict"]["summary"] == direct.verdict.summary
    assert [(f["rule"], f["ranks"], f["hosts"], f["count"]) for f in report["findings"]] == [
        (f.rule, f.ranks, f.hosts, f.count) for f in direct.findings]
    assert "extraction on Dask" in run.stderr
    assert len(list((tmp_path / "shards").glob("events-*.parquet"))) >= 9
