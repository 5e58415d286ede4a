"""JSON: the canonical form of the report (shared/report-contract.md plus the rest of the model).

The text is ``json.dumps(report.to_dict(), ensure_ascii=False, indent=2)`` plus a newline, byte for
byte, but built a list item at a time, and the CLI writes the pieces as they come: on 4,096 ranks the
whole dictionary, the encoder's millions of small pieces and the joined text cost ~20 MiB at once at
the very end of the run. Values are written directly rather than through the standard library's
indenting encoder, which is pure Python and yields every token through generators (4,096 ranks:
0.23 s, now ~0.08).
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import fields, is_dataclass

from nccllens.report.model import Report

INDENT = "  "
_ENCODER = json.JSONEncoder(ensure_ascii=False, indent=len(INDENT))
_STRING = json.encoder.encode_basestring  # the encoder's own string writer when ensure_ascii=False
_SCALARS = frozenset({str, int, float, bool, type(None)})


def _scalar(value: object) -> str:
    """One scalar as the encoder writes it (NaN and infinities allowed, as json.dumps allows them)."""
    if isinstance(value, str):
        return _STRING(value)
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        return int.__repr__(value)
    if value != value:
        return "NaN"
    if value in (math.inf, -math.inf):
        return "Infinity" if value > 0 else "-Infinity"
    return float.__repr__(value)


def _value(value: object, level: int) -> str:
    """``value`` as json.dumps writes it nested ``level`` deep. Dicts under text keys, lists, tuples and
    scalars are written here; anything else goes to the standard encoder (JSON strings hold no raw
    newline, so re-indenting its text after each newline is exact)."""
    kind = type(value)
    if kind in _SCALARS:
        return _scalar(value)
    inner = "\n" + INDENT * (level + 1)
    close = "\n" + INDENT * level
    if kind is dict and all(type(k) is str for k in value):
        if not value:
            return "{}"
        return "{" + inner + ("," + inner).join([f"{_STRING(k)}: {_value(v, level + 1)}"
                                                  for k, v in value.items()]) + close + "}"
    if kind is list or kind is tuple:
        if not value:
            return "[]"
        return "[" + inner + ("," + inner).join([_value(v, level + 1) for v in value]) + close + "]"
    text = _ENCODER.encode(value)
    return text.replace("\n", "\n" + INDENT * level) if level else text


def plain(obj: object) -> object:
    """What ``dataclasses.asdict`` gives for the report's values, without its deep copies (the values
    are encoded at once, never kept): dataclasses become dicts, lists and tuples lists."""
    if type(obj) in _SCALARS:
        return obj
    if is_dataclass(obj) and not isinstance(obj, type):
        return {f.name: plain(getattr(obj, f.name)) for f in fields(obj)}
    if isinstance(obj, (list, tuple)):
        return [plain(x) for x in obj]
    if isinstance(obj, dict):
        return {k: plain(v) for k, v in obj.items()}
    return obj


def _array(items: Sequence, level: int) -> Iterator[str]:
    """A list of dataclasses, each turned into a dictionary only while it is encoded."""
    if not items:
        yield "[]"
        return
    inner = "\n" + INDENT * (level + 1)
    for i, item in enumerate(items):
        yield ("," if i else "[") + inner + _value(plain(item), level + 1)
    yield "\n" + INDENT * level + "]"


def _object(fields: list[tuple[str, Iterable[str]]], level: int) -> Iterator[str]:
    inner = "\n" + INDENT * (level + 1)
    for i, (key, parts) in enumerate(fields):
        yield ("," if i else "{") + inner + _STRING(key) + ": "
        yield from parts
    yield "\n" + INDENT * level + "}"


def pieces(report: Report, **_: object) -> Iterator[str]:
    """The JSON text in pieces of about one list item each (``render`` joins them; the CLI writes them
    as they come)."""
    top: list[tuple[str, Iterable[str]]] = [
        ("schema_version", [_value(report.schema_version, 1)]),
        ("tool", [_value(report.tool, 1)]),
        ("version", [_value(report.version, 1)]),
        ("lang", [_value(report.lang, 1)]),
        ("verdict", [_value(plain(report.verdict), 1)]),
        ("findings", _array(report.findings, 1)),
        ("job", [_value(plain(report.job), 1)]),
        ("ranks", _array(report.ranks, 1)),
        ("inputs", _object([("files", _array(report.inputs, 2))], 1)),
    ]
    yield from _object(top, 0)
    yield "\n"


def render(report: Report, **options: object) -> str:
    return "".join(pieces(report, **options))
