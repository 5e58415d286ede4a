"""JSON: the canonical form of the report (shared/report-contract.md plus the rest of the model).

The text is ``json.dumps(report.to_dict(), ensure_ascii=False, indent=2)`` plus a newline, byte for
byte, but built a list item at a time, and the CLI writes the pieces as they come: on 4,096 ranks the
whole dictionary, the encoder's millions of small pieces and the joined text cost ~20 MiB at once at
the very end of the run.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import asdict

from nccllens.report.model import Report

INDENT = "  "
_ENCODER = json.JSONEncoder(ensure_ascii=False, indent=len(INDENT))


def _value(value: object, level: int) -> str:
    """``value`` as it reads nested ``level`` deep (JSON strings hold no raw newline: only indentation
    follows one)."""
    text = _ENCODER.encode(value)
    return text.replace("\n", "\n" + INDENT * level) if level else text


def _array(items: Sequence, level: int) -> Iterator[str]:
    """A list of dataclasses, each turned into a dictionary only while it is encoded."""
    if not items:
        yield "[]"
        return
    inner = "\n" + INDENT * (level + 1)
    for i, item in enumerate(items):
        yield ("," if i else "[") + inner + _value(asdict(item), level + 1)
    yield "\n" + INDENT * level + "]"


def _object(fields: list[tuple[str, Iterable[str]]], level: int) -> Iterator[str]:
    inner = "\n" + INDENT * (level + 1)
    for i, (key, parts) in enumerate(fields):
        yield ("," if i else "{") + inner + _value(key, 0) + ": "
        yield from parts
    yield "\n" + INDENT * level + "}"


def pieces(report: Report, **_: object) -> Iterator[str]:
    """The JSON text in pieces of about one list item each (``render`` joins them; the CLI writes them
    as they come)."""
    fields: list[tuple[str, Iterable[str]]] = [
        ("schema_version", [_value(report.schema_version, 1)]),
        ("tool", [_value(report.tool, 1)]),
        ("version", [_value(report.version, 1)]),
        ("lang", [_value(report.lang, 1)]),
        ("verdict", [_value(asdict(report.verdict), 1)]),
        ("findings", _array(report.findings, 1)),
        ("job", [_value(asdict(report.job), 1)]),
        ("ranks", _array(report.ranks, 1)),
        ("inputs", _object([("files", _array(report.inputs, 2))], 1)),
    ]
    yield from _object(fields, 0)
    yield "\n"


def render(report: Report, **options: object) -> str:
    return "".join(pieces(report, **options))
