"""``--select`` / ``--ignore`` (and ``[tool.nccllens]`` select/ignore) over everything a report can show:
the rules (``NL-GPU-001``, aliases, id prefixes, categories) and the cross-rank analyses (``AN-SILENT-RANK``,
the prefix ``AN-FLIGHT``, ``AN`` for all of them, or their category).

A selector that names no rule, no analysis and no category is an error, so a typo is never silent.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from nccllens.engine import select_rules
from nccllens.engine.select import ALL, unknown_selectors
from nccllens.taxonomy import CATEGORIES


def analysis_ids() -> dict[str, str]:
    """Every analysis id (``AN-...``) with its category, from the analyses' texts."""
    from nccllens.analyses.common import texts

    return {name: spec.get("category", "") for name, spec in texts().items()}


def _clean(selectors: Iterable[str]) -> list[str]:
    return [s.strip() for s in selectors if s and s.strip()]


def names_analysis(selector: str, analysis: str, category: str) -> bool:
    """Whether ``selector`` names the analysis ``analysis`` (of ``category``): ALL, the id, an id prefix,
    the category."""
    wanted = selector.upper()
    return (selector == ALL or selector == category or wanted == analysis
            or analysis.startswith(wanted + "-"))


def _names_any_analysis(selector: str) -> bool:
    return any(names_analysis(selector, a, c) for a, c in analysis_ids().items())


def choose_rules(rules: list, select: Sequence[str] = (), ignore: Sequence[str] = ()) -> list:
    """The rules that run: those ``select`` names (all when it is empty) minus those ``ignore`` names.

    A selection that names only analyses (``--select AN-SILENT-RANK``) runs no rule. Raises ValueError
    naming every selector that matches nothing at all."""
    select, ignore = _clean(select), _clean(ignore)
    unknown = [s for s in unknown_selectors([*select, *ignore], rules) if not _names_any_analysis(s)]
    if unknown:
        raise ValueError("no rule, analysis or category named " + ", ".join(repr(b) for b in unknown)
                         + " (see `nccllens rules list` and `nccllens explain AN-...`)")
    for_rules = [s for s in select if not unknown_selectors([s], rules)]
    if select and not for_rules:
        return []
    return select_rules(rules, select=for_rules, ignore=[s for s in ignore if not unknown_selectors([s], rules)])


def keep_finding(rule: str, category: str, select: Sequence[str] = (), ignore: Sequence[str] = ()) -> bool:
    """Whether an analysis finding (``rule`` an ``AN-`` id) is reported under this selection; findings of
    rules were chosen when the rules were (``choose_rules``)."""
    select, ignore = _clean(select), _clean(ignore)
    if select and not any(names_analysis(s, rule, category) for s in select):
        return False
    return not any(names_analysis(s, rule, category) for s in ignore)


def completions(rules: list, incomplete: str = "", categories: bool = False) -> list[str]:
    """Rule ids, aliases and analysis ids (and categories when asked) that start with ``incomplete``
    (any case): what the shell completes."""
    names = {n for r in rules for n in r.names()} | set(analysis_ids())
    if categories:
        names |= set(CATEGORIES)
    return sorted(n for n in names if n.lower().startswith(incomplete.lower()))
