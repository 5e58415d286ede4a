"""What to do when no cause's remediation says it (a hang with only watchdog timeouts, a run that
shows no known pattern), and the one-line summary that ends a report, as pytest's does."""

from __future__ import annotations

from collections import Counter

from nccllens.rank_ranges import compact_ranks
from nccllens.report.labels import category_label
from nccllens.report.model import Finding, RankStatus, Report
from nccllens.report.view import first_step, inventory, top_finding, where

SERIOUS = ("critical", "error")
FLIGHT_RECORDER = ("TORCH_NCCL_TRACE_BUFFER_SIZE=2000 TORCH_NCCL_DUMP_ON_TIMEOUT=1 "
                   "TORCH_FR_DUMP_TEMP_FILE=/tmp/nccl_trace_rank_")


def _lowest_seq(ranks: list[RankStatus]) -> tuple[list[int], int, int] | None:
    """The ranks whose last collective is the lowest, their SeqNum, and the highest any rank reached."""
    seen = {r.rank: r.last_seq for r in ranks if r.last_seq is not None}
    if len(set(seen.values())) < 2:
        return None
    low, high = min(seen.values()), max(seen.values())
    return sorted(r for r, s in seen.items() if s == low), low, high


def last_signs(report: Report, lang: str) -> list[str]:
    """One line per suspected rank group: its last collective, or that no log of it was read."""
    zh = lang == "zh"
    out = []
    behind = _lowest_seq(report.ranks)
    if behind:
        ranks, low, high = behind
        out.append(f"rank {compact_ranks(ranks)} 最后一次集合通信是 SeqNum {low}，其他 rank 已到 {high}：先查它们。" if zh else
                   f"Rank(s) {compact_ranks(ranks)} last reached collective SeqNum {low} while others reached {high}: "
                   "look at them first.")
    never = sorted(r.rank for r in report.ranks if r.state == "never_seen")
    if never:
        out.append(f"没有读到 rank {compact_ranks(never)} 的日志：收集它们的 stdout/stderr 和所在节点启动器的输出。" if zh else
                   f"No log of rank(s) {compact_ranks(never)} was read: collect their stdout/stderr and their "
                   "node's launcher output.")
    return out


def _symptom_steps(report: Report) -> list[Finding]:
    return [f for f in report.findings if f.severity in SERIOUS and f.remediation.strip()]


def next_steps(report: Report, lang: str) -> list[str]:
    """Steps for a report whose verdict names no cause (empty when a cause's remediation is shown, or
    the job is shown to have finished)."""
    if top_finding(report) is not None or report.verdict.category == "none":
        return []
    zh = lang == "zh"
    steps = last_signs(report, lang)
    symptoms = _symptom_steps(report)
    if symptoms:
        steps.append(first_step(symptoms[0].text("remediation", lang)))
    steps += [
        ("在每个节点上：`dmesg -T | grep -iE 'xid|oom|killed process|segfault'`（掉卡、OOM、段错误）。" if zh else
         "On every node: `dmesg -T | grep -iE 'xid|oom|killed process|segfault'` (GPU loss, OOM kills, segfaults)."),
        (f"下次运行打开 flight recorder：`{FLIGHT_RECORDER}`，超时时每个 rank 都会写出自己最后的集合通信。" if zh else
         f"Run again with the flight recorder on: `{FLIGHT_RECORDER}`; on a timeout every rank dumps its last "
         "collectives."),
        ("如果进程还卡着：在每个 rank 的进程上 `py-spy dump --pid <pid>`，看它停在哪一行。" if zh else
         "While it still hangs: `py-spy dump --pid <pid>` on every rank's process shows the line it waits on."),
    ]
    return [s for s in dict.fromkeys(steps) if s]


def culprit(report: Report, lang: str) -> str:
    top = top_finding(report)
    return where(top, lang) if top is not None else ""


def summary_line(report: Report, lang: str) -> str:
    """``verdict · culprit · N findings · M files read, K skipped``, the report's last line."""
    zh = lang == "zh"
    inv = inventory(report)
    n = len(report.findings)
    parts = [category_label(report.verdict.category, lang), culprit(report, lang),
             f"{n} 项发现" if zh else f"{n} finding{'s' if n != 1 else ''}",
             (f"已读取 {len(inv.read)} 个文件，跳过 {len(inv.skipped)} 个" if zh else
              f"{len(inv.read)} file{'s' if len(inv.read) != 1 else ''} read, {len(inv.skipped)} skipped")]
    return " · ".join(p for p in parts if p)


def skip_reasons(report: Report) -> list[tuple[str, int]]:
    """Why files were skipped, most common first: ``[("not a log: image", 3), ...]``."""
    reasons = Counter((i.skipped or "").splitlines()[0] for i in inventory(report).skipped)
    return reasons.most_common()
