"""Horovod's stall inspector (family ``horovod``): the ranks a collective waits for.

Horovod's coordinator (rank 0) checks every ``HOROVOD_STALL_CHECK_TIME_SECONDS`` (60 s by default) for
tensors that some ranks submitted and others did not, and names the missing ones:

- ≤ 0.19 (``operations.cc``): ``[<time>: W horovod/common/operations.cc:588] <tensor> [missing ranks: 1, 3]``,
  after the head line ``One or more tensors were submitted to be reduced, gathered or broadcasted by subset
  of ranks and are waiting for remainder of ranks for more than 60 seconds. …`` and ``Stalled ops:``;
- ≥ 0.20 (``stall_inspector.cc``): the same head line, then ``Stalled ranks:`` (``Missing ranks:`` in some
  builds) and one ``<rank>: [<tensors>]`` line per missing rank (``<rank>!:`` when that rank is shutting down);
- 0.11 and older: the head line ends in ``Stalled ops: <tensor> [ready ranks: 0, 2, …]`` on the same line, or
  the ops follow on lines of their own; the missing ranks are the gaps in the ready set (ranks above the
  highest ready rank cannot be told).

Each gives a ``horovod.stall`` event whose ``peer`` is the missing ranks (``rank 1``, ``ranks 1, 3``) when
the line names them; the tensor is the ``key``. Mixed-in ``mpirun --tag-output`` prefixes (``[1,0]<stderr>:``
in the middle of a line, where two writes interleaved) are taken out first.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime

from nccllens import lazy_regex
from nccllens.parse.base import FileContext, Line, event_for
from nccllens.parse.torch_patterns import ranks_list

FAMILY = "horovod"

# horovodrun --prefix-output-with-timestamp puts time.asctime() before its tag: "Fri Oct 23 17:16:00 2020[0]<stderr>:"
_ASCTIME = r"(?:[A-Z][a-z]{2} [A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d \d{4})?"
PREFILTER = (r"\[missing ranks: [\d, ]+\]|waiting for remainder of ranks for more than \d+ seconds"
             r"|^(?:" + _ASCTIME + r"\[\d+(?:,\d+)?\]<(?:stdout|stderr)>:)?Missing ranks:\s*$"
             r"|^(?:" + _ASCTIME + r"\[\d+(?:,\d+)?\]<(?:stdout|stderr)>:)?Stalled ranks:\s*$")  # whole words: "ranks:" alone is in every log

_TAG = lazy_regex.compile(_ASCTIME + r"\[\d+(?:,\d+)?\]<(?:stdout|stderr)>:")  # mpirun --tag-output, horovodrun
_MISSING = lazy_regex.compile(r"(?P<key>[^\s\]]*)\s*\[missing ranks: (?P<ranks>\d+(?:,\s*\d+)*)\]")
_HEAD = lazy_regex.compile(r"waiting for remainder of ranks for more than (?P<s>\d+) seconds")
_TS = lazy_regex.compile(r"\[(?P<ts>\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d+): [WEI] ")
_READY = lazy_regex.compile(r"(?P<key>[^\s\]]*)\s*\[ready ranks: (?P<ranks>\d+(?:,\s*\d+)*)\]")
_RANK_LINE = lazy_regex.compile(r"^\s*(?:\d+:\s*)?(?P<rank>\d+)!?: \[(?P<key>[^\]]*)\]?")  # "1: [tensors]" (maybe labelled)


def _time(body: str) -> dict:
    m = _TS.search(body)
    if not m:
        return {}
    try:
        return {"ts": datetime.strptime(m["ts"][:26], "%Y-%m-%d %H:%M:%S.%f"), "ts_kind": "absolute"}
    except ValueError:
        return {}


def _listed_ranks(line: Line, ctx: FileContext) -> tuple[list[str], str | None]:
    """The ranks of the ``<rank>: [<tensors>]`` lines after a ``Missing ranks:`` line (≥ 0.20). When the
    listed ranks miss different tensors, each side submitted one the other did not: the ranks went down
    different paths, and the smaller side (its tensors) is the one that differs."""
    listed: list[tuple[str, str]] = []
    for nxt in ctx.lines_after(line, 16):
        m = _RANK_LINE.match(_TAG.sub("", nxt.raw))
        if not m:
            break
        listed.append((m["rank"], m["key"].strip()))
    sides: dict[str, list[str]] = {}
    for rank, tensors in listed:
        sides.setdefault(tensors, []).append(rank)
    if len(sides) > 1:
        small = sorted(sides.values(), key=len)
        if len(small[0]) < len(small[1]):
            listed = [(r, t) for r, t in listed if r in small[0]]
    key = next((t.split(",")[0].strip() for _, t in listed if t.split(",")[0].strip()), None)
    return [r for r, _ in listed], key


def _not_ready(body: str) -> tuple[list[int], str | None]:
    """The ranks missing from the ``[ready ranks: …]`` lists of an old stall line: the gaps below the highest
    ready rank (the world size is not printed), and the first stalled tensor."""
    found = list(_READY.finditer(body))
    if not found:
        return [], None
    ready = {int(r) for m in found for r in m["ranks"].replace(" ", "").split(",")}
    return sorted(set(range(max(ready) + 1)) - ready), found[0]["key"] or None


def _ready_lines(line: Line, ctx: FileContext) -> list[Line]:
    """The ``<tensor> [ready ranks: …]`` lines right after an old stall head (up to the first other line)."""
    found = []
    for nxt in ctx.lines_after(line, 16):
        if not _READY.search(nxt.raw):
            break
        found.append(nxt)
    return found


def _event(line: Line, ctx: FileContext) -> dict | None:
    body = _TAG.sub("", line.message).strip()
    m = _MISSING.search(body)
    if m:
        return event_for(line, "horovod.stall", peer=ranks_list(m["ranks"]), key=m["key"] or None, level="warning",
                         message=body, **_time(body))
    head = _HEAD.search(body)
    if head:
        gaps, key = _not_ready(body)
        if not gaps:  # the stalled ops listed on the lines after the head ("<tensor> [ready ranks: …], ")
            gaps, key = _not_ready(" ".join(_TAG.sub("", nxt.raw) for nxt in _ready_lines(line, ctx)))
        extra = {"peer": ranks_list(" ".join(map(str, gaps))), "key": key} if gaps else {}
        return event_for(line, "horovod.stall", timeout_ms=int(head["s"]) * 1000, level="warning",
                         message=body, **extra, **_time(body))
    if body in ("Missing ranks:", "Stalled ranks:"):
        nums, key = _listed_ranks(line, ctx)
        if nums:
            return event_for(line, "horovod.stall", peer=ranks_list(" ".join(nums)), key=key, level="warning", message=body)
    return None


def parse(lines: list[Line], ctx: FileContext) -> Iterator[dict]:
    for line in lines:
        try:
            event = _event(line, ctx)
        except Exception:  # noqa: BLE001 - one odd line must not cost the file its events
            continue
        if event is not None:
            event["family"] = FAMILY
            yield event
