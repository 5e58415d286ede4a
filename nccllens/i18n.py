"""Which language to speak (en or zh), and the interface strings in both."""

from __future__ import annotations

import os
from collections.abc import Mapping

LANGUAGES = ("en", "zh")
DEFAULT = "en"
ENV_ORDER = ("LANGUAGE", "LC_ALL", "LC_MESSAGES", "LANG")

STRINGS: dict[str, dict[str, str]] = {
    "verdict": {"en": "Verdict", "zh": "结论"},
    "findings": {"en": "Findings", "zh": "发现"},
    "evidence": {"en": "Evidence", "zh": "证据"},
    "remediation": {"en": "Remediation", "zh": "处理建议"},
    "summary": {"en": "Summary", "zh": "概述"},
    "what_it_detects": {"en": "What it detects", "zh": "检测内容"},
    "why_it_matters": {"en": "Why it matters", "zh": "为什么重要"},
    "examples": {"en": "Examples", "zh": "示例"},
    "matches": {"en": "matches", "zh": "命中"},
    "does_not_match": {"en": "does not match", "zh": "不命中"},
    "references": {"en": "References", "zh": "参考资料"},
    "category": {"en": "Category", "zh": "类别"},
    "severity": {"en": "Severity", "zh": "严重程度"},
    "role": {"en": "Role", "zh": "角色"},
    "confidence": {"en": "Confidence", "zh": "置信度"},
    "aliases": {"en": "Aliases", "zh": "别名"},
    "explains": {"en": "Explains", "zh": "可解释"},
    "ranks": {"en": "Ranks", "zh": "Rank"},
    "hosts": {"en": "Hosts", "zh": "节点"},
    "first_seen": {"en": "First seen", "zh": "首次出现"},
    "count": {"en": "Count", "zh": "次数"},
    "rule": {"en": "Rule", "zh": "规则"},
    "title": {"en": "Title", "zh": "标题"},
    "inputs": {"en": "Inputs", "zh": "输入文件"},
    "job": {"en": "Job", "zh": "作业"},
    "cause": {"en": "cause", "zh": "根因"},
    "symptom": {"en": "symptom", "zh": "症状"},
    "context": {"en": "context", "zh": "背景"},
    "critical": {"en": "critical", "zh": "严重"},
    "error": {"en": "error", "zh": "错误"},
    "warning": {"en": "warning", "zh": "警告"},
    "info": {"en": "info", "zh": "信息"},
    "no_failure": {"en": "No failure found in the logs.", "zh": "日志中未发现故障。"},
    "unknown_cause": {"en": "The logs do not show the cause.", "zh": "日志中看不出根因。"},
    "no_rules": {"en": "No rules.", "zh": "没有规则。"},
}


def language_of(value: str | None) -> str | None:
    """``zh_CN.UTF-8`` -> zh, ``en_US`` / ``C`` / ``fr`` -> en; empty -> None."""
    if not value or not value.strip():
        return None
    return "zh" if value.strip().lower().startswith("zh") else "en"


def choose_language(explicit: str | None = None, configured: str | None = None,
                    env: Mapping[str, str] | None = None) -> str:
    """``--lang`` wins, then the config file's ``lang``, then the first non-empty of LANGUAGE (its
    first ``:`` entry), LC_ALL, LC_MESSAGES, LANG; ``zh*`` means Chinese, anything else English."""
    for chosen in (explicit, configured):
        if chosen and chosen.strip():
            lang = chosen.strip().lower()
            if lang not in LANGUAGES:
                raise ValueError(f"unknown language {chosen!r}: use en or zh")
            return lang
    env = os.environ if env is None else env
    for name in ENV_ORDER:
        value = env.get(name, "")
        if name == "LANGUAGE":
            value = value.split(":")[0]
        lang = language_of(value)
        if lang:
            return lang
    return DEFAULT


def t(key: str, lang: str) -> str:
    """The interface string ``key`` in ``lang`` (English when missing; the key itself when unknown)."""
    entry = STRINGS.get(key)
    if entry is None:
        return key
    return entry.get(lang) or entry[DEFAULT]
