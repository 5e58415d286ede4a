"""The one report model. Pure data: built once by the analysis, presented by the renderers.

``Report.to_dict()`` is the canonical JSON form (shared/report-contract.md plus more); every
renderer (text, html, md, json) reads a Report and nothing else.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

REPORT_SCHEMA_VERSION = 1


@dataclass
class Evidence:
    """A log line a finding rests on."""

    file: str
    line: int
    text: str
    rank: int | None = None
    host: str | None = None
    ts: str | None = None  # ISO 8601, as far as the log tells


@dataclass
class Finding:
    """One finding: what was found, where, how sure, and what to do."""

    id: str  # unique within the report: "F1", "F2"... in ranked order
    rule: str  # rule id or analysis id (e.g. "NL-GPU-001", "AN-MISSING-RANK")
    category: str  # shared/taxonomy.md
    severity: str  # critical | error | warning | info
    role: str  # cause | symptom | context
    confidence: float
    title: str
    summary: str
    remediation: str
    ranks: list[int] = field(default_factory=list)  # culprit global ranks
    hosts: list[str] = field(default_factory=list)  # culprit hosts
    first_seen: str | None = None  # ISO 8601
    evidence: list[Evidence] = field(default_factory=list)
    explains: list[str] = field(default_factory=list)  # finding ids this cause accounts for
    explained_by: str | None = None  # the finding id of the cause that accounts for this one
    count: int = 0  # matched events
    references: list[str] = field(default_factory=list)
    # the same texts in other languages: {"zh": {"title": ..., "summary": ..., "remediation": ...}};
    # title/summary/remediation above are in the report's language, this is optional
    texts: dict[str, dict[str, str]] = field(default_factory=dict)
    # who printed the evidence when ``ranks``/``hosts`` are the peer its messages name (a rule's
    # ``culprit = "peer"``): {"ranks": [...], "hosts": [...]}; empty when the reporters are the culprits
    reported_by: dict[str, list] = field(default_factory=dict)

    def text(self, key: str, lang: str | None = None) -> str:
        """``title``/``summary``/``remediation`` in ``lang`` when the finding carries it, else as stored."""
        if lang is not None:
            value = self.texts.get(lang, {}).get(key)
            if value:
                return value
        return getattr(self, key)

    def languages(self, base: str) -> list[str]:
        """The languages this finding has text in (``base``: the report's language), in stable order."""
        found = {base, *(lang for lang, texts in self.texts.items() if texts.get("title"))}
        return sorted(found)


@dataclass
class Verdict:
    """The report's one-sentence answer and its confidence."""

    category: str  # a taxonomy category, "none" (healthy) or "unknown"
    summary: str
    confidence: float
    finding: str | None = None  # id of findings[0] when category is a cause
    texts: dict[str, str] = field(default_factory=dict)  # the summary in other languages: {"zh": ...}

    def summary_in(self, lang: str | None = None) -> str:
        return (self.texts.get(lang) if lang else None) or self.summary


@dataclass
class InputFile:
    """One input in the inventory: read (lines, events) or skipped (why)."""

    path: str
    lines: int = 0
    events: int = 0
    skipped: str | None = None  # why the file was left out, or None
    kind: str | None = None  # what we took it for: log, dmesg, flight-recorder, error.json...
    host: str | None = None
    rank: int | None = None
    notes: list[str] = field(default_factory=list)  # partial problems (truncated gz, bad bytes)


@dataclass
class RankStatus:
    """What the logs say of one rank: where it ran, how it ended, its last sign of life."""

    rank: int
    host: str | None = None
    local_rank: int | None = None
    pid: int | None = None
    state: str = "unknown"  # crashed, exited, timed_out, blocked, silent, never_seen, finished, unknown
    exit_code: int | None = None
    signal: str | None = None
    last_seq: int | None = None  # last collective seq seen (enqueued) in the default PG
    last_completed: int | None = None
    last_op: str | None = None
    first_error: str | None = None
    first_error_ts: str | None = None
    last_seen: str | None = None  # ISO 8601 (seconds): the rank's last timestamped line


@dataclass
class JobModel:
    """The job as the logs describe it: world size, hosts, ranks, versions, communicators, span."""

    world_size: int | None = None
    hosts: list[str] = field(default_factory=list)
    ranks_seen: list[int] = field(default_factory=list)
    rank_hosts: dict[str, str] = field(default_factory=dict)  # str(rank) -> host
    versions: dict[str, list[str]] = field(default_factory=dict)  # "nccl" -> ["2.21.5", ...]
    communicators: list[dict[str, Any]] = field(default_factory=list)
    attempts: int | None = None
    start: str | None = None
    end: str | None = None
    # the logs print times without a year (syslog/journal "Nov 25 10:00:01", glog "I1125 10:00:01") and no
    # line of the job states one: the year shown is a guess (the files' modification year)
    year_guessed: bool = False


@dataclass
class Report:
    """The whole report: verdict, findings, job, ranks and inputs."""

    verdict: Verdict
    findings: list[Finding] = field(default_factory=list)
    job: JobModel = field(default_factory=JobModel)
    ranks: list[RankStatus] = field(default_factory=list)
    inputs: list[InputFile] = field(default_factory=list)
    lang: str = "en"
    tool: str = "nccllens"
    version: str = ""
    schema_version: int = REPORT_SCHEMA_VERSION
    events: Any = field(default=None, repr=False, compare=False)  # the polars event table (API only)

    def to_dict(self) -> dict[str, Any]:
        d = {
            "schema_version": self.schema_version,
            "tool": self.tool,
            "version": self.version,
            "lang": self.lang,
            "verdict": asdict(self.verdict),
            "findings": [asdict(f) for f in self.findings],
            "job": asdict(self.job),
            "ranks": [asdict(r) for r in self.ranks],
            "inputs": {"files": [asdict(f) for f in self.inputs]},
        }
        return d

    def languages(self) -> list[str]:
        """Every language some text of this report is available in (the report's own first)."""
        found = {self.lang, *self.verdict.texts}
        for f in self.findings:
            found.update(f.languages(self.lang))
        return [self.lang, *sorted(found - {self.lang})]

    def to_json(self, **options: Any) -> str:
        from nccllens.report import render

        return render(self, "json", **options)

    def to_html(self, **options: Any) -> str:
        from nccllens.report import render

        return render(self, "html", **options)

    def to_markdown(self, **options: Any) -> str:
        from nccllens.report import render

        return render(self, "md", **options)

    def to_text(self, **options: Any) -> str:
        from nccllens.report import render

        return render(self, "text", **options)
