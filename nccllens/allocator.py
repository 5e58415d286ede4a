"""How polars' allocator (jemalloc) gives freed memory back, per process.

polars keeps freed pages for half a second before returning them. The command's own process builds
the event table and runs the analyses in about as much time, each step freeing the copies the step
before made, so nearly every copy of the run stayed resident at once (4,096 ranks: a peak of ~270 MiB
for a 50 MiB table). There, freed pages go back after 20 ms: measured, no slower. The worker processes
keep polars' setting: they reuse the same large buffers for every file, and returning them made them
slower. jemalloc reads its settings from the environment once, when polars is first imported.
"""

from __future__ import annotations

import contextlib
import os
import sys

VARIABLE = "_RJEM_MALLOC_CONF"
MAIN = "dirty_decay_ms:20,muzzy_decay_ms:0"
WORKERS = "dirty_decay_ms:500,muzzy_decay_ms:1000"  # polars' own setting
ROLE = "NCCLLENS_PROCESS_ROLE"  # "worker" in worker processes: they re-run the command's module on start
_set_here = False


def for_main_process() -> None:
    """Call before polars is imported. A setting the user made is left alone; polars' own, inherited
    from a parent process that imported polars (a script, the benchmark), is not a choice."""
    global _set_here
    if os.environ.get(ROLE) == "worker":
        return
    if os.environ.get(VARIABLE, WORKERS) == WORKERS and "polars" not in sys.modules:
        os.environ[VARIABLE] = MAIN
        _set_here = True


@contextlib.contextmanager
def for_workers():
    """Start worker processes within: they inherit this environment. A main process that has not
    loaded polars yet (its workers were forked first thing) gets its own setting back after."""
    if not _set_here:
        yield
        return
    os.environ[VARIABLE] = WORKERS
    os.environ[ROLE] = "worker"
    try:
        yield
    finally:
        if "polars" not in sys.modules:
            os.environ[VARIABLE] = MAIN
            del os.environ[ROLE]
