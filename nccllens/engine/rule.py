"""A rule as the engine holds it: plain data read from one TOML file (docs/rule-format.md)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

DEFAULT_CONFIDENCE = 0.7
LANGUAGES = ("en", "zh")
TEXT_FIELDS = ("title", "summary", "remediation")
# whose ranks and hosts a finding names: the events' own (the lines' writers: "reporter", the default), or
# the ``peer`` the messages name (the rank a barrier waits on, the host that closed the connection)
CULPRITS = ("reporter", "peer", "peer_on_host")


@dataclass(frozen=True)
class MatchSpec:
    """What events a rule selects (per event) and when the selection fires (aggregate)."""

    kinds: tuple[str, ...] = ()
    pattern: str | None = None
    where: dict[str, Any] = field(default_factory=dict)  # column -> value | [values] | {op: value}
    min_ranks: int = 0
    min_hosts: int = 0
    single_host: bool = False
    requires: tuple[str, ...] = ()
    absent: tuple[str, ...] = ()
    before: str | None = None
    after: str | None = None

    def references(self) -> tuple[str, ...]:
        """Rule ids this rule's firing depends on."""
        refs = [*self.requires, *self.absent]
        refs += [r for r in (self.before, self.after) if r]
        return tuple(refs)


@dataclass(frozen=True)
class Text:
    """A rule's texts in one language."""

    title: str
    summary: str
    remediation: str


@dataclass(frozen=True)
class Example:
    """A log line a rule must match (or must not), with what printed it."""

    line: str  # one log line, or several (a multi-line string)
    version: str  # what printed it: "nccl 2.21.5", "torch 2.4", "driver 535"
    match: bool
    name: str = "<example>"  # the file name the line is read as (path hints: dmesg.txt, rank3.log)
    source: str | None = None  # where the line was seen (URL, shared/reference file)


@dataclass(frozen=True)
class Rule:
    """One rule file, as the engine holds it (docs/rule-format.md)."""

    id: str
    category: str
    severity: str
    role: str
    text: dict[str, Text]  # language -> text
    match: MatchSpec
    aliases: tuple[str, ...] = ()
    confidence: float = DEFAULT_CONFIDENCE
    references: tuple[str, ...] = ()
    explains_categories: tuple[str, ...] = ()
    explains_rules: tuple[str, ...] = ()
    examples: tuple[Example, ...] = ()
    source: Path | None = None
    culprit: str = "reporter"  # CULPRITS
    latent: bool = False  # a condition that fails jobs but is harmless in one that did not fail (context then)

    def text_for(self, lang: str) -> Text:
        return self.text.get(lang) or self.text["en"]

    def names(self) -> tuple[str, ...]:
        """Every name this rule answers to: its id, then its aliases."""
        return (self.id, *self.aliases)


def rule_from_dict(data: dict[str, Any], source: Path | None = None) -> Rule:
    """Build a Rule from an already validated TOML document."""
    m = data.get("match", {})
    spec = MatchSpec(
        kinds=tuple(m.get("kinds", ())),
        pattern=m.get("pattern") or None,
        where=dict(m.get("where", {})),
        min_ranks=int(m.get("min_ranks", 0)),
        min_hosts=int(m.get("min_hosts", 0)),
        single_host=bool(m.get("single_host", False)),
        requires=tuple(m.get("requires", ())),
        absent=tuple(m.get("absent", ())),
        before=m.get("before") or None,
        after=m.get("after") or None,
    )
    text = {
        lang: Text(**{f: data[lang][f].strip() for f in TEXT_FIELDS}) for lang in LANGUAGES if lang in data
    }
    explains = data.get("explains", {})
    examples = tuple(
        Example(
            line=e["line"].rstrip("\n"),
            version=e["version"],
            match=e["match"],
            name=e.get("name", "<example>"),
            source=e.get("source"),
        )
        for e in data.get("examples", ())
    )
    return Rule(
        id=data["id"],
        category=data["category"],
        severity=data["severity"],
        role=data["role"],
        text=text,
        match=spec,
        aliases=tuple(data.get("aliases", ())),
        confidence=float(data.get("confidence", DEFAULT_CONFIDENCE)),
        references=tuple(data.get("references", ())),
        explains_categories=tuple(explains.get("categories", ())),
        explains_rules=tuple(explains.get("rules", ())),
        examples=examples,
        source=source,
        culprit=data.get("culprit", "reporter"),
        latent=bool(data.get("latent", False)),
    )
