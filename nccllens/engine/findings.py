"""Turn a rule hit into a report Finding: text in the chosen language, culprits, evidence."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import polars as pl

from nccllens.engine.match import RuleHit
from nccllens.engine.peers import peer_culprits
from nccllens.engine.validate import PLACEHOLDER_RE
from nccllens.engine.wording import missing, reword_unknown, spoken_durations
from nccllens.rank_ranges import compact_ranks  # noqa: F401 - re-exported
from nccllens.repeats import lines_of
from nccllens.report.model import Evidence, Finding

EVIDENCE_LINES = 5


def _iso(value: Any) -> str | None:
    return value.isoformat() if isinstance(value, datetime) else None


def _distinct(events: pl.DataFrame, column: str) -> list:
    """Distinct non-null values of ``column``, in order of first appearance."""
    return events[column].drop_nulls().unique(maintain_order=True).to_list()


def placeholder_values(events: pl.DataFrame) -> dict[str, Any]:
    """What ``{name}`` stands for: summaries of the hit, and each column's first stated value."""
    # one query for every column's first stated value (a Series per column cost ~11 ms a finding)
    stated = events.select(pl.all().drop_nulls().first()).row(0) if events.height else [None] * events.width
    first = dict(zip(events.columns, stated, strict=True))
    ranks = sorted(_distinct(events, "rank"))
    hosts = _distinct(events, "host")
    ts = events["ts"].drop_nulls()
    values = dict(first)
    values.update(
        ranks=compact_ranks(ranks) if ranks else None,
        hosts=", ".join(sorted(hosts)) if hosts else None,
        first_seen=_iso(ts.min()) if len(ts) else None,
        count=lines_of(events),
    )
    return values


def interpolate(text: str, values: dict[str, Any], source: str | None = None) -> str:
    """Replace ``{name}``; ``{{``/``}}`` are literal braces. A name the logs leave unknown (null, or
    ``?``) is worded around (engine/wording.py): its clause is dropped or says "the node that wrote
    ``source``" (default: the ``file`` value), and in a command it is ``<node>``, never ``?``."""
    source = source if source is not None else values.get("file")
    text = reword_unknown(text, values, PLACEHOLDER_RE.findall(text), str(source) if source else None)
    text = spoken_durations(text, values)

    def one(m) -> str:
        if m.group(0) == "{{":
            return "{"
        if m.group(0) == "}}":
            return "}"
        value = values.get(m.group(1))
        if missing(value):
            return ""  # only a name reword_unknown left: none in practice
        return _iso(value) or str(value)

    return PLACEHOLDER_RE.sub(one, text)


def _matched_text(raw: str | None, message: str | None, detail: str | None, pattern: str) -> str | None:
    """The line ``pattern`` is about when the event's first line (``raw``) is not it: a multi-line event
    (a traceback, a failure-table row) keeps the matched line in its ``detail`` or ``message``."""
    if raw and (_contains(raw, pattern) or (message and message in raw and _contains(message, pattern))):
        return None
    for block in (detail, message):
        for line in reversed((block or "").splitlines()):  # an exception's own line ends its block
            if _contains(line, pattern):
                return line.strip()
    return None


def _contains(text: str, pattern: str) -> bool:
    """``pattern`` found in ``text``, with the rules' regex engine (polars / Rust regex)."""
    return bool(pl.select(pl.lit(text).str.contains(pattern)).item())


def evidence_of(events: pl.DataFrame, limit: int = EVIDENCE_LINES, pattern: str | None = None) -> list[Evidence]:
    """The first ``limit`` events as evidence. With the rule's ``pattern``, each quotes the line that
    matched: the ``KeyError: 'labels'`` that ends a traceback or a failure-table row, not its
    ``Traceback (most recent call last):`` or ``exitcode : 1 (pid: …)`` (``file:line`` stays the
    event's own: where that block starts)."""
    columns = ["file", "line", "raw", "message", "rank", "host", "ts"]
    columns += ["detail"] if pattern and "detail" in events.columns else []
    out = []
    for r in events.head(limit).select(columns).iter_rows(named=True):
        text = r["raw"] if r["raw"] is not None else (r["message"] or "")
        if pattern:
            text = _matched_text(r["raw"], r["message"], r.get("detail"), pattern) or text
        out.append(Evidence(file=r["file"] or "", line=int(r["line"] or 0), text=text, rank=r["rank"],
                            host=r["host"], ts=_iso(r["ts"])))
    return out


def finding_from_hit(hit: RuleHit, lang: str = "en") -> Finding:
    """A Finding (``id`` left empty: the ranking numbers findings) for one fired rule."""
    rule, events = hit.rule, hit.events
    text = rule.text_for(lang)
    values = placeholder_values(events)
    ranks, hosts = sorted(_distinct(events, "rank")), sorted(_distinct(events, "host"))
    reported_by: dict = {}
    if rule.culprit in ("peer", "peer_on_host"):  # the peer the messages name is the culprit; who printed them reported it
        named = peer_culprits(events, hit.book)
        if named is not None:
            reported_by = {"ranks": ranks, "hosts": hosts}
            ranks, hosts = named
            if missing(values.get("peer")):  # named in the message's words, not in a parsed field
                values["peer"] = ", ".join(hosts) if hosts else f"rank {compact_ranks(ranks)}"
            if rule.culprit == "peer_on_host" and not hosts:  # the named ranks share the printer's host
                hosts = reported_by["hosts"]
    return Finding(
        id="",
        rule=rule.id,
        category=rule.category,
        severity=rule.severity,
        role=rule.role,
        confidence=rule.confidence,
        title=interpolate(text.title, values),
        summary=interpolate(text.summary, values),
        remediation=interpolate(text.remediation, values),
        ranks=ranks,
        hosts=hosts,
        reported_by=reported_by,
        first_seen=values["first_seen"],
        evidence=evidence_of(events, pattern=rule.match.pattern),
        explains=[*rule.explains_rules, *rule.explains_categories],
        count=lines_of(events),
        references=list(rule.references),
        texts={other: {key: interpolate(getattr(rule.text_for(other), key), values)
                       for key in ("title", "summary", "remediation")}
               for other in ("en", "zh") if other != lang and other in rule.text},
    )
