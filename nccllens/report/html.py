"""One self-contained HTML file: no scripts, no fetches, both languages with a CSS-only switch,
inline SVG rank grid and swimlane. Every log-derived string goes through jinja2 autoescaping."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import jinja2
from markupsafe import Markup, escape

from nccllens import lazy_regex
from nccllens.report.first_failures import alike, first_failures
from nccllens.report.grid import host_rows, row_counts, state_counts
from nccllens.report.labels import (
    CATEGORIES,
    LABELS,
    STATE_COLOURS,
    STATES,
    alike_note,
    category_label,
    skip_reason,
    state_letter,
)
from nccllens.report.life import life_lines
from nccllens.report.model import Finding, Report
from nccllens.report.svg_layout import grid_picture, swimlane
from nccllens.report.view import (
    clock,
    compact_hosts,
    compact_ranks,
    evidence_location,
    finding_tree,
    inventory,
    inventory_line,
    verdict_sentence,
)

LANGS = ("en", "zh")
LANG_NAMES = {"en": "English", "zh": "中文"}
CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"


@lru_cache(maxsize=1)
def environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(Path(__file__).parent / "templates")),
        autoescape=True,  # log text is hostile until proven otherwise
        trim_blocks=True,
        lstrip_blocks=True,
        undefined=jinja2.StrictUndefined,
    )
    env.globals.update(compact_ranks=compact_ranks, compact_hosts=compact_hosts, letter=state_letter,
                       location=evidence_location, row_counts=row_counts)
    env.filters["code_spans"] = code_spans
    return env


_CODE = lazy_regex.compile(r"`([^`\n]+)`")


def code_spans(text: str) -> Markup:
    """``text`` escaped, its `backticked` commands shown as code (as the Markdown report shows them)."""
    return Markup(_CODE.sub(r"<code>\1</code>", str(escape(text))))


def _pair(table: dict[str, tuple[str, str]], key: str) -> dict[str, str]:
    en, zh = table.get(key, (key, key))
    return {"en": en, "zh": zh}


def texts_of(f: Finding, key: str, base: str) -> list[tuple[str | None, str]]:
    """(language, text) per language the finding carries; a single language is (None, text): shown once."""
    own = {lang: f.text(key, lang) for lang in f.languages(base)}
    if len(set(own.values())) <= 1:
        return [(None, getattr(f, key))] if getattr(f, key) else []
    return [(lang, own[lang]) for lang in LANGS if lang in own and own[lang]] or [(None, getattr(f, key))]


def context(report: Report, lang: str) -> dict:
    inv = inventory(report)
    return {
        "report": report,
        "lang": lang,
        "langs": LANGS,
        "lang_names": LANG_NAMES,
        "csp": CSP,
        "labels": {key: _pair(LABELS, key) for key in LABELS},
        "states": {key: _pair(STATES, key) for key in STATES},
        "categories": {key: _pair(CATEGORIES, key) for key in CATEGORIES},
        "colours": STATE_COLOURS,
        "verdict": {lg: verdict_sentence(report, lg) for lg in LANGS},
        "verdict_category": {lg: category_label(report.verdict.category, lg) for lg in LANGS},
        "groups": finding_tree(report),
        "texts_of": lambda f, key: texts_of(f, key, report.lang),
        "grid": grid_picture(report, lang),
        "host_rows": host_rows(report, max_rows=24),
        "state_counts": state_counts(report),
        "lanes": swimlane(report, lang),
        "failures": alike(first_failures(report))[:40],
        "inv": inv,
        "life": {lg: life_lines(report, lg) for lg in LANGS},
        "inv_line": {lg: inventory_line(inv, lg) for lg in LANGS},
        "clock": clock,
        "alike_note": lambda n: {lg: alike_note(n, lg) for lg in LANGS},
        "at_least": {"en": f"at least {len(report.job.ranks_seen)}", "zh": f"至少 {len(report.job.ranks_seen)}"},
        "skip_reasons": lambda reason: {lg: skip_reason(reason or "", lg) for lg in LANGS},
    }


def render(report: Report, lang: str | None = None, command: str | None = None, **_: object) -> str:
    """The HTML report; ``lang`` is the language shown first (both are embedded); ``command``, the
    command line that made it, goes in the footer (no time: the same report gives the same bytes)."""
    lang = lang if lang in LANGS else (report.lang if report.lang in LANGS else "en")
    return environment().get_template("report.html.j2").render(**context(report, lang), command=command)
