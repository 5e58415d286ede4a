"""``nccllens explain AN-...``: the page of a cross-rank analysis (its texts live in analyses/texts.toml),
laid out like a rule's page; the ``{placeholders}`` its report fills from the logs are shown as ``<name>``."""

from __future__ import annotations

import re

from rich.console import Console
from rich.text import Text

from nccllens.i18n import t

_WORDS = {
    "kind": {"en": "Kind", "zh": "类型"},
    "analysis": {"en": "cross-rank analysis (built in, not a rule file)", "zh": "跨 rank 分析（内置，不是规则文件）"},
    "filled": {"en": "Words in <angle brackets> are filled in from the logs in a report.",
               "zh": "尖括号 <…> 中的内容在报告里由日志填入。"},
    "select": {"en": "Report it alone with --select {id}; leave it out with --ignore {id} "
                     "(or select/ignore in [tool.nccllens]).",
               "zh": "只看这一项：--select {id}；不看：--ignore {id}（也可在 [tool.nccllens] 的 select/ignore 中配置）。"},
}


def _w(key: str, lang: str) -> str:
    return _WORDS[key].get(lang) or _WORDS[key]["en"]


def find_analysis(name: str) -> str | None:
    """The analysis id ``name`` names (any case), or None."""
    from nccllens.selection import analysis_ids

    wanted = name.strip().upper()
    return wanted if wanted in analysis_ids() else None


def colon(lang: str) -> str:
    """The colon after a label: full width in Chinese."""
    return "：" if lang == "zh" else ": "


def _blank(text: str) -> str:
    return re.sub(r"\{(\w+)\}", r"<\1>", text.strip())


def analysis_page(analysis: str, lang: str) -> list[tuple[str, str]]:
    """(heading, body) pairs of the page; the first is (id, title), the second ("", facts)."""
    from nccllens.analyses.common import spec

    s = spec(analysis)
    text = s.get(lang) or s["en"]
    facts = [(t("category", lang), s["category"]), (t("severity", lang), t(s["severity"], lang)),
             (t("role", lang), t(s["role"], lang)), (t("confidence", lang), f"{s['confidence']:g}"),
             (_w("kind", lang), _w("analysis", lang))]
    if s.get("explains"):
        facts.append((t("explains", lang), ", ".join(s["explains"])))
    return [(analysis, _blank(text["title"])),
            ("", "  ·  ".join(f"{label}{colon(lang)}{value}" for label, value in facts)),
            (t("why_it_matters", lang), _blank(text["summary"])),
            (t("remediation", lang), _blank(text["remediation"])),
            ("", _w("filled", lang) + "\n" + _w("select", lang).format(id=analysis))]


def print_analysis(analysis: str, lang: str, out: Console) -> None:
    (ident, title), (_, facts), *sections = analysis_page(analysis, lang)
    out.print(Text.assemble((ident, "bold cyan"), "  ", (title, "bold")))
    out.print(Text(facts, style="dim"))
    for heading, body in sections:
        out.print()
        if heading:
            out.print(Text(heading, style="bold underline"))
        out.print(Text(body, style="" if heading else "dim"))
