"""Rank-level stragglers and hangs that print no error of their own.

When some ranks wait (a watchdog or gloo timeout, a store wait) the question is what the others did:

- ``busy_while_waiting``: a progress bar still moving (tokenising, evaluating, preparing data) on a
  rank that is not among the waiting ones: alive and busy, a straggler. A bar printed with no rank of
  its own (tqdm writes only on the main process in HF, accelerate, Lightning, YOLO...) belongs to the
  main process, rank 0, when rank 0 is not waiting; else to the ranks not waiting.
- ``gloo_absent``: in a gloo job every rank that reached the collective raises its own timeout; the rank
  absent from the set that timed out is the culprit: alive at the end (stopped by the agent or a harness)
  it was stuck or busy elsewhere (straggler); dead on its own it exited (its own error says why).
- ``slow_steps``: a run whose ranks state per-step durations (``compute 0.60s``, ``forward: 123.4`` ms)
  where one rank's work per step is several times the others': a straggler, even if nothing failed.
  Waiting times (``sync``, ``wait``, ``comm``) are left out: the fast ranks are the ones that wait.
"""

from __future__ import annotations

import polars as pl

from nccllens import lazy_regex
from nccllens.analyses.busy_bars import bars_of, still_moving
from nccllens.analyses.common import NONE, NOT_STATED, PerLang, hosts_of, make_finding, rank_list
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
WAIT_LABEL = lazy_regex.compile(r"wait|sync|comm|idle|barrier|allreduce|all_reduce|block|stall")
SLOW_FACTOR = 3.0  # a rank's median work per step this many times the others' median
SLOW_MIN_SECONDS = 0.05  # and at least this much more per step, in absolute terms
MIN_STEPS = 3


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
    return events.filter(WAITING & pl.col("rank").is_not_null())


@reads("torch.watchdog_timeout", "torch.store_timeout", "torch.gloo_error", "cpp.terminate")
def busy_while_waiting(events: pl.DataFrame, seen: int | None, status: list[RankStatus],
                       rank_hosts: dict[int, str], lang: str, summaries: pl.DataFrame | None = None) -> list[Finding]:
    waits = _waiting(events)
    if not waits.height:
        return []
    waiting = set(waits["rank"].to_list())
    busy = bars_of(events, waiting, summaries)
    if busy.height:  # a bar with no rank must also have moved while the others waited (a rank's own need not)
        busy = busy.filter("open")
        busy = pl.concat([busy.filter(pl.col("rank").is_not_null()),
                          still_moving(busy.filter(pl.col("rank").is_null()), waits, events)])
    if not busy.height:
        return []
    dead = dead_ranks(events, status)
    named = sorted({int(r) for r in busy["rank"].drop_nulls().to_list()} - waiting)
    if named:
        ranks, confidence = named, 0.75
    else:
        universe = set(range(seen or 0)) | {s.rank for s in status}
        others = sorted(universe - waiting - dead)
        ranks = [0] if 0 in others else others
        confidence = 0.65
    if not ranks:
        return []  # busy, but nobody outside the waiting ranks to be it
    ran = busy.with_columns(pl.col("detail").fill_null("").str.extract(r"\[([\d:]+)", 1)
                            .map_elements(clock_ms, return_dtype=pl.Int64).fill_null(-1).alias("_ran"))
    show = ran.sort(["_ran", "file", "line"]).row(-1, named=True)  # the bar that ran longest
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
        elapsed=f"{clock_ms(show['detail'].split('[', 1)[-1].split('<', 1)[0]) // 1000} s"
        if show["detail"] and clock_ms(show["detail"].split("[", 1)[-1].split("<", 1)[0]) is not None else "?")]


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


def _step_work(events: pl.DataFrame) -> dict[str, dict[int, list[float]]]:
    """label → rank → seconds per step, for the work (not waiting) durations that step lines state."""
    rows = events.filter((pl.col("kind") == "progress.step") & pl.col("rank").is_not_null()
                         & pl.col("detail").is_not_null())
    out: dict[str, dict[int, list[float]]] = {}
    for rank, detail in rows.select("rank", "detail").iter_rows():
        for pair in detail.split():
            label, _, value = pair.partition("=")
            if not value or WAIT_LABEL.search(label):
                continue
            try:
                out.setdefault(label, {}).setdefault(int(rank), []).append(float(value))
            except ValueError:
                continue
    return out


def _slow_group(medians: dict[int, float], rank_hosts: dict[int, str]) -> list[int]:
    """The ranks above the widest gap between the per-rank medians (at least SLOW_FACTOR times and
    SLOW_MIN_SECONDS more): a minority of the ranks, or every rank of some node(s) but not of all."""
    ordered = sorted(medians.items(), key=lambda item: item[1])
    best, cut = 0.0, None
    for i in range(len(ordered) - 1):
        low, high = ordered[i][1], ordered[i + 1][1]
        ratio = high / max(low, 0.01)
        if high - low >= SLOW_MIN_SECONDS and ratio >= SLOW_FACTOR and ratio > best:
            best, cut = ratio, i + 1
    if cut is None:
        return []
    slow = sorted(r for r, _ in ordered[cut:])
    if len(slow) * 2 < len(ordered):
        return slow
    hosts = {rank_hosts.get(r) for r in medians}
    slow_hosts = {rank_hosts.get(r) for r in slow}
    whole = None not in hosts and all(rank_hosts.get(r) not in slow_hosts for r in medians if r not in slow)
    return slow if whole and slow_hosts < hosts else []


@reads("progress.step")
def slow_steps(events: pl.DataFrame, rank_hosts: dict[int, str], lang: str) -> list[Finding]:
    best: tuple[float, str, list[int], float, float] | None = None
    for label, per_rank in _step_work(events).items():
        enough = [(r, v) for r, v in per_rank.items() if len(v) >= MIN_STEPS]
        if len(enough) < 2:
            continue
        import statistics  # here, with fractions: 3-20 ms of start-up that most runs do not need

        medians = {r: statistics.median(v) for r, v in enough}
        slow = _slow_group(medians, rank_hosts)
        if not slow:
            continue
        mine = statistics.median(medians[r] for r in slow)
        typical = statistics.median(m for r, m in medians.items() if r not in slow)
        factor = mine / max(typical, 0.01)
        if best is None or factor > best[0]:
            best = (factor, label, slow, mine, typical)
    if best is None:
        return []
    factor, label, ranks, mine, typical = best
    evidence = (events.filter((pl.col("kind") == "progress.step") & pl.col("rank").is_in(ranks))
                .sort(["file", "line"]).tail(3))
    return [make_finding(
        "AN-SLOW-RANK", lang, evidence, ranks=ranks, hosts=hosts_of(ranks, rank_hosts), label=label,
        mine=f"{mine:.2f} s", typical=f"{typical:.2f} s", factor=f"{factor:.0f}")]


CONSEQUENCE = lazy_regex.compile(r"(?i)time[ds]?[ _-]?out|watchdog|taking the entire process down|DistBackendError|"
                         r"SIGABRT|signal 6|exit ?code|ChildFailedError|terminate called|Aborted")


@reads("torch.watchdog_timeout", "progress.bench*")
def first_collective_hang(events: pl.DataFrame, rank_hosts: dict[int, str], lang: str) -> list[Finding]:
    """Every rank of a one-node job stuck in the very first collective, with no error but the timeouts (or
    an nccl-tests run whose header never got a result row): GPU peer-to-peer that hangs (ACS, IOMMU, a
    PCIe switch without P2P) is the usual cause. A suspect, at low confidence: the experiment decides."""
    hosts = [str(h) for h in events["host"].drop_nulls().unique().to_list()]
    members = events.filter(pl.col("kind") == "progress.bench_rank")
    one_process = bool(members.height) and members["pid"].is_null().all() and not hosts  # NCCL 1.x tests
    if len(hosts) != 1 and not one_process:
        return []  # one node, and the logs must say which: an excerpt without hosts may span many
    errors = events.filter(pl.col("level").is_in(["error", "critical"]))
    waits = events.filter(pl.col("kind") == "torch.watchdog_timeout")
    bench = events.filter(pl.col("kind").cast(pl.String).str.starts_with("progress.bench"))
    others = errors.filter(~pl.col("message").fill_null("").str.contains(CONSEQUENCE.pattern))
    if others.height:
        return []
    if waits.height:
        if waits["seq"].is_null().any() or waits["seq"].max() > 1 or waits["rank"].n_unique() < 2:
            return []
        if set(events["rank"].drop_nulls().to_list()) - set(waits["rank"].to_list()):
            return []  # a rank that is not waiting: it is the story (absent, busy or dead), not the GPUs'
        if events.filter(pl.col("kind") == "progress.bar").height:
            return []
        op = waits["op"].drop_nulls().first()
        evidence = waits
        stuck = PerLang(en=f"collective 1 ({op})" if op else "collective 1",
                        zh=f"第 1 次集合通信（{op}）" if op else "第 1 次集合通信")
    elif bench.height and not bench.filter(pl.col("kind").is_in(["progress.bench_row", "progress.bench_done"])).height:
        # the column header comes once the communicators are up: a header without a row is the first
        # size's collective; without the header, NCCL lines must show init got that far (a paste that stops
        # during init looks the same whether it hung there or was cut: the hang is the reading a ticket needs)
        table = bench.filter(pl.col("kind") == "progress.bench_table")
        nccl = events.filter(pl.col("family") == "nccl")
        if errors.height or not (table.height or nccl.height):
            return []
        evidence = pl.concat([bench, nccl.sort(["file", "line"]).tail(2)]) if not table.height else bench
        stuck = PerLang(en="the first nccl-tests size", zh="nccl-tests 的第一个数据量")
    else:
        return []
    ranks = sorted({int(r) for r in evidence["rank"].drop_nulls().to_list()})
    node = hosts[0] if hosts else PerLang(en="the test's node", zh="运行测试的节点")
    return [make_finding("AN-FIRST-COLLECTIVE-HANG", lang, evidence, ranks=(), hosts=hosts,
                         stuck=stuck, node=node, waiting=rank_list(ranks) if ranks else PerLang(en="all", zh="所有"))]


@reads("harness.wallclock")
def wallclock_kill(events: pl.DataFrame, lang: str) -> list[Finding]:
    """A harness or scheduler stopped the job at its time limit: never a healthy run. When ranks were
    already stuck (timeouts, a rank absent or busy), those findings explain the kill."""
    hits = events.filter(pl.col("kind") == "harness.wallclock")
    if not hits.height:
        return []
    first = hits.sort(["ts", "file", "line"], nulls_last=True).row(0, named=True)
    return [make_finding("AN-WALLCLOCK-KILL", lang, hits, hosts=hits["host"].drop_nulls().unique().to_list(),
                         by=first["value"] or NOT_STATED, limit=first["detail"] or NOT_STATED, text=first["message"])]
