"""Signs of life: progress bars and per-step lines (family ``progress``).

A rank that never reached the collective its peers time out in may be dead, on another code path, or
alive and busy (tokenising, evaluating, preparing data, a slow step). Progress lines tell the last case
apart; they are otherwise ignored, so this family runs last and takes only lines nobody else claimed.

- ``progress.bar``: a tqdm-style bar ``Running tokenizer on dataset:   9%|███▊ | 280000/2969526
  [29:55<4:48:08, 155.57 examples/s]`` (also Keras/HF ``Map (num_proc=64):  45%|...``, and a bar format
  without the bar itself, ``mAP@.5:.95:  72% 23/32 [01:07<00:25,  2.80s/it]``, known by its ``[elapsed<left``; and
  OpenMMLab's ``[>>>>>>     ] 1126168/1426764, 137.6 task/s, elapsed: 8183s, ETA:  2184s``). With ``\\r``
  updates many bars share one line: the last one counts. ``value`` = percent, ``key`` = the bar's label,
  ``seq`` = items done, ``nranks`` = none, ``detail`` = ``n/total [elapsed<left]``, ``elapsed_ms``.
- ``progress.step``: a line that counts steps or iterations and states how long their work took
  (``[rank 3] step 4/10 compute 0.60s sync_wait 0.03s``, ``iter 50 | time (ms) | forward: 123.4``); lines
  that only count steps are not read: "step" and "iter" are in nearly every line of a training log, and
  the coarse pass could then skip nothing:
  ``seq`` = the step, ``detail`` = the durations it states as ``label=seconds`` pairs (``compute=0.6
  sync_wait=0.03``), ``key`` = the total steps when stated.

- ``progress.count``: work in hand counted without a bar (``[rank 2] preparing shard: part 5/12``,
  ``Loading checkpoint shards 3/8``): ``key`` = what, ``seq`` = items done, ``value`` = percent (100 when
  the line says done), ``detail`` = ``n/total``.
- ``progress.finished``: the job says it finished (DeepSpeed's ``Process 123 exits successfully.``, HF's
  ``Training completed. ``, Lightning's ```Trainer.fit` stopped: ``, Ray's job CLI ``Job 'raysubmit_…' succeeded``,
  LSF's ``Successfully completed.``).
- ``progress.bench_start`` / ``progress.bench_table`` / ``progress.bench_row`` / ``progress.bench_done``: nccl-tests'
  ``# nThread 1 nGpus 2 minBytes …`` banner (its ``#`` often lost in a paste) and ``# Using devices`` header, the column header (``out-of-place  in-place``) it prints once its communicators are up, each result row (``seq`` = the size in bytes) and its ``# Avg bus bandwidth`` / ``# Out of bounds``
  summary: a header without rows on one node is a test stuck in its first collective.
- ``progress.bench_wrong`` (level error): the summary ``# Out of bounds values : 56 FAILED``: the test checked the
  collectives' results and ``value`` of them were wrong (it ran to its end, with wrong data).
- ``progress.bench_failure`` (level error): the failed call nccl-tests stops at (``host: Test CUDA failure
  common.cu:941 'system not yet initialized'``): ``host``, ``key`` = CUDA or NCCL, ``value`` = the error text.
- ``progress.bench_rank``: a ``#  Rank  0 Group  0 Pid  9822 on host device  0 [...]`` line of that header
  (``rank``, ``host``, ``pid``): who takes part and where; NCCL 1.x's ``   Rank  0 uses device  0 [0x05] ...``
  (one process drives every GPU: no pid, no host). 1.x marks its header lines with ``>`` instead of ``#``.

A rank stated in the message itself (``[rank 3]``, ``rank 3:``, ``[Rank 3]``) wins over the path's.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from nccllens import lazy_regex
from nccllens.parse.base import FileContext, Line, event_for

FAMILY = "progress"
# the job's own last word: launchers' and trainers' success lines (DeepSpeed's launcher per process, HF Trainer,
# Lightning, NeMo), the job systems' (Ray's job CLI "Job 'raysubmit_...' succeeded", LSF's job report "Successfully
# completed."), and a script's bare "training finished" ending the line (so "training finished with errors" or
# "training finished step 3" is not one). Not Megatron's "[after training is done]": it comes before the final
# checkpoint save and evaluation, where a job can still fail. The training scripts of DeiT, DINO, MAE, ConvNeXt and
# the many built on them end with the total time of the run, alone on its line ("Training time 0:08:52").
_FINISHED = (r"Process (?P<pid>\d+) exits successfully|Training completed\. |`Trainer\.fit` stopped: "
             r"|^Job '[\w-]+' succeeded\s*$|^Successfully completed\.\s*$"
             r"|[Tt]raining (?:finished|complete[d.]?|done)\s*[.!]?\s*$|[Ff]inished [Tt]raining\b"
             r"|^Training time (?:\d+ days?, )?\d+:\d\d:\d\d(?:\.\d+)?\s*$")
# one branch per last digit of the percent: "7%|" is a literal the coarse pass can filter with
PREFILTER = ("|".join(f"{d}%\\|[^|]*\\|\\s*\\d" for d in range(10)) + r"|\d%\s+\d+/\d+\s*\[\d+:\d+<|\d task/s, elapsed: \d+s|\b(?:compute|forward|backward|fwd|bwd|data_time|dataloading|data_loading)\b[^\n]{0,24}?\d\s*(?:ms|s)\b"
             r"|[#>] Using devices|n?Thread \d+ nGpus \d+ minBytes \d+ maxBytes|Pid\s+\d+\s+on\s+\S+\s+device\s+\d+\s+\[|# Avg bus bandwidth|# Out of bounds values|Out of bounds values\s*:\s*\d+\s+FAILED|[#>]\s+out-of-place\s+in-place"
             r"|^\s+Rank\s+\d+\s+uses device\s+\d+\s+\["
             r"|Test (?:CUDA|NCCL) failure \S+:\d+ '"
             r"|" + re.sub(r"\(\?P<\w+>", "(?:", _FINISHED) +
             r"|(?:reparing|oading|rocessing|okeniz|valuat|alidat|uilding|ndexing|onverting)[^\n]{0,60}?\b\d+ ?/ ?\d+\b"
             r"|\d\s+(?:float|half|bfloat16|double|int8|uint8|int32|uint32|int64|uint64)\s+(?:sum|prod|min|max|avg|none)\s")
FINISHED = lazy_regex.compile(_FINISHED)
# work in hand, counted: "[rank 2] preparing shard: part 5/12", "Loading checkpoint shards 3/8"
COUNT = lazy_regex.compile(r"(?P<what>\b\w*(?:reparing|oading|rocessing|okeniz|valuat|alidat|uilding|ndexing|onverting)\w*\b"
                   r"[^\n]{0,60}?)\b(?P<n>\d+) ?/ ?(?P<total>\d+)\b(?P<rest>.*)$")
# nccl-tests: the header that starts the measurement, each result row, and the summary that ends it
BENCH = lazy_regex.compile(r"^[#>] (?P<start>Using devices)|(?:^|[#>] )(?P<banner>n?Thread \d+ nGpus \d+ minBytes \d+ maxBytes)|^# (?P<done>Avg bus bandwidth|Out of bounds values)"
                   r"|^[#>]\s+(?P<table>out-of-place)\s+in-place"
                   r"|^\s*(?P<size>\d+)\s+\d+\s+(?:float|half|bfloat16|double|int8|uint8|int32|uint32|int64|uint64)"
                   r"\s+(?:sum|prod|min|max|avg|none)\s")

# nccl-tests' verdict on the data it checked: "# Out of bounds values : 56 FAILED" (``OK`` with 0)
BENCH_WRONG = lazy_regex.compile(r"Out of bounds values\s*:\s*(?P<n>\d{1,12})\s+FAILED")
# nccl-tests stops at the first failed call: "host: Test CUDA failure common.cu:941 'system not yet initialized'"
# (glued to a result row's columns when it fails mid-row)
BENCH_FAILURE = lazy_regex.compile(r"(?:(?<=\s)|^)(?:(?P<host>[A-Za-z0-9][\w.-]*): )?Test (?P<lib>CUDA|NCCL) failure "
                                   r"(?P<src>[\w./-]+:\d+) '(?P<msg>[^']*)'?")
BENCH_RANK = lazy_regex.compile(r"^[#>]?\s*Rank\s+(?P<rank>\d{1,7})\s+(?:Group\s+\d+\s+)?Pid\s+(?P<pid>\d{1,9})\s+on\s+(?P<host>\S+)"
                        r"\s+device\s+(?P<dev>\d+)"
                        # NCCL 1.x's tests drive every GPU from one process: "   Rank  0 uses device  0 [0x05] Tesla M40"
                        r"|^\s+Rank\s+(?P<rank1>\d{1,7})\s+uses device\s+(?P<dev1>\d+)\s+\[")

BAR = lazy_regex.compile(
    r"(?P<desc>[^|\r%]{0,80}?)\s*:?\s*(?P<pct>\d{1,3})%(?:\|[^|\r]*\|\s*|\s+(?=[\d.]+[kMG]?/[\d.]+[kMG]?\s*\[[\d:]+<))"
    r"(?P<n>[\d.]+[kMG]?)/(?P<total>[\d.]+[kMG]?)(?:\s*\[(?P<elapsed>[\d:]+)(?:<(?P<left>[\d:?]+))?|\s+(?P<clock>\d+:\d\d(?::\d\d)?)\b)")
# a bar another writer cut off before its counts (``...:   6%|▋ [E ProcessGroupNCCL.cpp:414] Some NCCL ...``)
CUT_BAR = lazy_regex.compile(r"^(?P<desc>[^|\r%]{0,300}?)\s*:?\s*(?P<pct>\d{1,3})%\|[^|\r\[]{0,40}(?=\[)")
STEP = lazy_regex.compile(r"\b(?:step|iter(?:ation)?)\b\s*[:=#]?\s*(?P<step>\d+)(?:\s*/\s*(?P<total>\d+))?", re.I)
DURATION = lazy_regex.compile(
    r"(?P<label>[A-Za-z][\w.]*(?:[ _-][A-Za-z][\w.]*)?)\s*(?:\((?P<unit0>ms|s)\))?\s*[:=]?\s*"
    r"(?P<num>\d+(?:\.\d+)?)\s*(?P<unit>ms|s|sec|secs|seconds)?(?![\w.])")
OWN_RANK = lazy_regex.compile(r"^\s*\[?\s*(?:global[ _])?rank\s*[:=]?\s*(?P<r>\d+)\s*\]?\s*[:|]?", re.I)
SECONDS = {"ms": 0.001, "s": 1.0, "sec": 1.0, "secs": 1.0, "seconds": 1.0}
NOT_TIMES = ("step", "iter", "iteration", "epoch", "rank", "loss", "lr", "batch")


def clock_ms(text: str | None) -> int | None:
    """``29:55`` / ``4:48:08`` → milliseconds."""
    if not text or "?" in text:
        return None
    parts = [int(p) for p in text.split(":") if p.isdigit()]
    seconds = 0
    for p in parts:
        seconds = seconds * 60 + p
    return seconds * 1000


# OpenMMLab's (mmcv, mmengine) ProgressBar: "[>>>>>     ] done/total, rate task/s, elapsed: Ns, ETA: Ns"
MM_BAR = lazy_regex.compile(r"\[[> ]{2,}\] (?P<n>\d+)/(?P<total>\d+), [\d.]+ task/s, elapsed: (?P<elapsed_s>\d+)s"
                            r"(?:, ETA:\s*(?P<left_s>\d+)s)?")


def _clock(seconds: str | None) -> str | None:
    """``8183`` (seconds) → ``2:16:23``, the clock a tqdm bar shows."""
    if seconds is None:
        return None
    s = int(seconds)
    return f"{s // 3600}:{s % 3600 // 60:02d}:{s % 60:02d}" if s >= 3600 else f"{s // 60:02d}:{s % 60:02d}"


class MMBar:
    """An OpenMMLab bar read as a tqdm bar's match: the same group names (``desc``, ``pct``, ``n``, ``total``,
    ``elapsed``, ``left``, ``clock``), ``group(0)`` and ``end()``."""

    def __init__(self, m: re.Match, text: str) -> None:
        self._m = m
        start = text.rfind("\n", 0, m.start()) + 1
        self._groups = {"desc": text[start:m.start()], "pct": str(min(100, 100 * int(m["n"]) // max(1, int(m["total"])))),
                        "n": m["n"], "total": m["total"], "elapsed": _clock(m["elapsed_s"]), "left": _clock(m["left_s"]),
                        "clock": None}

    def __getitem__(self, name: str) -> str | None:
        return self._groups[name]

    def group(self, index: int = 0) -> str:
        return self._m.group(index)

    def end(self) -> int:
        return self._m.end()


def last_bar(text: str) -> re.Match | MMBar | None:
    """The last bar on a line (``\r`` updates put many on one line)."""
    bars = list(BAR.finditer(text))
    if bars:
        return bars[-1]
    mm = list(MM_BAR.finditer(text))
    return MMBar(mm[-1], text) if mm else None


def bar_detail(bar: re.Match) -> str:
    """``n/total [elapsed<left]`` of a bar (YOLO's ``n/total elapsed`` written the same way)."""
    return f"{bar['n']}/{bar['total']} [{bar['elapsed'] or bar['clock']}<{bar['left'] or '?'}]"


def durations(text: str) -> list[tuple[str, float]]:
    """(label, seconds) for every duration a step line states with a unit (``compute 0.60s``,
    ``forward: 123.4`` after ``time (ms)``)."""
    out = []
    default = "ms" if re.search(r"time \(ms\)", text) else None
    for m in DURATION.finditer(text):
        unit = m["unit"] or m["unit0"] or default
        label = m["label"].strip().lower().replace(" ", "_").replace("-", "_")
        if not unit or label in NOT_TIMES or label.endswith(NOT_TIMES):
            continue
        out.append((label, float(m["num"]) * SECONDS[unit]))
    return out


def _own_rank(line: Line) -> int | None:
    m = OWN_RANK.match(line.message)
    return int(m["r"]) if m else None


def parse(lines: list[Line], ctx: FileContext) -> Iterator[dict]:
    for line in lines:
        text = line.message
        finished = FINISHED.search(text)
        if finished:
            yield event_for(line, "progress.finished", level="debug", message=text.strip()[:300],
                            pid=int(finished["pid"]) if finished["pid"] else None)
            continue
        failed = BENCH_FAILURE.search(text)
        if failed:
            yield event_for(line, "progress.bench_failure", level="error", message=failed.group(0).strip()[:300],
                            host=failed["host"] or None, key=failed["lib"], value=failed["msg"].strip(" /"),
                            detail=failed["src"])
            continue
        member = BENCH_RANK.search(text)
        if member:
            yield event_for(line, "progress.bench_rank", level="debug", message=text.strip()[:300],
                            rank=int(member["rank"] or member["rank1"]), host=member["host"],
                            pid=int(member["pid"]) if member["pid"] else None)
            continue
        wrong = BENCH_WRONG.search(text) if "FAILED" in text else None
        if wrong and int(wrong["n"]):
            yield event_for(line, "progress.bench_wrong", level="error", message=text.strip()[:300], value=wrong["n"])
            continue
        bench = BENCH.search(text)
        if bench:
            kind = ("progress.bench_start" if bench["start"] or bench["banner"] else "progress.bench_done" if bench["done"]
                    else "progress.bench_table" if bench["table"] else "progress.bench_row")
            yield event_for(line, kind, level="debug", message=text.strip()[:300],
                            seq=int(bench["size"]) if bench["size"] else None)
            continue
        count = None if last_bar(text) else COUNT.search(text)
        if count and not STEP.search(text):
            rank = _own_rank(line)
            done = int(count["n"]) >= int(count["total"]) or re.search(r"\b(?:done|finished|complete[d]?)\b", count["rest"], re.I)
            yield event_for(line, "progress.count", level="debug", message=text.strip()[:300],
                            key=" ".join(count["what"].split())[-60:] or None, seq=int(count["n"]),
                            value="100" if done else str(min(99, 100 * int(count["n"]) // max(1, int(count["total"])))),
                            detail=f"{count['n']}/{count['total']}", **({"rank": rank} if rank is not None else {}))
            continue
        if "step: " in text and "(factor)" in text:  # the nccl-tests banner's size step, not a training step
            continue
        rank = _own_rank(line)
        extra = {"rank": rank} if rank is not None else {}
        bar = last_bar(text)
        if bar:
            desc = bar["desc"].strip().strip(":").strip() or None
            yield event_for(line, "progress.bar", level="debug", message=text.strip()[-300:], value=bar["pct"], key=desc,
                            detail=bar_detail(bar), elapsed_ms=clock_ms(bar["elapsed"] or bar["clock"]), **extra)
            continue
        step = STEP.search(text)
        if step:
            rest = text[step.end():]
            times = durations(rest)
            yield event_for(line, "progress.step", level="debug", message=text.strip()[:300], seq=int(step["step"]),
                            key=step["total"],
                            detail=" ".join(f"{k}={v:g}" for k, v in times) or None, **extra)
