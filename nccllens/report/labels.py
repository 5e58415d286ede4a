"""Interface strings of the reports, in English and Chinese (log text is never translated)."""

from __future__ import annotations

LABELS: dict[str, tuple[str, str]] = {
    "verdict": ("Verdict", "结论"),
    "root_cause": ("Root cause", "根因"),
    "no_failure": ("No failure found", "未发现故障"),
    "unknown": ("Cause not visible in these logs", "日志中看不出根因"),
    "findings": ("Findings, most likely cause first", "发现（按可能性排序）"),
    "explained": ("explained by this cause", "由此根因导致"),
    "evidence": ("Evidence", "证据"),
    "remediation": ("What to do", "处理建议"),
    "ranks": ("Ranks", "Rank 状态"),
    "timeline": ("First failures", "最早的故障"),
    "inputs": ("Inputs", "输入文件"),
    "read": ("read", "已读取"),
    "skipped": ("skipped", "已跳过"),
    "files": ("files", "个文件"),
    "lines": ("lines", "行"),
    "events": ("events", "个事件"),
    "job": ("Job", "作业"),
    "world_size": ("World size", "总 rank 数"),
    "hosts": ("Hosts", "节点"),
    "versions": ("Versions", "版本"),
    "confidence": ("confidence", "置信度"),
    "where": ("where", "位置"),
    "when": ("when", "时间"),
    "category": ("Category", "类别"),
    "severity": ("Severity", "级别"),
    "rule": ("Rule", "规则"),
    "state": ("state", "状态"),
    "host": ("host", "节点"),
    "rank": ("rank", "rank"),
    "last_seq": ("last SeqNum", "最后 SeqNum"),
    "language": ("Language", "语言"),
    "legend": ("Legend", "图例"),
    "no_ranks": ("No rank information in these logs.", "日志中没有 rank 信息。"),
    "more": ("more", "更多"),
}

STATES: dict[str, tuple[str, str]] = {
    "crashed": ("crashed", "崩溃"),
    "exited": ("exited", "已退出"),
    "timed_out": ("timed out", "超时"),
    "blocked": ("blocked", "阻塞"),
    "silent": ("silent", "无输出"),
    "never_seen": ("never seen", "未出现"),
    "finished": ("finished", "已完成"),
    "unknown": ("unknown", "未知"),
    "killed": ("killed", "被杀"),
    "culprit": ("culprit", "故障源"),
}

# one colour per state, shared by the terminal grid and the HTML grid
STATE_COLOURS: dict[str, str] = {
    "crashed": "#d62728", "culprit": "#d62728", "killed": "#e377c2", "exited": "#ff7f0e",
    "timed_out": "#bcbd22", "blocked": "#9467bd", "silent": "#7f7f7f", "never_seen": "#1f1f1f",
    "finished": "#2ca02c", "unknown": "#c7c7c7",
}


def label(key: str, lang: str) -> str:
    pair = LABELS.get(key)
    if pair is None:
        return key
    return pair[1] if lang == "zh" else pair[0]


def state_label(state: str, lang: str) -> str:
    pair = STATES.get(state, (state, state))
    return pair[1] if lang == "zh" else pair[0]
