"""Rank-level stragglers and hangs that print no error of their own.

When some ranks wait (a watchdog or gloo timeout, a store wait) the question is what the others did:

- ``busy_while_waiting``: a progress bar still moving (tokenising, evaluating, preparing data) on a
  rank that is not among the waiting ones: alive and busy, a straggler. A bar printed with no rank of
  its own (tqdm writes only on the main process in HF, accelerate, Lightning, YOLO...) belongs to the
  main process, rank 0, when rank 0 is not waiting; else to the ranks not waiting.
- ``gloo_absent``: in a gloo job every rank that reached the collective raises its own timeout; the rank
  absent from the set that timed out is the culprit: alive at the end (stopped by the agent or a harness)
  it was stuck or busy elsewhere (straggler); dead on its own it exited (its own error says why).

Also here: which ranks the launcher stopped itself (``stopped_by_agent``) and which went away on their own
(``dead_ranks``). Slow steps are ``analyses.slow_steps``; a one-node job stuck in its first collective and a
wall-clock kill are ``analyses.first_collective``.
"""

from __future__ import annotations

import polars as pl

from nccllens import lazy_regex
from nccllens.analyses.busy_bars import bars_of, still_moving
from nccllens.analyses.common import NONE, hosts_of, joined_ranks, make_finding, rank_list
from nccllens.analyses.reads import reads
from nccllens.parse.progress import clock_ms
from nccllens.report.model import Finding, RankStatus

GLOO_TIMEOUT = pl.col("kind").eq("torch.gloo_error") & pl.col("value").fill_null("").str.ends_with("timeout")
# a watchdog timeout that reached the log only as ``terminate called ... what(): [Rank 3] Watchdog caught ...``
TERMINATED_WAIT = (pl.col("kind") == "cpp.terminate") & pl.col("timeout_ms").is_not_null()
WAITING = pl.col("kind").is_in(["torch.watchdog_timeout", "torch.store_timeout"]) | GLOO_TIMEOUT | TERMINATED_WAIT
AGENT_STOP = ("SIGTERM", "SIGINT", "SIGHUP")
# errors a rank gets because its peers gave up and left: it was alive, the error is a consequence
PEER_LEFT = lazy_regex.compile(r"(?i)closed by peer|reset by peer|broken pipe|timed? ?out|timeout|remote process exiting")


def stopped_by_agent(events: pl.DataFrame, status: list[RankStatus]) -> set[int]:
    """Ranks the launcher had to stop (``Sending process N closing signal SIGTERM``, ``Unable to shutdown
    process N via 15, forcefully exiting via 9``): alive when the others had already failed, whatever their
    exit code (-15, or -9 from the forced kill) says."""
    sent = events.filter(pl.col("kind") == "torchrun.sigterm_sent")
    ranks = {int(r) for r in sent["rank"].drop_nulls().to_list()}
    pids = {int(p) for p in sent["pid"].drop_nulls().to_list()}
    return ranks | {s.rank for s in status if s.pid is not None and s.pid in pids}


def dead_ranks(events: pl.DataFrame, status: list[RankStatus]) -> set[int]:
    """Ranks that went away on their own: exited or crashed, not stopped by the launcher, and not merely
    failing because their peers had left."""
    stopped = stopped_by_agent(events, status)
    return {s.rank for s in status if s.state in ("crashed", "exited") and s.signal not in AGENT_STOP
            and s.rank not in stopped and not PEER_LEFT.search(s.first_error or "")}


def _waiting(events: pl.DataFrame) -> pl.DataFrame:
    """Every wait that timed out, also those whose line names no rank (a paste cut before its prefix)."""
    return events.filter(WAITING)


def _outlasted(busy: pl.DataFrame, waits: pl.DataFrame) -> bool:
    """A bar with no rank of its own that had run (``_ran``) at least as long as the longest watchdog timeout."""
    timeout = waits.filter(pl.col("kind") == "torch.watchdog_timeout")["timeout_ms"].drop_nulls()
    return bool(len(timeout)) and busy.filter(pl.col("rank").is_null() & (pl.col("_ran") >= timeout.max())).height > 0


@reads("torch.watchdog_timeout", "torch.store_timeout", "torch.gloo_error", "cpp.terminate")
def busy_while_waiting(events: pl.DataFrame, seen: int | None, status: list[RankStatus],
                       rank_hosts: dict[int, str], lang: str, summaries: pl.DataFrame | None = None) -> list[Finding]:
    waits = _waiting(events)
    if not waits.height:
        return []
    waiting = {int(r) for r in waits["rank"].drop_nulls().to_list()} | joined_ranks(events)
    busy = bars_of(events, waiting, summaries)
    if busy.height:  # a bar with no rank must also have moved while the others waited (a rank's own need not)
        busy = busy.filter("open")
        busy = pl.concat([busy.filter(pl.col("rank").is_not_null()),
                          still_moving(busy.filter(pl.col("rank").is_null()), waits, events)])
    if not busy.height:
        return []
    # how long each bar had run (ms; -1 where it does not say)
    busy = busy.with_columns(pl.col("detail").fill_null("").str.extract(r"\[([\d:]+)", 1)
                             .map_elements(clock_ms, return_dtype=pl.Int64).fill_null(-1).alias("_ran"))
    dead = dead_ranks(events, status)
    named = sorted({int(r) for r in busy["rank"].drop_nulls().to_list()} - waiting)
    if named:
        ranks, confidence = named, 0.75
    else:
        universe = set(range(seen or 0)) | {s.rank for s in status} or {0}  # no rank known: the main process
        others = sorted(universe - waiting - dead)
        # the main process draws the bars (tqdm's and OpenMMLab's writer): when it waits too, a bar with no rank
        # stopped with it, and no other rank is named by it
        ranks = [0] if 0 in others else [] if 0 in waiting else others
        confidence = 0.65
        if not ranks and waiting == {0} and _outlasted(busy, waits):
            # the watchdog is a thread of its own: the main process (rank 0, tqdm's and OpenMMLab's bar writer) kept
            # drawing a bar for longer than the collective's timeout while its own collective timed out (when only
            # its watchdog spoke: where other ranks timed out beside it, the bar stopped with the job)
            ranks, confidence = [0], 0.55
    if not ranks:
        return []  # busy, but nobody outside the waiting ranks to be it
    show = busy.sort(["_ran", "file", "line"]).row(-1, named=True)  # the bar that ran longest
    label = " ".join((show["label"] or "progress").split())
    if len(label) > 48:  # a long label (a table header before an evaluation bar): its last words
        label = "…" + label[-48:].split(" ", 1)[-1]
    what = f"{label} {show['pct']}% {show['detail'] or ''}".strip()
    op = waits.filter(pl.col("op").is_not_null())["op"]
    timeout = waits["timeout_ms"].drop_nulls()
    evidence = pl.concat([busy.select("file", "line").join(events, on=["file", "line"], how="inner"),
                          waits.sort(["file", "line"]).head(3)], how="vertical_relaxed")
    return [make_finding(
        "AN-RANK-BUSY", lang, evidence.unique(["file", "line", "kind"], maintain_order=True), ranks=ranks,
        hosts=hosts_of(ranks, rank_hosts), confidence=confidence, busy=what, waiting=rank_list(sorted(waiting)),
        op=str(op[0]) if len(op) else "a collective or store wait",
        timeout=f"{int(timeout.max()) // 1000} s" if len(timeout) else "its timeout",
        elapsed=f"{show['_ran'] // 1000} s" if show["_ran"] >= 0 else "?")]


@reads("torch.gloo_error")
def gloo_absent(events: pl.DataFrame, world: int | None, status: list[RankStatus], rank_hosts: dict[int, str],
                lang: str) -> list[Finding]:
    timed = events.filter(GLOO_TIMEOUT & pl.col("rank").is_not_null())
    if not timed.height:
        return []
    # inside the collective: timed out, or lost a peer that timed out first and left (closed/reset by peer)
    inside = events.filter((pl.col("kind") == "torch.gloo_error") & pl.col("rank").is_not_null()
                           & (pl.col("value").fill_null("") != "size mismatch"))
    waiting = set(inside["rank"].to_list())
    universe = set(range(world)) if world else {s.rank for s in status if s.state != "never_seen"}
    by_rank = {s.rank: s for s in status}
    absent = sorted(universe - waiting)
    if not absent or len(absent) >= len(waiting):
        return []
    if set(absent) & dead_ranks(events, status):
        return []  # a rank that died of its own error: that error is the cause (and explains the timeouts)
    stopped = stopped_by_agent(events, status)
    alive = [r for r in absent if r in stopped or (r in by_rank and (by_rank[r].signal in AGENT_STOP or by_rank[r].state
                                                                     in ("silent", "blocked", "exited", "finished")))]
    unseen = [r for r in absent if r not in by_rank or by_rank[r].state == "never_seen"]
    if unseen and len(unseen) == len(absent) and not world:
        return []
    last = {}
    steps = events.filter((pl.col("kind") == "progress.step") & pl.col("rank").is_not_null())
    if steps.height:
        last = dict(steps.group_by("rank").agg(pl.col("seq").max()).iter_rows())
    stopped = ", ".join(f"{r}:{last[r]}" for r in sorted(last)) if last else NONE
    evidence = pl.concat([timed.sort(["file", "line"]).head(3),
                          events.filter(pl.col("rank").is_in(absent)).sort(["ts", "file", "line"], nulls_last=True)
                          .tail(2)], how="vertical_relaxed")
    return [make_finding(
        "AN-GLOO-ABSENT", lang, evidence.unique(["file", "line", "kind"], maintain_order=True), ranks=absent,
        hosts=hosts_of(absent, rank_hosts),
        confidence=0.7 if alive else 0.55, waiting=rank_list(sorted(waiting)), steps=stopped,
        state=", ".join(f"{r}:{by_rank[r].state if r in by_rank else 'never_seen'}" for r in absent))]
