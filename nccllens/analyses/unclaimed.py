"""Failures that no rule claims still count: each becomes a low-confidence cause.

An error no rule knows (an NCCL return-code chain, a WARN with new text, an uncaught exception of a
type no rule lists, a native crash report) must never leave the verdict at "no failure". An unfamiliar NCCL
WARN that heads no failing return-code chain (NCCL warned, and no call failed after it) is a warning
symptom: it rules out "no failure" all the same, but names no cause. Its category
comes from the structured fields the parsers filled, never from a list of message texts: the NCCL
result code, the signal, the exception type, the errno-like words of a socket error.
"""

from __future__ import annotations

import polars as pl

from nccllens.analyses.common import make_finding
from nccllens.analyses.unclaimed_categories import RDMA, category_of, interrupted_wait, rdma_category
from nccllens.report.model import Finding

FALLBACK = "AN-UNCLAIMED"
SYMPTOM_ONLY = ("collective_timeout",)  # categories an unread line shows as a consequence, never as a cause
CONFIDENCE = 0.35

# the launcher's and the wrappers' report of a failure found elsewhere: never the failure itself
WRAPPERS = ("torchrun.failure", "torchrun.root_cause", "torchrun.worker_failed", "torchrun.sigterm_sent",
            "torchrun.signal_received", "torchrun.state", "torch.taking_down", "torch.dump", "nccl.teardown",
            "other.file_end", "flight.entry", "flight.pg_status")
WRAPPER_EXCEPTIONS = ("ChildFailedError", "SubprocessError", "CalledProcessError", "ProcessExitedException",
                      "ProcessRaisedException",
                      # a task or future cancelled because something else failed (asyncio, concurrent.futures)
                      "CancelledError")


def _failing(warns: bool) -> tuple[pl.Expr, pl.Expr]:
    """(the rows that show a failure, which of them say enough to be given a category): see ``failure_events``."""
    code = pl.col("error_code")
    chain = (pl.col("kind") == "nccl.backtrace") & code.is_between(1, 6)
    # an NCCL WARN no rule knows is a failure too: NCCL warns when a call is about to fail (known harmless
    # WARNs, such as a missing libibverbs on one node, are claimed by their rules as context)
    failing = pl.col("level").is_in(["error", "critical"]) | chain | (pl.lit(warns) & (pl.col("kind") == "nccl.warn"))
    exc = pl.col("exc_type").cast(pl.String).fill_null("")
    wrapper = pl.col("kind").is_in(WRAPPERS) | pl.any_horizontal(
        [exc.str.ends_with(name) for name in WRAPPER_EXCEPTIONS])
    # a traceback cut before its exception line, a terminate without what(): nothing to classify
    told = ((exc != "") | ~pl.col("kind").is_in(["python.traceback", "cpp.terminate"])) & (pl.col("kind") != "log.fragment")
    told = told & ~((pl.col("kind") == "cpp.terminate") & pl.col("message").str.starts_with("terminate called"))
    return failing & ~wrapper, told


def failure_events(events: pl.DataFrame, classifiable: bool = True, warns: bool = False) -> pl.DataFrame:
    """Rows that show a failure: errors and critical lines, and NCCL return-code chains of a failure;
    with ``classifiable``, only those that say enough to be given a category; with ``warns``, NCCL WARN lines
    too (the caller leaves out those a rule claimed: a known WARN may be harmless)."""
    failing, told = _failing(warns)
    return events.filter(failing & (told if classifiable else pl.lit(True)))


def failure_counts(events: pl.DataFrame) -> tuple[int, int]:
    """The heights of ``failure_events(events, False)`` and ``failure_events(events, True)``, in one query."""
    failing, told = _failing(False)
    every, classifiable = events.lazy().select(failing.sum().alias("every"), (failing & told).sum().alias("told")).collect().row(0)
    return int(every or 0), int(classifiable or 0)


CHAIN_GAP = 5  # lines between two rows of one NCCL error chain at most


def numbered_chains(events: pl.DataFrame) -> pl.DataFrame:
    """The NCCL WARN and return-code rows (``net.cc:1117 -> 6``), sorted, each numbered by its chain in
    ``_chain``: a chain is one WARN and the return-code lines after it, each within ``CHAIN_GAP`` lines of the
    one before in the same process (other threads of the process may print in between)."""
    nccl = events.filter(pl.col("kind").is_in(["nccl.warn", "nccl.backtrace"]))
    rows = (nccl.select(pl.col("file").cast(pl.String), pl.col("line").cast(pl.Int64), "pid",
                        pl.col("kind").cast(pl.String), "error_code").sort(["file", "line"]))
    gap = pl.col("line") - pl.col("line").shift(1).over(["file", "pid"])
    starts = (pl.col("kind") == "nccl.warn") | gap.is_null() | (gap > CHAIN_GAP)
    return rows.with_columns(starts.cum_sum().over(["file", "pid"]).alias("_chain"))


def chained_to(events: pl.DataFrame, claimed: pl.DataFrame) -> pl.DataFrame:
    """``(file, line)`` of the NCCL return-code chains (``net.cc:1117 -> 6``) that follow a claimed WARN of the
    same process: NCCL prints the WARN, then one ``-> code`` line per frame it unwinds, so the chain is that
    WARN's error, already explained by whatever claimed it."""
    if not claimed.height:
        return claimed.clear()
    chains = numbered_chains(events)
    if not chains.height:
        return claimed.clear()
    heads = chains.with_columns(pl.when(pl.col("kind").first() == "nccl.warn").then(pl.col("line").first())
                                .over(["file", "pid", "_chain"]).alias("head"))
    chains = heads.filter((pl.col("kind") == "nccl.backtrace") & pl.col("head").is_not_null())
    held = chains.join(claimed.unique(), left_on=["file", "head"], right_on=["file", "line"], how="semi")
    return held.select("file", "line")


FIELDS = ("kind", "family", "error_code", "signal", "exc_type", "message", "detail", "key")


def unclaimed_causes(events: pl.DataFrame, claimed: pl.DataFrame, lang: str, recognised: bool = False) -> list[Finding]:
    """One low-confidence cause per category of the failure lines that no finding claims; ``claimed``
    holds the (file, line) of every line a rule matched or a finding quotes. With a ``recognised`` cause
    found, a generic logger's ERROR line and an unfamiliar NCCL WARN say less than it: they only rule out
    "no failure" where nothing else does."""
    if not events.height:
        return []
    rows = failure_events(events, warns=not recognised)
    if recognised and rows.height:
        rows = rows.filter(pl.col("family").cast(pl.String).fill_null("") != "log")
    if not rows.height:
        return []
    claimed = pl.concat([claimed, chained_to(events, claimed)]).unique()
    rows = without_aborts_after_failure(_without_lines(rows, claimed), events)
    if not rows.height:
        return []
    # each distinct combination of the fields is classified once, however often it repeats
    distinct = rows.select([pl.col(c).cast(pl.String) if c in ("kind", "family", "signal", "exc_type") else pl.col(c)
                            for c in FIELDS]).unique()
    read = [category_of(r) for r in distinct.iter_rows(named=True)]
    if RDMA in read:  # settled once for the job: by which transport NCCL used
        settled = rdma_category(events)
        read = [settled if c == RDMA else c for c in read]
    categories = distinct.with_columns(pl.Series("_category", read, dtype=pl.String))
    rows = rows.with_columns([pl.col(c).cast(pl.String).alias(f"_k{c}") for c in ("kind", "family", "signal", "exc_type")])
    keys = [f"_k{c}" if c in ("kind", "family", "signal", "exc_type") else c for c in FIELDS]
    rows = (rows.join(categories, left_on=keys, right_on=list(FIELDS), how="left", nulls_equal=True)
            .drop([k for k in keys if k.startswith("_k")]))
    out = []
    groups = [(category, group.sort(["ts", "file", "line"], nulls_last=True))
              for (category,), group in rows.group_by("_category")]
    # the category whose first line came first leads (a stated time before none; then file and line order)
    groups.sort(key=lambda item: _first_key(item[1].row(0, named=True), str(item[0])))
    failed_heads = chain_heads(events)
    for category, group in groups:
        first = group.row(0, named=True)
        ranks = group["rank"].drop_nulls().unique().to_list()
        hosts = group["host"].drop_nulls().cast(pl.String).unique().to_list()
        finding = make_finding(FALLBACK, lang, group.drop("_category"), ranks=ranks, hosts=hosts,
                               category=category, confidence=CONFIDENCE, what=_what(first),
                               where=_where(ranks, hosts, first, lang), basis=_basis(first, lang))
        if _lone_warns(group, failed_heads):  # NCCL warned and no call failed after it: a sign, not the cause
            finding.severity, finding.role = "warning", "symptom"
        elif category in SYMPTOM_ONLY:  # a timeout says only that something else did not arrive
            finding.role = "symptom"
        out.append(finding)
    return out


ABORT = (pl.col("kind") == "cpp.signal") & (pl.col("signal").cast(pl.String) == "SIGABRT")


def without_aborts_after_failure(rows: pl.DataFrame, events: pl.DataFrame) -> pl.DataFrame:
    """``rows`` less the process aborts (SIGABRT: faulthandler's ``Fatal Python error: Aborted``, glibc's heap
    check, an uncaught C++ exception's ``abort()``) reported after a failure line of the same file: an abort
    is how a process ends once an error was raised (torch's watchdog aborts on purpose after a timeout), so
    the failure before it is the cause, not the abort. An abort with nothing failing before it stays."""
    aborts = rows.filter(ABORT)
    if not aborts.height:
        return rows
    failing, _ = _failing(False)
    firsts = (events.filter(failing & ~ABORT).group_by(pl.col("file").cast(pl.String))
              .agg(pl.col("line").cast(pl.Int64).min().alias("_first")))
    late = (aborts.select(pl.col("file").cast(pl.String), pl.col("line").cast(pl.Int64))
            .join(firsts, on="file").filter(pl.col("_first") < pl.col("line")).select("file", "line"))
    return _without_lines(rows, late) if late.height else rows


def _without_lines(rows: pl.DataFrame, lines: pl.DataFrame) -> pl.DataFrame:
    """``rows`` less those at the ``(file, line)`` of ``lines`` (string file, integer line)."""
    return (rows.with_columns(pl.col("file").cast(pl.String).alias("_f"), pl.col("line").cast(pl.Int64).alias("_l"))
            .join(lines, left_on=["_f", "_l"], right_on=["file", "line"], how="anti").drop("_f", "_l"))


def chain_heads(events: pl.DataFrame) -> pl.DataFrame:
    """``(file, line)`` of the NCCL WARNs that head a failing return-code chain (``-> 1`` .. ``-> 6`` within a
    few lines after the WARN, from the same process): the WARN of a call that failed."""
    chains = numbered_chains(events)
    if not chains.height:
        return pl.DataFrame(schema={"file": pl.String, "line": pl.Int64})
    failing = (pl.col("kind") == "nccl.backtrace") & pl.col("error_code").is_between(1, 6)
    heads = chains.group_by(["file", "pid", "_chain"]).agg(
        pl.col("line").filter(pl.col("kind") == "nccl.warn").first().alias("line"), failing.any().alias("failed"))
    return heads.filter(pl.col("failed") & pl.col("line").is_not_null()).select("file", "line")


FAILURE_WORDS = r"(?i)\berror\b|\bfail"  # a WARN that says it failed is a failure even without its chain (a cut paste)


def _lone_warns(group: pl.DataFrame, failed_heads: pl.DataFrame) -> bool:
    """Every line of ``group`` an NCCL WARN that heads no failing return-code chain and says no error."""
    if not (group["kind"].cast(pl.String) == "nccl.warn").all():
        return False
    if group["message"].cast(pl.String).fill_null("").str.contains(FAILURE_WORDS).any():
        return False
    keys = group.select(pl.col("file").cast(pl.String), pl.col("line").cast(pl.Int64))
    return not keys.join(failed_heads, on=["file", "line"], how="semi").height


def _first_key(row: dict, category: str) -> tuple:
    ts = row.get("ts")
    return (ts is None, ts.isoformat() if ts is not None else "", str(row.get("file") or ""), row.get("line") or 0, category)


RESULT_NAMES = {1: "ncclUnhandledCudaError", 2: "ncclSystemError", 3: "ncclInternalError", 4: "ncclInvalidArgument",
                5: "ncclInvalidUsage", 6: "ncclRemoteError"}


def _what(row: dict) -> str:
    if row.get("kind") == "nccl.backtrace" and row.get("error_code") in RESULT_NAMES:
        return f"NCCL call failed with {RESULT_NAMES[row['error_code']]} ({row['error_code']})"
    text = (row.get("message") or row.get("raw") or "").strip().splitlines()
    return (text[0] if text else str(row.get("kind")))[:160]


def _where(ranks: list, hosts: list, row: dict, lang: str) -> str:
    zh = lang == "zh"
    if ranks:
        shown = ", ".join(str(r) for r in sorted(ranks)[:8]) + (" …" if len(ranks) > 8 else "")
        place = f"rank {shown}"
        if hosts:
            place += (f"（{', '.join(sorted(hosts)[:4])}）" if zh else f" on {', '.join(sorted(hosts)[:4])}")
        return place
    if hosts:
        return ", ".join(sorted(hosts)[:4])
    return (f"写出 {row['file']} 的进程" if zh else f"the process that wrote {row['file']}")


def _basis(row: dict, lang: str) -> str:
    zh = lang == "zh"
    waiting = interrupted_wait(row)
    if waiting:
        function = waiting[1]
        return (f"中断（Ctrl-C）发生时进程正卡在 {function} 里等待：作业在这里挂住了，中断只是有人对挂起的反应；这"
                if zh else f"interrupt (Ctrl-C) came while the process waited in {function}: the job hung there and "
                "the interrupt was someone's reaction to the hang; that")
    if (row.get("kind") or "").startswith("nccl.") and row.get("error_code") is not None:
        return f"NCCL 返回码 {row['error_code']}" if zh else f"NCCL result code {row['error_code']}"
    if row.get("signal"):
        return f"信号 {row['signal']}" if zh else f"signal {row['signal']}"
    if row.get("exc_type"):
        return f"异常类型 {row['exc_type']}" if zh else f"exception type {row['exc_type']}"
    return "报错内容" if zh else "the error's wording"
