"""What every analysis shares: its texts (data in texts.toml), finding construction, majority votes."""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable, Mapping
from functools import cache
from importlib import resources
from typing import Any

import polars as pl

from nccllens import cache_files
from nccllens.engine.findings import compact_ranks, evidence_of, interpolate
from nccllens.engine.peers import target_of
from nccllens.parse.torch_classify import DESYNC_JOINED
from nccllens.repeats import lines_of
from nccllens.report.model import Finding

# Analyses that say WHERE a failure shows (which rank is absent or silent), not WHY: any cause on
# the same rank or host (an Xid, an OOM kill, an exception) explains them.
LOCATORS = ("AN-COLLECTIVE-ABSENT", "AN-SILENT-RANK", "AN-FLIGHT-MISSING", "AN-FLIGHT-LATE", "AN-FLIGHT-GLOO-BEHIND",
            "AN-FLIGHT-NO-DUMP", "AN-FRTRACE-MISSING-RANKS", "AN-FRTRACE-MISSING-DUMPS", "AN-OPCOUNT-BEHIND",
            "AN-PROGRESS-STOPPED")


@cache
def texts() -> dict[str, dict[str, Any]]:
    """The analyses' texts; parsed from TOML once per version of the file, then read as JSON from the cache."""
    data = resources.files("nccllens.analyses").joinpath("texts.toml").read_bytes()
    return cache_files.kept("texts", data, _parse)


def _parse(data: bytes) -> dict[str, dict[str, Any]]:
    try:  # here: a run that finds the texts in the cache does not load the parser
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib
    return tomllib.loads(data.decode("utf-8"))


def spec(analysis_id: str) -> dict[str, Any]:
    return texts()[analysis_id]


class PerLang(dict):
    """A placeholder value that reads differently per language: ``PerLang(en="yes", zh="是")``."""


NONE = PerLang(en="none", zh="无")  # an empty list in prose, never a bare "-"
# what the logs did not state, in prose (never a bare "?")
UNNAMED_OP = PerLang(en="an operation the logs do not name", zh="日志未写明的操作")
NOT_STATED = PerLang(en="not stated", zh="未写明")
SOME_RANKS = PerLang(en="ranks the logs do not name", zh="日志未写明的 rank")


def _in(vals: dict, lang: str) -> dict:
    return {k: (v.get(lang) or v.get("en")) if isinstance(v, PerLang) else v for k, v in vals.items()}


def make_finding(analysis_id: str, lang: str, evidence: pl.DataFrame, *, ranks=(), hosts=(), first_seen=None,
                 confidence: float | None = None, category: str | None = None, **values) -> Finding:
    """A Finding for one analysis result; ``values`` fill the ``{placeholders}`` of its texts."""
    s = spec(analysis_id)
    text = s.get(lang) or s["en"]
    ranks = sorted({int(r) for r in ranks})
    hosts = sorted({str(h) for h in hosts if h})
    evidence = evidence.sort(["ts", "file", "line"], nulls_last=True) if evidence.height else evidence
    if first_seen is None and evidence.height:
        first_seen = evidence["ts"].drop_nulls().min()
    vals = {"ranks": compact_ranks(ranks) if ranks else None, "hosts": ", ".join(hosts) if hosts else None,
            "count": lines_of(evidence), "file": _own_file(evidence, ranks), **values}
    return Finding(
        id="", rule=analysis_id, category=category or s["category"], severity=s["severity"], role=s["role"],
        confidence=round(confidence if confidence is not None else s["confidence"], 2),
        title=interpolate(text["title"], _in(vals, lang)), summary=interpolate(text["summary"].strip(), _in(vals, lang)),
        remediation=interpolate(text["remediation"].strip(), _in(vals, lang)), ranks=ranks, hosts=hosts,
        first_seen=first_seen.isoformat() if hasattr(first_seen, "isoformat") else first_seen,
        evidence=evidence_of(evidence), explains=list(s.get("explains", [])), count=lines_of(evidence),
        texts={other: {"title": interpolate(s[other]["title"], _in(vals, other)),
                       "summary": interpolate(s[other]["summary"].strip(), _in(vals, other)),
                       "remediation": interpolate(s[other]["remediation"].strip(), _in(vals, other))}
               for other in ("en", "zh") if other != lang and other in s},
    )


def _own_file(evidence: pl.DataFrame, ranks: list[int]) -> str | None:
    """The file an unknown host of the finding can be named by ("the node that wrote <file>"): the
    evidence's first file, when the evidence is the culprit ranks' own (not their waiting peers')."""
    if not evidence.height:
        return None
    seen = set(evidence["rank"].drop_nulls().to_list())
    return str(evidence["file"][0]) if not ranks or seen <= set(ranks) else None


def odd_side(ops: Mapping[int, Hashable]) -> tuple[list, Hashable, bool]:
    """The ranks that went their own way among ``ops`` (rank → the operation it ran), the operation the others
    ran, and whether a majority decided it. Without one, rank 0 alone on its side is the one (rank-0-only code
    paths: logging, checkpointing, evaluation, a decision taken on rank 0), else every rank; the others' operation
    is then named when they all ran one (else ``UNNAMED_OP``)."""
    top, odd = majority(ops)
    if top is not None:
        return odd, top, True
    ranks = [0] if 0 in ops and sum(1 for o in ops.values() if o == ops[0]) == 1 else sorted(ops)
    others = {o for r, o in ops.items() if r not in ranks}
    return ranks, next(iter(others)) if len(others) == 1 else UNNAMED_OP, False


def majority(values: Mapping[Hashable, Hashable]) -> tuple[Hashable | None, list]:
    """The value most keys agree on and the keys that differ; (None, all keys) on a tie."""
    if not values:
        return None, []
    counts = Counter(values.values()).most_common()
    if len(counts) == 1:
        return counts[0][0], []
    if counts[0][1] == counts[1][1]:
        return None, sorted(values)
    top = counts[0][0]
    return top, sorted(k for k, v in values.items() if v != top)


def summary_evidence(rows: pl.DataFrame) -> pl.DataFrame:
    """Summary rows (``nccllens.summaries``) as evidence: each group's last line, where and when it was."""
    rank = pl.col("member") if "member" in rows.columns else pl.col("rank")
    return rows.select(pl.col("file"), pl.col("last_line").alias("line"), pl.col("raw"),
                       pl.lit(None, pl.String).alias("message"), rank.cast(pl.Int32).alias("rank"), pl.col("host"),
                       pl.col("last_ts").alias("ts"))


ALIVE_LINES = 2  # lines after a summary group's last line that show its process went on


def alive_after(summaries: pl.DataFrame, events: pl.DataFrame, rows: pl.DataFrame) -> set[int]:
    """The ranks (``member``) of summary ``rows`` that were still alive after their group's last line: their
    file goes on for ``ALIVE_LINES`` more lines, or their training progress is later than that line."""
    ends = events.filter(pl.col("kind") == "other.file_end").select("file", pl.col("line").alias("end"))
    later = rows.join(ends, on="file", how="left").filter(pl.col("end") >= pl.col("last_line") + ALIVE_LINES)
    alive = {int(r) for r in later["member"]}
    stamped = rows.select("member", pl.col("last_ts").alias("at")).drop_nulls()
    if stamped.height:
        prog = summaries.filter((pl.col("family") == "progress") & pl.col("rank").is_not_null())
        moved = prog.join(stamped, left_on="rank", right_on="member").filter(pl.col("at") < pl.col("last_ts"))
        alive |= {int(r) for r in moved["rank"]}
    return alive


def hosts_of(ranks, rank_hosts: Mapping[int, str]) -> list[str]:
    return sorted({rank_hosts[r] for r in ranks if r in rank_hosts})


def rank_list(ranks) -> str | PerLang:
    return compact_ranks(sorted(ranks)) if ranks else SOME_RANKS


def joined_ranks(events: pl.DataFrame) -> set[int]:
    """Ranks torch's desync report says entered the collective that timed out (``[0, 1] joined but didn't finish
    collective #730``): waiting in it, not late or elsewhere. The torch family states them as the report's ``peer``."""
    if not events.height:
        return set()
    reports = events.filter((pl.col("kind").cast(pl.String) == "torch.warning")
                            & (pl.col("key").cast(pl.String) == "desync_report")
                            & (pl.col("value").cast(pl.String) == DESYNC_JOINED))
    targets = (target_of(str(peer)) for peer in reports["peer"].drop_nulls().to_list())
    return {rank for target in targets if target is not None for rank in target.ranks}
