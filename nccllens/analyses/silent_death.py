"""A worker that died without a word: the launcher tore the job down, and no process said why.

torchrun sends the remaining workers SIGTERM ("Sending process N closing signal SIGTERM") and DeepSpeed's
launcher kills them ("Killing subprocess N") only once a worker has ended. A worker that ends on an
exception prints its traceback first, and one that exits with a code shows it in the launcher's failure
table; a worker that leaves neither was ended by a signal it could not catch, SIGKILL, whose most common
sender is the kernel's OOM killer or a container's memory limit. When the logs hold the teardown and no
error line of any process, that is a suspected host OOM, at low confidence: the node's dmesg, or the
worker's own output, decides.
"""

from __future__ import annotations

import polars as pl

from nccllens.analyses.common import PerLang, make_finding
from nccllens.report.model import Finding

TEARDOWN_RULES = ("NL-JOB-004", "NL-JOB-035")  # the launcher stopping the workers that were still running


def silent_worker_death(findings: list[Finding], events: pl.DataFrame, lang: str) -> list[Finding]:
    """The suspicion, when a launcher's teardown is all the logs show of a failure."""
    if not events.height or any(f.role == "cause" for f in findings):
        return []
    teardown = [f for f in findings if f.rule in TEARDOWN_RULES]
    if not teardown or events.filter(pl.col("level").is_in(["error", "critical"])).height:
        return []  # an error line says how the worker ended: that finding, or the unclaimed one, is the story
    quoted = {(e.file, e.line) for f in teardown for e in f.evidence}
    evidence = events.filter(pl.struct(pl.col("file").cast(pl.String), pl.col("line").cast(pl.Int64))
                             .is_in([{"file": f, "line": n} for f, n in sorted(quoted)]))
    hosts = sorted({h for f in teardown for h in f.hosts})
    files = sorted({e.file for f in teardown for e in f.evidence})
    place = PerLang(en=", ".join(hosts) if hosts else f"the node that wrote {files[0]}",
                    zh=", ".join(hosts) if hosts else f"写出 {files[0]} 的节点")
    return [make_finding("AN-SILENT-WORKER-DEATH", lang, evidence, hosts=hosts, place=place)]
