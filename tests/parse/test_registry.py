"""The parsers' registry (``nccllens.parse.PARSERS``) is the one list of families: the event kinds the
code writes belong to the families it declares, and rules and ``nccllens events --kind`` accept those."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

from nccllens.engine.validate import check_document
from nccllens.parse import EVENT_FAMILIES, PARSERS, load_families

PACKAGE = Path(__file__).resolve().parents[2] / "nccllens"
# kinds as the code writes them: {"kind": "torch.warning", ...} and event_for(line, "harness.wallclock", ...)
KIND = re.compile(r"""["']kind["']:\s*["'](\w+)\.\w+["']|event_for\(\w+, ["'](\w+)\.\w+["']""")


def test_every_kind_the_code_writes_is_of_a_declared_family():
    written = {m[1] or m[2] for path in PACKAGE.rglob("*.py") for m in KIND.finditer(path.read_text(encoding="utf-8"))}
    assert {"torch", "torchrun", "other", "harness", "progress"} <= written  # the scan is not vacuous
    assert written <= set(EVENT_FAMILIES)


def test_every_registered_module_is_loaded_with_its_own_family_name():
    names = [f.name for f in load_families()]
    assert names == [importlib.import_module(f"nccllens.parse.{m}").FAMILY for m in PARSERS]


def _rule(kind: str) -> str:
    return f"""id = "XX-TST-001"
category = "app_exception"
severity = "error"
role = "cause"
[match]
kinds = ["{kind}"]
[en]
title = "t"
summary = "s"
[[examples]]
log = "x"
expect = "match"
"""


def test_rules_and_the_events_command_accept_the_same_families():
    from nccllens.commands_tables import EVENT_FAMILIES as for_events

    assert for_events == EVENT_FAMILIES
    import tomllib

    for family in EVENT_FAMILIES:
        text = _rule(f"{family}.something")
        problems = [p.message for p in check_document(tomllib.loads(text), text, "x.toml", stem="x")]
        assert not any("unknown family" in m for m in problems), (family, problems)
    text = _rule("bogus.thing")
    assert any("unknown family" in p.message for p in check_document(tomllib.loads(text), text, "x.toml", stem="x"))
