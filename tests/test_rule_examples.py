"""Every example of every rule, run through the real pipeline and the engine.

A rule fires on its example iff the example says ``match = true``. The example text is read as a
one-line (or few-line) file named by the example's ``name``. The rules it needs (``requires``,
``before``, ``after``, and theirs) run alongside it; the rules in ``absent`` do not: an example
shows what the rule itself recognises, and overlaps between rules are settled by ``absent`` in a
full run (tests/engine/test_match.py covers that).
"""

from __future__ import annotations

import pytest

from nccllens.engine.loader import load_rules
from nccllens.engine.match import combined_pattern, evaluate
from nccllens.engine.rule import Rule

RULES = load_rules()
BY_NAME = {name: r for r in RULES for name in r.names()}


def needed(rule: Rule) -> list[str]:
    m = rule.match
    return [*m.requires, *(r for r in (m.before, m.after) if r)]


def with_requirements(rule: Rule) -> list[Rule]:
    """``rule`` and every rule it needs to have fired, transitively."""
    group, todo = [rule], needed(rule)
    while todo:
        other = BY_NAME.get(todo.pop())
        if other is not None and other not in group:
            group.append(other)
            todo.extend(needed(other))
    return group


CASES = [
    pytest.param(rule, example, id=f"{rule.id}-{n}")
    for rule in RULES
    for n, example in enumerate(rule.examples, start=1)
]


@pytest.mark.parametrize(("rule", "example"), CASES)
def test_rule_example(rule, example):
    try:
        from nccllens.extract import events_from_text
    except ImportError:
        pytest.skip("nccllens.extract.tables.events_from_text does not exist yet (the lead writes it)")
    group = with_requirements(rule)
    events = events_from_text(example.line, example.name, combined_pattern(group))
    fired = [hit.rule.id for hit in evaluate(group, events)]
    expectation = "fire" if example.match else "not fire"
    assert (rule.id in fired) == example.match, (
        f"{rule.id} should {expectation} on its example ({example.version}, {rule.source}):\n{example.line}\n"
        f"events: {events.select('kind', 'rank', 'message').rows()}"
    )
