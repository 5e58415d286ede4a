"""Stacks of live processes (``stack.thread`` events): where a hung job's processes wait.

A stack taken while a job runs is evidence that it hung or crawled: nobody dumps a job that finished.
One thread per process speaks for it (the main thread, gdb's thread 1, faulthandler's current thread,
else the first one dumped). Then:

- some processes wait in a collective or on the GPU while others are elsewhere (their data loader, a
  checkpoint, their own compute): the ones elsewhere hold the job up → ``AN-STACK-ELSEWHERE``
  (straggler, culprit = those processes);
- the only processes dumped wait for their DataLoader workers → ``AN-STACK-DATA-WAIT``;
- every dumped process waits in a collective, but not in the same one (``all_reduce`` here, ``broadcast``
  there): the ranks stopped issuing the same collectives → ``AN-STACK-DIVERGED`` (rank_divergence, culprit =
  the processes outside the majority's collective; none when no collective has a majority);
- every dumped process waits in a collective, on the GPU or on the rendezvous store → ``AN-STACK-HANG``
  (a hang whose cause is on a process nobody dumped);
- every dumped process is stuck inside NCCL's own teardown (``ncclCommAbort``, ``ncclCommDestroy``,
  ``commFree``...) → ``AN-STACK-TEARDOWN`` (nccl_internal: the library does not return from it);
- stacks that show none of these → ``AN-STACK-TAKEN``, a symptom: the run did not end normally.

Stacks in a file that also reports a fatal signal are the crash's own dump, not a hang.
"""

from __future__ import annotations

import polars as pl

from nccllens.analyses.common import PerLang, hosts_of, majority, make_finding
from nccllens.analyses.reads import reads
from nccllens.rank_ranges import compact_ranks
from nccllens.report.model import Finding
from nccllens.report.outcome import finished_line

WAITING = ("collective", "gpu_sync", "store", "teardown")
MAIN_NAMES = ("MainThread", "Thread 1")

_DOING = {
    "collective": PerLang(en="waits in a collective", zh="在集合通信里等待"),
    "gpu_sync": PerLang(en="waits for the GPU (stream synchronisation)", zh="在等 GPU（stream 同步）"),
    "store": PerLang(en="waits on the rendezvous store", zh="在等 rendezvous store"),
    "data": PerLang(en="waits for its DataLoader workers", zh="在等 DataLoader worker 送数据"),
    "teardown": PerLang(en="is stuck tearing down an NCCL communicator", zh="卡在销毁 NCCL communicator 的过程中"),
}


def _one_thread_per_process(stacks: pl.DataFrame) -> pl.DataFrame:
    """The thread that speaks for each process: keyed by file, rank and pid."""
    ranked = stacks.with_columns(
        pl.col("value").cast(pl.String).is_in(MAIN_NAMES).fill_null(False).not_().alias("_not_main"),
        pl.col("pid").fill_null(-1).alias("_pid"), pl.col("rank").fill_null(-1).alias("_rank"))
    return (ranked.sort(["file", "_rank", "_pid", "_not_main", "line"])
            .group_by(["file", "_rank", "_pid"], maintain_order=True).first()
            .drop(["_not_main", "_pid", "_rank"]))


def _who(rows: pl.DataFrame, lang: str) -> str:
    ranks = sorted({int(r) for r in rows["rank"].drop_nulls().to_list()})
    if ranks:
        return f"rank{'s' if len(ranks) > 1 and lang != 'zh' else ''} {compact_ranks(ranks)}"
    pids = sorted({int(p) for p in rows["pid"].drop_nulls().to_list()})
    if pids:
        return ("进程 " if lang == "zh" else "process ") + ", ".join(str(p) for p in pids[:8])
    files = sorted({str(f) for f in rows["file"].drop_nulls().to_list()})
    if lang == "zh":
        return "写下 " + ", ".join(files[:3]) + " 的进程"
    return "the process dumped in " + ", ".join(files[:3])


_NO_MAJORITY = PerLang(en="No collective holds a majority of them, so the stacks alone do not say which side took the other path.",
                       zh="没有哪个集合通信占多数，仅凭调用栈还判断不出是哪一边走了另一条分支。")


def _odd_ones(odd: pl.DataFrame) -> PerLang:
    return PerLang(en=f"The processes outside the majority's collective took another code path: {_who(odd, 'en')}.",
                   zh=f"不在多数进程所在那个集合通信里的进程走了另一条代码分支：{_who(odd, 'zh')}。")


def _in_different_collectives(waiting: pl.DataFrame) -> tuple[pl.DataFrame, PerLang] | None:
    """Processes that all wait in collectives they name, not all the same one: those outside the majority's
    collective (none on a tie), and a listing of who waits in which."""
    ops = waiting["op"].cast(pl.String).to_list()
    if len(ops) < 2 or any(k != "collective" for k in waiting["key"].to_list()) or None in ops or len(set(ops)) < 2:
        return None
    top, odd_rows = majority(dict(enumerate(ops)))
    odd = waiting[odd_rows] if top is not None else waiting.clear()

    def listing(lang: str) -> str:
        colon, semicolon = ("：", "；") if lang == "zh" else (": ", "; ")
        return semicolon.join(f"{op}{colon}{_who(waiting.filter(pl.col('op').cast(pl.String) == op), lang)}"
                              for op in sorted(set(ops)))

    return odd, PerLang(en=listing("en"), zh=listing("zh"))


def _frames_of(row: dict) -> str:
    detail = str(row.get("detail") or "")
    return detail.removeprefix("frames: ") or str(row.get("message") or "")


@reads("stack.thread")
def stuck_stacks(events: pl.DataFrame, rank_hosts: dict[int, str], lang: str) -> list[Finding]:
    stacks = events.filter(pl.col("kind") == "stack.thread")
    if not stacks.height or finished_line(events) is not None:
        return []
    crashed = set(events.filter(pl.col("kind") == "cpp.signal")["file"].drop_nulls().to_list())
    stacks = stacks.filter(~pl.col("file").is_in(list(crashed)))
    if not stacks.height:
        return []
    procs = _one_thread_per_process(stacks)
    waiting = procs.filter(pl.col("key").is_in(WAITING))
    elsewhere = procs.filter(~pl.col("key").is_in(WAITING))

    def hosts(rows: pl.DataFrame) -> list[str]:
        named = [str(h) for h in rows["host"].drop_nulls().unique().to_list()]
        return named or hosts_of(rows["rank"].drop_nulls().to_list(), rank_hosts)

    if waiting.height and elsewhere.height:
        first = elsewhere.row(0, named=True)
        doing = _DOING.get(first["key"]) or PerLang(en=f"is in {_frames_of(first)}", zh=f"停在 {_frames_of(first)}")
        return [make_finding("AN-STACK-ELSEWHERE", lang, pl.concat([elsewhere, waiting]),
                             ranks=elsewhere["rank"].drop_nulls().to_list(), hosts=hosts(elsewhere),
                             who=_who(elsewhere, lang), doing=doing, frames=_frames_of(first),
                             waiting=_who(waiting, lang), wait=_DOING[waiting.row(0, named=True)["key"]])]
    if elsewhere.height and set(elsewhere["key"].to_list()) == {"data"}:
        first = elsewhere.row(0, named=True)
        return [make_finding("AN-STACK-DATA-WAIT", lang, elsewhere, ranks=elsewhere["rank"].drop_nulls().to_list(),
                             hosts=hosts(elsewhere), who=_who(elsewhere, lang), frames=_frames_of(first))]
    if waiting.height:
        kinds = set(waiting["key"].to_list())
        diverged = _in_different_collectives(waiting)
        if diverged is not None:
            odd, listing = diverged
            return [make_finding("AN-STACK-DIVERGED", lang, pl.concat([odd, waiting]).unique(maintain_order=True),
                                 ranks=odd["rank"].drop_nulls().to_list(), hosts=hosts(odd) if odd.height else (),
                                 listing=listing, odd=_odd_ones(odd) if odd.height else _NO_MAJORITY)]
        first = waiting.row(0, named=True)
        if kinds == {"teardown"}:
            return [make_finding("AN-STACK-TEARDOWN", lang, waiting, ranks=waiting["rank"].drop_nulls().to_list(),
                                 hosts=hosts(waiting), who=_who(waiting, lang), frames=_frames_of(first))]
        category = "rendezvous_timeout" if kinds == {"store"} else None
        return [make_finding("AN-STACK-HANG", lang, waiting, ranks=(), hosts=(), category=category,
                             who=_who(waiting, lang), wait=_DOING[first["key"]], frames=_frames_of(first))]
    first = elsewhere.row(0, named=True)
    return [make_finding("AN-STACK-TAKEN", lang, elsewhere, ranks=elsewhere["rank"].drop_nulls().to_list(),
                         hosts=hosts(elsewhere), who=_who(elsewhere, lang), frames=_frames_of(first))]
