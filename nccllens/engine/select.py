"""Choose which rules run: ``select``/``ignore`` lists of rule ids, aliases, id prefixes or categories."""

from __future__ import annotations

from collections.abc import Iterable

from nccllens.engine.rule import Rule
from nccllens.taxonomy import CATEGORIES

ALL = "ALL"


def selector_matches(selector: str, rule: Rule) -> bool:
    """``ALL``, an id or alias (``NL-GPU-001``), an id prefix (``NL-GPU``) or a category (``gpu_oom``)."""
    if selector == ALL or selector == rule.category:
        return True
    return any(name == selector or name.startswith(selector + "-") for name in rule.names()) or (
        selector[-1:].isdigit() and rule.id.startswith(selector)
    )


def unknown_selectors(selectors: Iterable[str], rules: list[Rule]) -> list[str]:
    """Selectors that name no loaded rule and no category (likely typos)."""
    return [
        s for s in selectors
        if s not in CATEGORIES and not any(selector_matches(s, r) for r in rules)
    ]


def select_rules(rules: list[Rule], select: Iterable[str] = (), ignore: Iterable[str] = ()) -> list[Rule]:
    """The rules that ``select`` names (all when empty) minus those ``ignore`` names.

    Raises ValueError naming any selector that matches nothing, so a typo is never silent.
    """
    select = [s.strip() for s in select if s and s.strip()]
    ignore = [s.strip() for s in ignore if s and s.strip()]
    bad = unknown_selectors([*select, *ignore], rules)
    if bad:
        raise ValueError(
            "no rule or category named " + ", ".join(repr(b) for b in bad)
            + " (see `nccllens rules list`)"
        )
    chosen = [r for r in rules if not select or any(selector_matches(s, r) for s in select)]
    return [r for r in chosen if not any(selector_matches(s, r) for s in ignore)]
