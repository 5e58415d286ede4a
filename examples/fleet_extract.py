"""Extract nccllens events on a Dask cluster, one task per log file; analyse the event shards on one machine.

    python examples/fleet_extract.py LOGS SHARDS [--workers 2] [--scheduler tcp://HOST:8786]

LOGS is a local folder, or any URL fsspec understands (``s3://bucket/job-1234/logs`` with ``s3fs``
installed, ``gs://...`` with ``gcsfs``). SHARDS is where one Parquet shard per log file goes (local or a
URL as well). The workers need nccllens and fsspec installed; they read each file's bytes themselves,
so only file names and small summaries cross the network. The report (JSON, as ``nccllens analyze
SHARDS --format json`` prints it) goes to standard output; timings go to standard error.

Same with object storage (the code below does not change, only the arguments):

    python examples/fleet_extract.py s3://bucket/job-1234/logs s3://bucket/job-1234/shards \\
        --scheduler tcp://dask-scheduler:8786

Archives (.tar, .tar.gz, .zip) are not expanded here: a worker reads one object as one log
(``.gz`` is decompressed). Unpack archives upstream, or run ``nccllens events ARCHIVE -o shards/``.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time

import fsspec

import nccllens
from nccllens.analysis import Options, load_rules
from nccllens.events import EVENTS_SCHEMA_VERSION
from nccllens.extract import combined_prefilter, extract_source_tables
from nccllens.ingest.streams import BLOCK, Source
from nccllens.regex_groups import pattern_groups
from nccllens.report.json_out import render
from nccllens.summaries import to_json

SHARD_METADATA = {"nccllens.events_schema_version": str(EVENTS_SCHEMA_VERSION)}


def list_inputs(root: str) -> list[str]:
    """Every file under ``root``, named the way ``nccllens analyze ROOT`` names it (``ROOT/sub/file``)."""
    fs, base = fsspec.core.url_to_fs(root)
    if fs.isfile(base):
        return [root]
    base = base.rstrip("/")
    return [f"{root.rstrip('/')}/{path[len(base):].lstrip('/')}" for path in sorted(fs.find(base))]


def _reader(url: str):
    def chunks():
        with fsspec.open(url, "rb", compression="infer") as fh:
            while block := fh.read(BLOCK):
                yield block

    return chunks


def extract_to_shard(task: tuple[int, str, str, tuple[str, ...], tuple[str, ...]]) -> dict:
    """Runs on a worker: one log file in, one Parquet shard out (none when the file has no events)."""
    index, url, shards, pattern, rule_patterns = task
    events, info, summaries = extract_source_tables(Source(url, _reader(url)), pattern, rule_patterns)
    if events.height:
        # the dense families' summary rows (schema version 2) travel in the shard's metadata
        meta = {**SHARD_METADATA, **({"nccllens.summaries": to_json(summaries)} if summaries.height else {})}
        with fsspec.open(f"{shards.rstrip('/')}/events-{index:06d}.parquet", "wb") as fh:
            events.write_parquet(fh, metadata=meta)
    return {"file": url, "lines": info.lines, "events": events.height, "skipped": info.skipped}


def run_on_dask(tasks: list[tuple], workers: int, scheduler: str | None) -> list[dict]:
    from dask.distributed import Client, LocalCluster

    if scheduler:  # an existing cluster: its workers must have nccllens installed
        with Client(scheduler) as client:
            return client.gather(client.map(extract_to_shard, tasks))
    with LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                      dashboard_address=None) as cluster, Client(cluster) as client:
        return client.gather(client.map(extract_to_shard, tasks))


def analyze_shards(shards: str):
    """The event table is small: fetch the shards to this machine (if remote) and analyse them."""
    fs, path = fsspec.core.url_to_fs(shards)
    if "file" in fs.protocol:
        return nccllens.analyze(path)
    with tempfile.TemporaryDirectory() as local:
        fs.get(f"{path.rstrip('/')}/", local, recursive=True)
        return nccllens.analyze(local)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("logs", help="folder or URL holding the job's logs")
    ap.add_argument("shards", help="folder or URL for the event shards")
    ap.add_argument("--workers", type=int, default=2, help="local worker processes (without --scheduler)")
    ap.add_argument("--scheduler", help="address of an existing Dask scheduler")
    args = ap.parse_args(argv)

    # the patterns of the rules `nccllens analyze` runs: lines only a rule wants are kept as other.text
    rule_patterns = [rule.match.pattern for rule in load_rules(Options()) if rule.match.pattern]
    pattern = combined_prefilter(rule_patterns)
    rule_patterns = pattern_groups(rule_patterns)  # grouped once, not once per file
    files = list_inputs(args.logs)
    fs, shards_path = fsspec.core.url_to_fs(args.shards)
    fs.makedirs(shards_path, exist_ok=True)
    tasks = [(i, url, args.shards, pattern, rule_patterns) for i, url in enumerate(files)]

    start = time.perf_counter()
    summaries = run_on_dask(tasks, args.workers, args.scheduler)
    extracted = time.perf_counter()
    report = analyze_shards(args.shards)
    done = time.perf_counter()

    skipped = [s for s in summaries if s["skipped"]]
    print(f"{len(files)} files ({len(skipped)} skipped), {sum(s['lines'] for s in summaries)} lines, "
          f"{sum(s['events'] for s in summaries)} events; extraction on Dask {extracted - start:.2f} s, "
          f"analysis of the shards {done - extracted:.2f} s", file=sys.stderr)
    sys.stdout.write(render(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
