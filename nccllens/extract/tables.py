"""Stage 3 of extraction: paths → one event table, the inputs' inventory and the summary table.

Sources (``ingest.sources``) are grouped into jobs (``extract.jobs``: large files alone, small ones in
batches read by ``extract.batch``) and spread over worker processes (``extract.workers``); what no worker
reads (archive members, standard input) is read here. Event rows are attributed and sorted once.
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence

import polars as pl

from nccllens import events as ev
from nccllens import plan_cache
from nccllens import summaries as sm
from nccllens.extract import engine
from nccllens.extract import workers as workers_mod
from nccllens.extract.batch import SMALL, extract_small
from nccllens.extract.jobs import collect, jobs_of, run_job
from nccllens.extract.plan import combined_prefilter
from nccllens.extract.source import extract_source, extract_source_tables, year_for
from nccllens.ingest.sources import Source, iter_sources
from nccllens.parse.masks import index
from nccllens.parse.survivors import mask_targets
from nccllens.prefilter import known_literals
from nccllens.regex_groups import pattern_groups
from nccllens.report.model import InputFile


@contextlib.contextmanager
def _pool(workers: int):
    """A pool of ``workers`` processes, already importing the extraction modules (None: 0 workers)."""
    if workers < 1:
        workers_mod.stop_early()  # started for an input that turned out to need none
        yield None
        return
    with workers_mod.pool(workers) as pool:
        yield pool


def extract(paths: list[str], rule_pattern: str | Sequence[str] | None = None, host: str | None = None,
            rank: int | None = None, workers: int | None = None,
            progress=None) -> tuple[pl.DataFrame, list[InputFile]]:
    """Extract events from every source under ``paths``; files are spread over worker processes."""
    events, infos, _ = extract_tables(paths, rule_pattern, host, rank, workers, progress)
    return events, infos


def extract_tables(paths: list[str], rule_pattern: str | Sequence[str] | None = None, host: str | None = None,
                   rank: int | None = None, workers: int | None = None,
                   progress=None) -> tuple[pl.DataFrame, list[InputFile], pl.DataFrame]:
    """``extract`` with the summary table of the dense families (``nccllens.summaries``) as a third item."""
    from nccllens.attribution import attribute

    sources = list(iter_sources(paths))
    on_disk = [i for i, s in enumerate(sources) if s.fs_path is not None and not s.skipped]
    total = sum(sources[i].size or 0 for i in on_disk)
    jobs = jobs_of(sources, on_disk)
    workers = workers_mod.count() if workers is None else workers
    parallel = workers > 1 and len(jobs) > 1 and workers_mod.enough(total, len(on_disk))
    with _pool(workers if parallel else 0) as pool:  # workers start now, and import while the plan is built
        plan_cache.load()
        pattern = combined_prefilter(rule_pattern)
        if pattern.engine is not None and pool:  # compiled (and cached) once here, loaded by the workers
            engine.prepare(pattern.engine)
        rule_pattern = pattern_groups(rule_pattern)
        index(mask_targets(rule_pattern))  # every pattern branch's literals, found once here
        plan_cache.save()
        known = known_literals() if pool else None  # for the workers; the first jobs reach each of them
        args = [([(sources[i].path, sources[i].fs_path, sources[i].size, sources[i].hint_from) for i in job],
                 pattern, rule_pattern, known if k < 4 * workers else None) for k, job in enumerate(jobs)]
        outputs = pool.map(run_job, args) if pool else map(run_job, args)
        frames, done, ordered, summaries = collect(outputs, jobs, sources, total, progress)
    infos: list[InputFile] = []
    for batch in _main_process_batches(sources, done):
        if len(batch) > 1:  # small archive members: one frame and one prefilter pass for many of them
            results = extract_small([sources[i] for i in batch], pattern, rule_pattern, year_for)
        else:
            # --host/--rank describe standard input, which has no path to learn them from
            stdin = sources[batch[0]].path == "<stdin>"
            results = [extract_source_tables(sources[batch[0]], pattern, rule_pattern, host if stdin else None,
                                             rank if stdin else None)]
        for i, (table, info, summary) in zip(batch, results, strict=True):
            frames.append(table)
            summaries.append(summary)
            ordered = ordered and not table.height
            done[i] = info
    infos = [done[i] for i in range(len(sources))]
    summary = sm.concat(summaries)
    # one contiguous copy here, not one in every later analysis
    events = attribute(ev.assemble(frames), sm.channel_ranks(summary), sm.file_hosts(summary))
    events = events if ordered else ev.sort(events)
    return events, infos, sm.attribute(summary, events)


def _main_process_batches(sources: list[Source], done: dict) -> list[list[int]]:
    """The sources no worker read, in order: runs of small archive members together (reading 20,000
    members one by one took 260 s, a frame each), anything else alone."""
    out: list[list[int]] = []
    for i, s in enumerate(sources):
        if i in done:
            continue
        small = "!" in s.path and not s.skipped and (s.size or 0) <= SMALL and len(out) and len(out[-1]) < 256
        if small and "!" in sources[out[-1][-1]].path and not sources[out[-1][-1]].skipped:
            out[-1].append(i)
        else:
            out.append([i])
    return out


def events_from_text(text: str, name: str = "<example>",
                     rule_pattern: str | Sequence[str] | None = None) -> pl.DataFrame:
    """Run the real extraction on an in-memory text (rule examples, tests, the API)."""
    data = text.encode("utf-8", errors="replace")
    source = Source(name, lambda: iter([data]), len(data))
    from nccllens.attribution import attribute

    events, _ = extract_source(source, combined_prefilter(rule_pattern), pattern_groups(rule_pattern))
    return attribute(events)
