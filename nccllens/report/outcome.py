"""What a report may say when no failure was recognised, and when there is nothing to report at all.

"No failure" needs positive evidence that the job finished (torchrun's "worker group successfully
finished", every rank finished, an nccl-tests "Avg bus bandwidth" summary, every rank's NCCL
``Destroy COMPLETE`` for the job's largest communicator). Without it the verdict says
that no *known* failure pattern was found, what was read, and what to collect, and its category is
``unknown``: ``none`` is kept for a run the logs show finished.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace

from nccllens import lazy_regex
from nccllens.rank_ranges import compact_ranks
from nccllens.report.model import InputFile, RankStatus, Verdict

# lines that show a run reached its end; also handed to extraction so that such lines are kept
FINISHED_PATTERNS = (
    r"worker group successfully finished",
    r"Local worker group finished \(WorkerState\.SUCCEEDED\)",
    r"#\s*Avg bus bandwidth\s*:",
)
FINISHED_RE = lazy_regex.compile("|".join(FINISHED_PATTERNS))
TROUBLE = ("crashed", "killed", "exited", "timed_out", "blocked")


def finished_line(events) -> tuple[str, int] | None:
    """``(file, line)`` of the first line that shows the job finished, or None."""
    if events is None or not getattr(events, "height", 0):
        return None
    import polars as pl

    text = pl.coalesce(pl.col("raw"), pl.col("message")) if "raw" in events.columns else pl.col("message")
    said = pl.col("kind") == "progress.finished" if "kind" in events.columns else pl.lit(False)
    hits = events.filter(text.str.contains("|".join(FINISHED_PATTERNS)) | said)
    if not hits.height:
        return _every_rank_tore_down(events)
    row = hits.row(0, named=True)
    return str(row["file"] or ""), int(row["line"] or 0)


def _every_rank_tore_down(events) -> tuple[str, int] | None:
    """The last of NCCL's ``Destroy COMPLETE`` lines when every rank of the job's largest communicator
    printed one (each called destroy_process_group at its end), or None."""
    import polars as pl

    if "nranks" not in events.columns or "kind" not in events.columns:
        return None
    world = events["nranks"].max()
    if not world:
        return None
    from nccllens.events import destroyed

    done = events.filter(destroyed(pl.lit(world)) & pl.col("rank").is_not_null())
    if set(done["rank"].to_list()) != set(range(int(world))):
        return None
    row = done.row(done.height - 1, named=True)
    return str(row["file"] or ""), int(row["line"] or 0)


def _location(found: tuple[str, int]) -> str:
    return f"{found[0]}:{found[1]}" if found[1] else found[0]


def finished_evidence(events, ranks: Sequence[RankStatus], lang: str) -> str | None:
    """Where the logs show the job finished (``file:line``, or every rank's exit code 0), or None."""
    found = finished_line(events)
    if found:
        return _location(found)
    if ranks and all(r.exit_code == 0 for r in ranks):
        return "每个 rank 的退出码都是 0" if lang == "zh" else "exit code 0 on every rank"
    return None


def _read_counts(inputs: Sequence[InputFile]) -> tuple[int, int, int]:
    read = [i for i in inputs if not i.skipped]
    return len(read), sum(i.lines for i in read), len(inputs) - len(read)


def read_phrase(inputs: Sequence[InputFile], lang: str) -> str:
    """``in 2 files (41 lines; 1 skipped)`` / ``已读取的 2 个文件（41 行；另跳过 1 个）``."""
    files, lines, skipped = _read_counts(inputs)
    if lang == "zh":
        return f"已读取的 {files} 个文件（{lines} 行" + (f"；另跳过 {skipped} 个" if skipped else "") + "）"
    return f"in {files} file{'s' if files != 1 else ''} ({lines} lines" + (f"; {skipped} skipped" if skipped else "") + ")"


def _trouble(ranks: Sequence[RankStatus], lang: str) -> str:
    bad = sorted(r.rank for r in ranks if r.state in TROUBLE)
    if not bad:
        return ""
    if lang == "zh":
        return f"但 rank 状态表显示 rank {compact_ranks(bad)} 没有正常结束。"
    return f"Yet the rank states show rank(s) {compact_ranks(bad)} did not end normally. "


def none_summary(lang: str, *, finished: str | None, inputs: Sequence[InputFile],
                 ranks: Sequence[RankStatus], select: Sequence[str]) -> str:
    """The verdict sentence for a report without a recognised failure, in ``lang``."""
    zh = lang == "zh"
    if select:
        chosen = ", ".join(select)
        if zh:
            return f"--select {chosen} 选中的规则和分析在{read_phrase(inputs, lang)}中没有任何发现；其余规则和分析没有运行，不能据此说明作业正常。"
        return (f"Nothing to report for --select {chosen}: no selected rule or analysis found anything "
                f"{read_phrase(inputs, lang)}; the others were not run, so this says nothing about the rest of the job.")
    if finished and not _trouble(ranks, lang):
        if zh:
            return f"未发现故障：日志显示作业已正常结束（{finished}）。"
        return f"No failure found: the logs show the job finished ({finished})."
    if zh:
        return (f"{read_phrase(inputs, lang)}中没有已知的故障模式，但也没有作业正常结束的证据。"
                + _trouble(ranks, lang)
                + "请补充收集：启动器（torchrun / srun）直到结束的完整输出、每个 rank 的 stdout/stderr、每个节点的 dmesg。")
    return (f"No known failure pattern {read_phrase(inputs, lang)}, but nothing shows the job finished. "
            + _trouble(ranks, lang)
            + "Collect the launcher's output (torchrun / srun) to its end, every rank's stdout/stderr "
            "and each node's dmesg.")


def settle_verdict(verdict: Verdict, events, ranks: Sequence[RankStatus], inputs: Sequence[InputFile],
                   select: Sequence[str], lang: str) -> Verdict:
    """``verdict`` with the wording above when its category is ``none``, or when a ``select`` left no
    finding to base it on; otherwise unchanged."""
    if verdict.category != "none" and not (select and verdict.finding is None):
        return verdict
    finished = {lg: finished_evidence(events, ranks, lg) for lg in ("en", "zh")}
    said = {lg: none_summary(lg, finished=finished[lg], inputs=inputs, ranks=ranks, select=select)
            for lg in ("en", "zh")}
    settled = replace(verdict, summary=said[lang], texts={lg: text for lg, text in said.items() if lg != lang})
    if not select and not finished[lang]:
        # without a sign that the job finished, "no failure" is not known: the verdict is unknown, and says
        # what was read and what to collect (ranks that crashed, were killed or timed out make it a failure
        # even when no line says why)
        return replace(settled, category="unknown", confidence=0.3)
    return settled


def nothing_read(paths: Sequence[str], inputs: Sequence[InputFile]) -> str | None:
    """One line saying why nothing could be analysed (no line read from any input), or None."""
    if any(not i.skipped and (i.lines or i.events) for i in inputs):  # event shards have no lines
        return None
    where = ", ".join("standard input" if p == "-" else p for p in paths)
    if not inputs:
        return f"nothing to analyze: no files in {where}"
    skipped = [i for i in inputs if i.skipped]
    if not skipped:
        return f"nothing to analyze: {where} {'is' if len(inputs) == 1 else 'are'} empty"
    first = skipped[0]
    reason = re.sub(r"\s*\([^)]*$", "", (first.skipped or "").splitlines()[0]).strip()
    label = "standard input" if first.path == "<stdin>" else first.path
    more = f" (and {len(inputs) - 1} more, none readable)" if len(inputs) > 1 else ""
    return f"nothing to analyze: {label}: {reason}{more}"
