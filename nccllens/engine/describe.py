"""A rule's page as plain data: what it detects, why it matters, examples, fix, references.

Shared by ``nccllens explain`` (rich, terminal) and ``scripts/gen_rules_doc.py`` (Markdown).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from nccllens.engine.rule import Rule
from nccllens.i18n import t

_OPS = {"lt": "<", "le": "<=", "gt": ">", "ge": ">=", "ne": "!=", "starts_with": "starts with"}
_WORDS = {
    "kinds": {"en": "events of kind {}", "zh": "事件类型为 {}"},
    "pattern": {"en": "message matches `{}`", "zh": "消息匹配 `{}`"},
    "where": {"en": "where {}", "zh": "且 {}"},
    "min_ranks": {"en": "on at least {} ranks", "zh": "至少涉及 {} 个 rank"},
    "min_hosts": {"en": "on at least {} hosts", "zh": "至少涉及 {} 个节点"},
    "single_host": {"en": "all on one host", "zh": "全部在同一节点"},
    "requires": {"en": "only if {} also fired", "zh": "且 {} 也命中"},
    "absent": {"en": "only if {} did not fire", "zh": "且 {} 未命中"},
    "before": {"en": "first seen before {}", "zh": "首次出现早于 {}"},
    "after": {"en": "first seen after {}", "zh": "首次出现晚于 {}"},
    "or": {"en": " or ", "zh": " 或 "},
    "and": {"en": "; ", "zh": "；"},
}


def _w(key: str, lang: str) -> str:
    return _WORDS[key].get(lang, _WORDS[key]["en"])


def _condition(column: str, cond) -> str:
    if isinstance(cond, dict):
        return ", ".join(f"{column} not in {', '.join(str(x) for x in v)}" if op == "not_in"
                         else f"{column} {_OPS.get(op, op)} {v}" for op, v in cond.items())
    if isinstance(cond, list):
        return f"{column} in {', '.join(str(v) for v in cond)}"
    return f"{column} = {cond}"


def describe_match(rule: Rule, lang: str = "en") -> str:
    """The [match] table in one sentence of ``lang``."""
    m, parts = rule.match, []
    if m.kinds:
        parts.append(_w("kinds", lang).format(_w("or", lang).join(f"`{k}`" for k in m.kinds)))
    if m.pattern:
        parts.append(_w("pattern", lang).format(m.pattern.replace("`", "'")))
    if m.where:
        parts.append(_w("where", lang).format(", ".join(_condition(c, v) for c, v in m.where.items())))
    for key in ("min_ranks", "min_hosts"):
        if getattr(m, key):
            parts.append(_w(key, lang).format(getattr(m, key)))
    if m.single_host:
        parts.append(_w("single_host", lang))
    for key in ("requires", "absent"):
        if getattr(m, key):
            parts.append(_w(key, lang).format(", ".join(getattr(m, key))))
    for key in ("before", "after"):
        if getattr(m, key):
            parts.append(_w(key, lang).format(getattr(m, key)))
    return _w("and", lang).join(parts)


@dataclass
class Page:
    """What ``nccllens explain`` shows of one rule, in one language."""

    rule: Rule
    lang: str
    title: str
    facts: list[tuple[str, str]] = field(default_factory=list)  # (label, value)
    sections: list[tuple[str, str]] = field(default_factory=list)  # (heading, body)
    examples: list[tuple[bool, str, str]] = field(default_factory=list)  # (match, version, line)
    references: list[str] = field(default_factory=list)


def rule_page(rule: Rule, lang: str = "en") -> Page:
    text = rule.text_for(lang)
    facts = [
        (t("category", lang), rule.category),
        (t("severity", lang), t(rule.severity, lang)),
        (t("role", lang), t(rule.role, lang)),
        (t("confidence", lang), f"{rule.confidence:g}"),
    ]
    if rule.aliases:
        facts.append((t("aliases", lang), ", ".join(rule.aliases)))
    explains = [*rule.explains_categories, *rule.explains_rules]
    if explains:
        facts.append((t("explains", lang), ", ".join(explains)))
    return Page(
        rule=rule,
        lang=lang,
        title=text.title,
        facts=facts,
        sections=[
            (t("what_it_detects", lang), describe_match(rule, lang)),
            (t("why_it_matters", lang), text.summary),
            (t("remediation", lang), text.remediation),
        ],
        examples=[(e.match, e.version, e.line) for e in rule.examples],
        references=list(rule.references),
    )
