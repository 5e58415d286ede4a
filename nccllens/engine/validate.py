"""Check one rule document against docs/rule-format.md; every problem carries its file and line.

``check_document`` covers one file (schema, values, text, examples); ``patterns.pattern_problems``
the regular expressions; ``check_rule_set`` what only the whole set can tell (unique ids and
aliases, references to other rules).
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import Any

import polars as pl

from nccllens import lazy_regex
from nccllens.engine.locate import KeyLines
from nccllens.engine.rule import CULPRITS, LANGUAGES, TEXT_FIELDS
from nccllens.events import SCHEMA, TYPED_COLUMNS
from nccllens.parse import EVENT_FAMILIES
from nccllens.taxonomy import CATEGORIES, RESERVED_VERDICTS, ROLES, SEVERITIES

ID_RE = lazy_regex.compile(r"^[A-Z][A-Z0-9]*(?:-[A-Z0-9]+)+$")
KIND_RE = lazy_regex.compile(r"^[a-z][a-z0-9_]*\.[a-z][a-z0-9_]*$")
COMPARISONS = ("lt", "le", "gt", "ge", "ne", "not_in", "starts_with")
PLACEHOLDER_RE = lazy_regex.compile(r"\{\{|\}\}|\{([a-z_][a-z0-9_]*)\}")
PLACEHOLDERS = frozenset(
    {"host", "hosts", "rank", "ranks", "local_rank", "pid", "attempt", "first_seen", "count", "file", "line"}
    | set(TYPED_COLUMNS)
)

TOP_KEYS = ("id", "aliases", "category", "severity", "role", "confidence", "references", "culprit", "latent",
            "match", "explains", "en", "zh", "examples")
# no "zh": a rule of one's own may give English only (Chinese reports fall back to it; ``rules check`` notes it)
REQUIRED_TOP = ("id", "category", "severity", "role", "match", "en", "examples")
MATCH_KEYS = ("kinds", "pattern", "where", "min_ranks", "min_hosts", "single_host", "requires", "absent",
              "before", "after")
EXPLAINS_KEYS = ("categories", "rules")
EXAMPLE_KEYS = ("line", "version", "match", "name", "source")

_INT_TYPES = (pl.Int32(), pl.Int64(), pl.UInt32())


@dataclass(frozen=True, order=True)
class Problem:
    """What is wrong with a rule file, at which line."""

    path: str
    line: int
    message: str

    def __str__(self) -> str:
        if self.line <= 0:  # about a directory or a whole set, not a line
            return f"{self.path}: {self.message}"
        return f"{self.path}:{self.line}: {self.message}"


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _is_str_list(v: Any) -> bool:
    return isinstance(v, list) and all(isinstance(x, str) for x in v)


class _Checker:
    def __init__(self, data: dict, text: str, path: str) -> None:
        self.data, self.path, self.keys = data, path, KeyLines(text)
        self.problems: list[Problem] = []

    def add(self, where: tuple, message: str) -> None:
        self.problems.append(Problem(self.path, self.keys.line_of(*where), message))

    def unknown_keys(self, table: dict, allowed: tuple[str, ...], where: tuple, label: str) -> None:
        for key in table:
            if key not in allowed:
                hint = difflib.get_close_matches(key, allowed, n=1)
                more = f" (did you mean '{hint[0]}'?)" if hint else f" (known: {', '.join(allowed)})"
                self.add((*where, key), f"unknown key '{key}' in {label}{more}")

    def table(self, key: str, required: bool = False) -> dict | None:
        value = self.data.get(key)
        if value is None:
            if required:
                self.add((), f"missing required table [{key}]")
            return None
        if not isinstance(value, dict):
            self.add((key,), f"'{key}' must be a table")
            return None
        return value

    def id_list(self, value: Any, where: tuple, label: str) -> None:
        if not _is_str_list(value):
            self.add(where, f"{label} must be a list of rule ids")
            return
        for item in value:
            if not ID_RE.match(item):
                self.add(where, f"{label}: '{item}' is not a rule id (like NL-GPU-001)")


def check_document(data: dict, text: str, path: str, stem: str | None = None) -> list[Problem]:
    """Schema and value problems of one parsed rule file (patterns excepted)."""
    c = _Checker(data, text, path)
    c.unknown_keys(data, TOP_KEYS, (), "the rule")
    for key in REQUIRED_TOP:
        if key not in data:
            c.add((), f"missing required key '{key}'")
    _check_header(c, stem)
    match = c.table("match", required=True)
    if match is not None:
        _check_match(c, match)
    explains = c.table("explains")
    if explains is not None:
        c.unknown_keys(explains, EXPLAINS_KEYS, ("explains",), "[explains]")
        cats = explains.get("categories", [])
        if not _is_str_list(cats):
            c.add(("explains", "categories"), "explains.categories must be a list of categories")
        else:
            for cat in cats:
                if cat not in CATEGORIES:
                    c.add(("explains", "categories"), f"explains.categories: unknown category '{cat}'")
        c.id_list(explains.get("rules", []), ("explains", "rules"), "explains.rules")
    for lang in LANGUAGES:
        _check_text(c, lang)
    _check_examples(c)
    return c.problems


def _check_header(c: _Checker, stem: str | None) -> None:
    d = c.data
    rid = d.get("id")
    if "id" in d:
        if not isinstance(rid, str) or not ID_RE.match(rid):
            c.add(("id",), f"id {rid!r} must be upper-case letters and digits joined by dashes (NL-GPU-001)")
        elif stem is not None and stem != rid:
            c.add(("id",), f"the file of rule {rid} must be named {rid}.toml")
    if "aliases" in d:
        c.id_list(d["aliases"], ("aliases",), "aliases")
    cat = d.get("category")
    if "category" in d:
        if cat in RESERVED_VERDICTS:
            c.add(("category",), f"category '{cat}' is reserved for verdicts; a rule needs a cause category")
        elif cat not in CATEGORIES:
            hint = difflib.get_close_matches(str(cat), CATEGORIES, n=1)
            more = f" (did you mean '{hint[0]}'?)" if hint else ""
            c.add(("category",), f"unknown category {cat!r}: not in the taxonomy{more}")
    for key, allowed in (("severity", SEVERITIES), ("role", ROLES)):
        if key in d and d[key] not in allowed:
            c.add((key,), f"{key} {d[key]!r} must be one of {', '.join(allowed)}")
    if "confidence" in d and not (_is_number(d["confidence"]) and 0 <= d["confidence"] <= 1):
        c.add(("confidence",), "confidence must be a number between 0 and 1")
    if "references" in d and not _is_str_list(d["references"]):
        c.add(("references",), "references must be a list of strings (URLs)")
    if "culprit" in d and d["culprit"] not in CULPRITS:
        c.add(("culprit",), f"culprit {d['culprit']!r} must be one of {', '.join(CULPRITS)}")
    if "latent" in d and not isinstance(d["latent"], bool):
        c.add(("latent",), "latent must be true or false")


def _check_match(c: _Checker, m: dict) -> None:
    c.unknown_keys(m, MATCH_KEYS, ("match",), "[match]")
    kinds = m.get("kinds", [])
    if not _is_str_list(kinds):
        c.add(("match", "kinds"), "match.kinds must be a list of event kinds")
        kinds = []
    for kind in kinds:
        if not KIND_RE.match(kind):
            c.add(("match", "kinds"), f"kind '{kind}' must look like family.name (nccl.warn)")
        elif kind.split(".")[0] not in EVENT_FAMILIES:  # the families the parsers emit (``parse.PARSERS``)
            c.add(("match", "kinds"), f"kind '{kind}': unknown family (known: {', '.join(EVENT_FAMILIES)})")
    pattern = m.get("pattern")
    if pattern is not None and not (isinstance(pattern, str) and pattern):
        c.add(("match", "pattern"), "match.pattern must be a non-empty string")
    if not kinds and not pattern:
        c.add(("match",), "[match] needs 'kinds' or 'pattern' (a rule must not match every event)")
    where = m.get("where", {})
    if not isinstance(where, dict):
        c.add(("match", "where"), "match.where must be a table: column = value")
    else:
        for column, cond in where.items():
            _check_where(c, column, cond)
    for key in ("min_ranks", "min_hosts"):
        if key in m and not (_is_int(m[key]) and m[key] >= 0):
            c.add(("match", key), f"match.{key} must be a whole number >= 0")
    if "single_host" in m and not isinstance(m["single_host"], bool):
        c.add(("match", "single_host"), "match.single_host must be true or false")
    for key in ("requires", "absent"):
        if key in m:
            c.id_list(m[key], ("match", key), f"match.{key}")
    for key in ("before", "after"):
        value = m.get(key)
        if value is not None and not (isinstance(value, str) and (value == "" or ID_RE.match(value))):
            c.add(("match", key), f"match.{key} must be one rule id")
    rid = c.data.get("id")
    if isinstance(rid, str) and rid in (set(m.get("requires") or []) | set(m.get("absent") or [])
                                        | {m.get("before"), m.get("after")}):
        c.add(("match",), f"rule {rid} refers to itself in [match]")


def _check_where(c: _Checker, column: str, cond: Any) -> None:
    at = ("match", "where", column)
    dtype = SCHEMA.get(column)
    if dtype is None:
        hint = difflib.get_close_matches(column, list(SCHEMA), n=1)
        more = f" (did you mean '{hint[0]}'?)" if hint else ""
        c.add(at, f"where: unknown column '{column}'{more}; columns are in nccllens.events.SCHEMA")
        return
    if dtype == pl.Datetime("us"):
        c.add(at, f"where: column '{column}' cannot be compared; use before/after")
        return
    numeric = dtype in _INT_TYPES or dtype == pl.Float64()
    fits = _is_int if dtype in _INT_TYPES else _is_number if numeric else (lambda v: isinstance(v, str))
    kind = "a whole number" if dtype in _INT_TYPES else "a number" if numeric else "a string"
    if isinstance(cond, dict):
        for op, value in cond.items():
            if op not in COMPARISONS:
                c.add(at, f"where.{column}: unknown comparison '{op}' (use {', '.join(COMPARISONS)})")
            elif op == "not_in":
                if not isinstance(value, list) or not value or not all(fits(v) for v in value):
                    c.add(at, f"where.{column}.not_in must be a non-empty list, each {kind}")
            elif op == "starts_with":
                if numeric or not isinstance(value, str) or not value:
                    c.add(at, f"where.{column}.starts_with needs a string column and a non-empty string")
            elif op != "ne" and not numeric:
                c.add(at, f"where.{column}: '{op}' needs a numeric column; '{column}' holds strings")
            elif not fits(value):
                c.add(at, f"where.{column}.{op} must be {kind}")
        if not cond:
            c.add(at, f"where.{column}: empty comparison table")
        return
    values = cond if isinstance(cond, list) else [cond]
    if not values:
        c.add(at, f"where.{column}: empty list matches nothing")
    for value in values:
        if not fits(value):
            c.add(at, f"where.{column}: {value!r} must be {kind} (column '{column}' is {dtype})")
            break


def _check_text(c: _Checker, lang: str) -> None:
    table = c.table(lang)
    if table is None:
        return
    c.unknown_keys(table, TEXT_FIELDS, (lang,), f"[{lang}]")
    for field in TEXT_FIELDS:
        value = table.get(field)
        if not isinstance(value, str) or not value.strip():
            c.add((lang,) if field not in table else (lang, field), f"[{lang}] needs a non-empty '{field}'")
            continue
        for name in PLACEHOLDER_RE.findall(value):
            if name and name not in PLACEHOLDERS:
                hint = difflib.get_close_matches(name, sorted(PLACEHOLDERS), n=1)
                more = f" (did you mean '{{{hint[0]}}}'?)" if hint else ""
                c.add((lang, field), f"[{lang}] {field}: unknown placeholder '{{{name}}}'{more}")


def _check_examples(c: _Checker) -> None:
    examples = c.data.get("examples")
    if examples is None:
        return
    if not (isinstance(examples, list) and all(isinstance(e, dict) for e in examples)):
        c.add(("examples",), "examples must be an array of tables: [[examples]]")
        return
    seen = set()
    for i, ex in enumerate(examples):
        c.unknown_keys(ex, EXAMPLE_KEYS, ("examples", i), "[[examples]]")
        for key in ("line", "version"):
            if not (isinstance(ex.get(key), str) and ex[key].strip()):
                c.add(("examples", i, key), f"example {i + 1} needs a non-empty '{key}'")
        if not isinstance(ex.get("match"), bool):
            c.add(("examples", i, "match"), f"example {i + 1} needs 'match = true' or 'match = false'")
        else:
            seen.add(ex["match"])
        for key in ("name", "source"):
            if key in ex and not isinstance(ex[key], str):
                c.add(("examples", i, key), f"example {i + 1}: '{key}' must be a string")
    for value in (True, False):
        if value not in seen:
            c.add(("examples",), f"needs at least one example with match = {str(value).lower()}")
