"""Run rules over the event table: one polars pass for every rule, then the aggregate conditions.

Per event, a rule selects ``kind in kinds AND message contains pattern AND every where``. Rules are
evaluated together in a few ``select`` passes (no Python loop over events). Per rule that selected
anything, the aggregate conditions decide whether it fires: ``min_ranks``, ``min_hosts``,
``single_host``, then the conditions on other rules (``requires``, ``absent``, ``before``,
``after``), resolved in dependency order.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

import polars as pl

from nccllens.engine.patterns import combine
from nccllens.engine.peers import AddressBook, address_book
from nccllens.engine.rule import Rule
from nccllens.events import earliest_first
from nccllens.parse.masks import literal_gates
from nccllens.regex_groups import GROUP_SIZE, pattern_groups

_OPS = {
    "lt": lambda c, v: c < v,
    "le": lambda c, v: c <= v,
    "gt": lambda c, v: c > v,
    "ge": lambda c, v: c >= v,
    "ne": lambda c, v: c != v,
    "not_in": lambda c, v: (~c.is_in(list(v))).fill_null(True),  # a missing value is none of them
    "starts_with": lambda c, v: c.cast(pl.String).str.starts_with(v),  # a source location's file: key
}
EARLIEST_FIRST = {"nulls_last": True, "maintain_order": True}  # with events.earliest_first()
SMALL_TABLE = 128  # events: up to this many, the literal gates of the rule groups are searched in Python
_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")  # as ascii_case_insensitive


@dataclass
class RuleHit:
    """A rule that fired, with the events it selected."""

    rule: Rule
    events: pl.DataFrame  # the matched events, earliest first
    book: AddressBook | None = None  # for ``culprit = "peer"`` rules: addresses and ranks placed on hosts


def combined_pattern(rules: list[Rule]) -> str:
    """The OR of every rule's pattern (the pipeline's prefilter); empty when no rule has one."""
    return combine([r.match.pattern for r in rules if r.match.pattern])


def where_expr(column: str, condition: Any) -> pl.Expr:
    col = pl.col(column)
    if isinstance(condition, dict):
        exprs = [_OPS[op](col, value) for op, value in condition.items()]
        return pl.all_horizontal(exprs)
    if isinstance(condition, list):
        return col.is_in(condition)
    return col == condition


def rule_expr(rule: Rule) -> pl.Expr:
    """True for the events ``rule`` selects (null-safe: a null column never matches)."""
    parts: list[pl.Expr] = []
    spec = rule.match
    if spec.kinds:
        parts.append(pl.col("kind").is_in(list(spec.kinds)))
    if spec.pattern:
        parts.append(pl.col("message").str.contains(spec.pattern))
    parts += [where_expr(column, cond) for column, cond in spec.where.items()]
    expr = pl.all_horizontal(parts) if parts else pl.lit(False)
    return expr.fill_null(False)


def sort_earliest_first(events: pl.DataFrame) -> pl.DataFrame:
    return events.sort(earliest_first(), **EARLIEST_FIRST)


def _spread_ok(rule: Rule, events: pl.DataFrame) -> bool:
    spec = rule.match
    ranks = events["rank"].drop_nulls().n_unique()
    hosts = events["host"].drop_nulls().n_unique()
    if ranks < spec.min_ranks or hosts < spec.min_hosts:
        return False
    return not (spec.single_host and hosts > 1)


def _first(events: pl.DataFrame) -> tuple[datetime | None, tuple[str, int]]:
    """When a hit starts: its earliest timestamp, and its first (file, line)."""
    ts = events["ts"].drop_nulls()
    first_ts = ts.min() if len(ts) else None
    placed = events.select("file", "line").drop_nulls().sort(["file", "line"])
    spot = (placed["file"][0], placed["line"][0]) if placed.height else ("", 0)
    return first_ts, spot


def _precedes(a: pl.DataFrame, b: pl.DataFrame) -> bool:
    """Did hit ``a`` start before hit ``b``? By timestamp; by file/line where one has none or they tie."""
    (a_ts, a_spot), (b_ts, b_spot) = _first(a), _first(b)
    if a_ts is not None and b_ts is not None and a_ts != b_ts:
        return a_ts < b_ts
    return a_spot < b_spot


class _Resolver:
    """Decides which selected rules fire, following requires/absent/before/after between rules."""

    def __init__(self, rules: list[Rule], selected: dict[str, pl.DataFrame]) -> None:
        self.by_name = {name: r.id for r in rules for name in r.names()}
        self.rules = {r.id: r for r in rules}
        self.selected = selected
        self.base = {rid: _spread_ok(self.rules[rid], ev) for rid, ev in selected.items()}
        self.decided: dict[str, bool] = {}
        self.visiting: set[str] = set()

    def fires(self, name: str) -> bool:
        rid = self.by_name.get(name)
        if rid is None or not self.base.get(rid, False):
            return False
        if rid in self.decided:
            return self.decided[rid]
        if rid in self.visiting:  # a cycle between rules: fall back to the rule's own events
            return True
        self.visiting.add(rid)
        ok = self._relations_ok(self.rules[rid])
        self.visiting.discard(rid)
        self.decided[rid] = ok
        return ok

    def _relations_ok(self, rule: Rule) -> bool:
        spec, mine = rule.match, self.selected[rule.id]
        if not all(self.fires(name) for name in spec.requires):
            return False
        if any(self.fires(name) for name in spec.absent):
            return False
        for other, mine_first in ((spec.before, True), (spec.after, False)):
            if not other:
                continue
            if not self.fires(other):
                return False
            theirs = self.selected[self.by_name[other]]
            if not (_precedes(mine, theirs) if mine_first else _precedes(theirs, mine)):
                return False
        return True


def _selections(rules: list[Rule], events: pl.DataFrame) -> dict[str, pl.DataFrame]:
    """Every rule's selected events, for the rules that select any. A rule with a pattern is tried only on
    the rows holding one of the literals its pattern requires (``parse.masks.literal_gates``). In a small
    table (``SMALL_TABLE``) they are searched in Python, per rule, and only the rules with a candidate row
    are compiled and run (a rule's regex costs polars ~0.3 ms to compile, an alternation of 24 ~3 ms). In
    a larger one, rules run in groups, each group's selection only on the rows where its alternation
    (``pattern_groups``, as the extraction uses) matches (4,096 ranks: 150 patterns over 64,000 messages),
    and that alternation only on the rows holding one of the group's literals (one Aho-Corasick pass)."""
    out: dict[str, pl.DataFrame] = {}
    plain = [r for r in rules if not r.match.pattern]
    patterned = [r for r in rules if r.match.pattern]
    gates = literal_gates(tuple((r.id, (r.match.pattern,)) for r in patterned))
    if events.height <= SMALL_TABLE:
        found = _small_candidates(events, [gates[r.id] for r in patterned])
        wanted = [r for r, rows in zip(patterned, found, strict=True) if rows]
        rows = sorted(set().union(*found))
        if wanted:
            out.update(_selected(wanted, events, pl.Series(rows, dtype=pl.UInt32)))
        out.update(_selected(plain, events, None))
        return {r.id: out[r.id] for r in rules if r.id in out}
    chunks = [patterned[i:i + GROUP_SIZE] for i in range(0, len(patterned), GROUP_SIZE)]
    message = pl.col("message")
    candidates = events.select([_gate(message, _union([gates[r.id] for r in chunk])).alias(f"_{k}")
                                for k, chunk in enumerate(chunks)])
    groups: dict[int, pl.Series] = {}
    try:
        for k, chunk in enumerate(chunks):
            rows = candidates[f"_{k}"].arg_true()
            if rows.len():
                hit = events[rows].select(message.str.contains(pattern_groups([r.match.pattern for r in chunk])[0])
                                          .fill_null(False))
                groups[k] = rows.filter(hit.to_series())
    except pl.exceptions.PolarsError:  # an alternation the engine refuses: every rule on every row
        plain, chunks, groups = rules, [], {}
    for k, chunk in enumerate(chunks):
        rows = groups.get(k)
        if rows is not None and rows.len():
            out.update(_selected(chunk, events, rows))
    out.update(_selected(plain, events, None))
    return {r.id: out[r.id] for r in rules if r.id in out}


def _union(gates: list[tuple[list[str], list[str]] | None]) -> tuple[list[str], list[str]] | None:
    if any(gate is None for gate in gates):
        return None
    return sorted({lit for gate in gates for lit in gate[0]}), sorted({lit for gate in gates for lit in gate[1]})


def _small_candidates(events: pl.DataFrame, gates: list[tuple[list[str], list[str]] | None]) -> list[list[int]]:
    """Per gate, the rows of a small table it lets through, as ``_gate`` would (null messages never)."""
    messages = [(i, m, m.translate(_ASCII_LOWER)) for i, m in enumerate(events["message"].to_list()) if m is not None]
    return [[i for i, m, folded in messages if gate is None or any(lit in m for lit in gate[0])
             or any(lit in folded for lit in gate[1])] for gate in gates]


def _gate(message: pl.Expr, literals: tuple[list[str], list[str]] | None) -> pl.Expr:
    """The rows that may match a group whose patterns require one of ``literals`` (None: every row)."""
    if literals is None:
        return pl.lit(True)
    cs, nocase = literals
    hit = pl.lit(False)
    if cs:
        hit = hit | message.str.contains_any(cs)
    if nocase:
        hit = hit | message.str.contains_any(nocase, ascii_case_insensitive=True)
    return hit.fill_null(False)


def _selected(rules: list[Rule], events: pl.DataFrame, rows: pl.Series | None) -> dict[str, pl.DataFrame]:
    """The events each of ``rules`` selects, looking only at ``rows`` (None: all) and only at the columns
    the rules read; the whole rows are gathered for the selected events alone."""
    if not rules:
        return {}
    columns = sorted({"kind", "message"} | {c for r in rules for c in r.match.where})
    table = events.select(columns)
    if rows is not None:
        table = table[rows]
    masks = table.select([rule_expr(r).alias(f"_{i}") for i, r in enumerate(rules)])
    out = {}
    for i, (rule, count) in enumerate(zip(rules, masks.sum().row(0), strict=True)):
        if count:
            picked = masks[f"_{i}"].arg_true() if rows is None else rows.filter(masks[f"_{i}"])
            out[rule.id] = sort_earliest_first(events[picked])
    return out


def evaluate(rules: list[Rule], events: pl.DataFrame) -> list[RuleHit]:
    """The rules that fire on ``events``, each with its matched events; ordered by rule id."""
    if not rules or events.height == 0:
        return []
    selected = _selections(rules, events)
    resolver = _Resolver(rules, selected)
    hits = [RuleHit(r, selected[r.id]) for r in rules if r.id in selected and resolver.fires(r.id)]
    if any(h.rule.culprit in ("peer", "peer_on_host") for h in hits):
        book = address_book(events)
        for hit in hits:
            if hit.rule.culprit in ("peer", "peer_on_host"):
                hit.book = book
    return sorted(hits, key=lambda h: h.rule.id)
