"""Jobs: files grouped for the worker processes, each job run in a worker, their outputs collected in order."""

from __future__ import annotations

import polars as pl

from nccllens import events as ev
from nccllens import summaries as sm
from nccllens.extract.batch import SMALL, extract_small
from nccllens.extract.source import extract_source_tables, year_for
from nccllens.ingest.sources import Source, reopen
from nccllens.prefilter import learn_literals
from nccllens.report.model import InputFile

MERGE_EVERY = 64  # job tables merged into one every so often


def run_job(args: tuple) -> tuple[pl.DataFrame, list[InputFile], pl.DataFrame]:
    """Worker entry point: a batch of files on disk (picklable arguments only) → one event table for the
    batch, what was read of each file, and the batch's summary table."""
    files, pattern, rule_pattern, known = args
    if known:  # the patterns' literals, as the main process found them: no need to parse every pattern again
        learn_literals(known)
    sources = [reopen(*file) for file in files]
    if len(sources) == 1:
        results = [extract_source_tables(sources[0], pattern, rule_pattern)]
    else:
        results = extract_small(sources, pattern, rule_pattern, year_for)
    return (ev.sort(ev.concat(frame for frame, _, _ in results)), [info for _, info, _ in results],
            sm.concat(summary for _, _, summary in results))


BATCH_BYTES = 8 << 20  # a worker's memory follows its batch (16 MiB: ~180 MiB a worker on 4,096 ranks, 8: ~130)


def jobs_of(sources: list[Source], indices: list[int]) -> list[list[int]]:
    """Group sources into jobs: each large file alone, small plain files in batches."""
    jobs, batch, batch_bytes = [], [], 0
    for i in indices:
        s = sources[i]
        small = (s.size or 0) <= SMALL and not s.path.lower().endswith(".gz")
        if not small:
            jobs.append([i])
            continue
        batch.append(i)
        batch_bytes += s.size or 0
        if len(batch) >= 256 or batch_bytes >= BATCH_BYTES:
            jobs.append(batch)
            batch, batch_bytes = [], 0
    if batch:
        jobs.append(batch)
    return jobs


def collect(outputs, jobs, sources, total: int,
               progress) -> tuple[list[pl.DataFrame], dict, bool, list[pl.DataFrame]]:
    """Collect job outputs in order, telling ``progress(done_bytes, total_bytes)`` as they finish.
    Event tables are merged as they come (thousands of small frames cost more memory than their rows).
    Each job's table is sorted (``events.sort``); the flag says whether the jobs' files also came in
    order, in which case their rows together are sorted too. The jobs' summary tables come last."""
    done, blocks, frames, infos, ordered, last, summaries = 0, [], [], {}, True, None, []
    for job, (frame, job_infos, summary) in zip(jobs, outputs, strict=True):
        infos.update(zip(job, job_infos, strict=True))
        if summary.height:
            summaries.append(summary)
        if frame.height:
            first, final = frame["file"][0], frame["file"][-1]
            ordered = ordered and first is not None and final is not None and (last is None or last < first)
            last = final
            frames.append(frame)
        if len(frames) >= MERGE_EVERY:
            # one contiguous block per MERGE_EVERY jobs: every table that arrives is 36 columns of small
            # buffers, and thousands of them cost far more memory than their rows (10 GiB, 4,096 ranks:
            # ~1,300 jobs, ~90 MiB held in chunks before the final copy)
            blocks.append(ev.assemble(frames))
        done += sum(sources[i].size or 0 for i in job)
        if progress is not None:
            progress(done, total)
    return blocks + frames, infos, ordered, summaries
