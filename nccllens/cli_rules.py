"""``nccllens rules list|show|check`` and ``nccllens explain ID``: rules as a user sees them."""

from __future__ import annotations

import difflib
import os
import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table
from rich.text import Text

from nccllens.cli_explain import colon, find_analysis, print_analysis
from nccllens.engine.describe import Page, rule_page
from nccllens.engine.loader import display_path
from nccllens.engine.rule import Rule
from nccllens.i18n import choose_language, t
from nccllens.taxonomy import CATEGORIES
from nccllens.terminal import shown
from nccllens.text_tables import piped

app = typer.Typer(no_args_is_help=True, add_completion=False, help="List, show and check rules.")

RulesOpt = Annotated[list[Path] | None, typer.Option("--rules", help="Extra rule directory (repeatable).")]
LangOpt = Annotated[str | None, typer.Option("--lang", help="en or zh (default: from the locale).")]


def console(stderr: bool = False) -> Console:
    """A rich console that honours NO_COLOR (any non-empty value) and plain pipes."""
    return Console(stderr=stderr, no_color=bool(os.environ.get("NO_COLOR")), highlight=False, soft_wrap=True)


def _rules(extra: list[Path] | None) -> list[Rule]:
    """Packaged rules, configured rule directories and ``--rules``; problems go to stderr."""
    from nccllens.config import ConfigError, load_settings

    try:
        dirs = [*load_settings().rules, *(extra or [])]
    except ConfigError as err:
        console(stderr=True).print(Text(f"nccllens: {err}"))
        dirs = list(extra or [])
    from nccllens.engine.loader import load_dirs  # loading checks patterns with polars: import it only here

    result = load_dirs(dirs)
    err = console(stderr=True)
    for problem in result.problems:
        err.print(Text(f"{problem} (rule skipped)"))
    return result.rules


def find_rule(rules: list[Rule], name: str) -> Rule | None:
    wanted = name.strip().upper()
    return next((r for r in rules if wanted in r.names()), None)


def _lang(lang: str | None) -> str:
    from nccllens.config import ConfigError, load_settings

    try:
        configured = load_settings().lang
    except ConfigError:
        configured = None
    try:
        return choose_language(lang, configured)
    except ValueError as err:
        raise typer.BadParameter(str(err)) from None


@app.command("list")
def list_rules(
    category: Annotated[str | None, typer.Option("--category", help="Only rules of this category.")] = None,
    rules: RulesOpt = None,
    lang: LangOpt = None,
) -> None:
    """Every rule: id, category, severity, role and title."""
    if category and category not in CATEGORIES:
        hint = difflib.get_close_matches(category, CATEGORIES, n=1)
        more = f" (did you mean {hint[0]}?)" if hint else f"; categories: {', '.join(CATEGORIES)}"
        console(stderr=True).print(Text(f"nccllens: unknown category {category!r}{more}"))
        raise typer.Exit(2)
    language = _lang(lang)
    chosen = [r for r in _rules(rules) if not category or r.category == category]
    out = console()
    if not chosen:
        out.print(t("no_rules", language))
        return
    if piped():  # one rule per line, nothing wrapped or cut: for grep, cut and a pasted command
        from nccllens.text_tables import layout

        heading = tuple(t(h, language) for h in ("rule", "category", "severity", "role", "title"))
        lines, _ = layout([heading, *((r.id, r.category, r.severity, r.role, shown(r.text_for(language).title))
                                      for r in chosen)])
        sys.stdout.write("\n".join(lines) + "\n")
        return
    table = Table(box=None, pad_edge=False, show_edge=False)
    for heading in ("rule", "category", "severity", "role", "title"):
        table.add_column(t(heading, language), overflow="fold")
    for r in chosen:
        table.add_row(r.id, r.category, r.severity, r.role, Text(r.text_for(language).title))
    out.print(table)


def print_page(page: Page, out: Console, technical: bool = False) -> None:
    rule = page.rule
    out.print(Text.assemble((rule.id, "bold cyan"), "  ", (page.title, "bold")))
    out.print(Text("  ·  ".join(f"{label}{colon(page.lang)}{value}" for label, value in page.facts), style="dim"))
    for heading, body in page.sections:
        out.print()
        out.print(Text(heading, style="bold underline"))
        out.print(Text(body.strip()))
    if page.examples:
        out.print()
        out.print(Text(t("examples", page.lang), style="bold underline"))
        for matched, version, line in page.examples:
            mark, style = ("✓", "green") if matched else ("✗", "red")
            verb = t("matches" if matched else "does_not_match", page.lang)
            out.print(Text.assemble((f"{mark} {verb}", style), f"  ({version})"))
            for one in line.splitlines():
                out.print(Text(f"    {one}"))
    if page.references:
        out.print()
        out.print(Text(t("references", page.lang), style="bold underline"))
        for ref in page.references:
            out.print(Text(f"- {ref}"))
    if technical:
        out.print()
        out.print(Text(f"source: {rule.source}", style="dim"))
        if rule.match.pattern:
            out.print(Text(f"pattern: {rule.match.pattern}", style="dim"))


def _page_or_fail(rule_id: str, rules: list[Rule]) -> Rule | None:
    """The rule ``rule_id`` names; None (said on stderr with near names) when neither it nor an analysis does."""
    rule = find_rule(rules, rule_id)
    if rule is None and find_analysis(rule_id) is None:
        from nccllens.selection import analysis_ids

        names = [n for r in rules for n in r.names()] + list(analysis_ids())
        hint = difflib.get_close_matches(rule_id.upper(), names, n=3)
        more = f" (did you mean {', '.join(hint)}?)" if hint else " (see `nccllens rules list`)"
        console(stderr=True).print(Text(f"nccllens: no rule named {rule_id!r}{more}"))
    return rule


@app.command("show")
def show(
    rule_id: Annotated[str, typer.Argument(help="A rule id or alias.")],
    rules: RulesOpt = None,
    lang: LangOpt = None,
) -> None:
    """A rule's page, with its match specification and source file."""
    rule = _page_or_fail(rule_id, _rules(rules))
    analysis = find_analysis(rule_id) if rule is None else None
    if analysis is not None:
        print_analysis(analysis, _lang(lang), console())
        return
    if rule is None:
        raise typer.Exit(1)
    print_page(rule_page(rule, _lang(lang)), console(), technical=True)


@app.command("check")
def check(dirs: Annotated[list[Path], typer.Argument(help="Rule directories or files.")]) -> None:
    """Validate rule files; print ``path:line: message`` for each problem (exit 1 if any), and a note for
    each rule with English text only (Chinese reports show it in English)."""
    from nccllens.engine.loader import load_dirs

    loaded = load_dirs([Path(d) for d in dirs])
    problems = loaded.problems
    out = console()
    for problem in problems:
        out.print(Text(str(problem)))
    for note in english_only_notes(loaded.rules, dirs):
        out.print(Text(note))
    files = len({p.path for p in problems})
    if problems:
        console(stderr=True).print(Text(f"{len(problems)} problem(s) in {files} file(s)"))
        raise typer.Exit(1)
    count = sum(1 for d in dirs for _ in (Path(d).rglob("*.toml") if Path(d).is_dir() else [d]))
    console(stderr=True).print(Text(f"{count} rule file(s) OK"))


def english_only_notes(rules: list[Rule], dirs: list[Path]) -> list[str]:
    """``path:1: note: ...`` for each rule under ``dirs`` that gives no ``[zh]`` text (not a problem)."""
    roots = [Path(d).resolve() for d in dirs]
    notes = []
    for rule in rules:
        source = Path(rule.source).resolve() if rule.source else None
        if "zh" in rule.text or source is None or not any(source == r or r in source.parents for r in roots):
            continue
        notes.append(f"{display_path(source)}:1: note: {rule.id} has English text only ([en]); "
                     "Chinese reports (--lang zh) show its English title, summary and remediation")
    return notes


def explain(rule_id: str, lang: str | None = None, rules: list[Path] | None = None) -> int:
    """Print the page of ``rule_id`` (a rule id or alias, or an analysis id ``AN-...``) in ``lang``;
    0 when found, 1 when not."""
    rule = _page_or_fail(rule_id, _rules(rules))
    analysis = find_analysis(rule_id) if rule is None else None
    if rule is None and analysis is None:
        return 1
    language = lang if lang in ("en", "zh") else choose_language(lang)
    if analysis is not None:
        print_analysis(analysis, language, console())
    else:
        print_page(rule_page(rule, language), console())
    sys.stdout.flush()
    return 0
