"""A wrapper that reports success after a failed launch (the exit status was swallowed)."""

from __future__ import annotations

import polars as pl

from nccllens.analyses.common import make_finding
from nccllens.report.model import Finding

FAILED = pl.col("kind").is_in(["torchrun.failure", "torchrun.root_cause", "torchrun.worker_failed"]) | (
    pl.col("exc_type").cast(pl.String).fill_null("").str.ends_with("ChildFailedError"))
SUCCESS_TEXT = (r"(?i)\btraining (?:is )?(?:finished|completed?|done)\b|\b(?:finished|completed) successfully\b"
                r"|\bjob (?:finished|completed|succeeded|done)\b|\bexit(?:ed)?(?: with)?(?: code| status)?:? 0\s*$")
SUCCEEDED = ((pl.col("kind") == "torchrun.state") & (pl.col("value").fill_null("") == "SUCCEEDED")) | (
    pl.col("kind").cast(pl.String).str.starts_with("slurm.") & (pl.col("exit_code") == 0)) | (
    pl.col("message").fill_null("").str.contains(SUCCESS_TEXT))


def masked_exit(events: pl.DataFrame, lang: str) -> list[Finding]:
    failed = events.filter(FAILED).group_by("file").agg(pl.col("line").min().alias("failed_at"))
    if not failed.height:
        return []
    later = (events.join(failed, on="file").filter(SUCCEEDED & (pl.col("line") > pl.col("failed_at")))
             .sort(["file", "line"]))
    out = []
    for (path,), group in later.group_by(["file"], maintain_order=True):
        first_fail = events.filter((pl.col("file") == path) & FAILED).sort("line").head(1)
        evidence = pl.concat([first_fail, group.head(1).select(events.columns)])
        hosts = evidence["host"].drop_nulls().unique().to_list()
        out.append(make_finding("AN-MASKED-EXIT", lang, evidence, hosts=hosts, file=path,
                                success=group["message"][0][:160]))
    return out
