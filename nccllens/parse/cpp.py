"""C++ abort blocks: ``terminate called after throwing an instance of 'X'`` + ``what():`` + backtrace.

One ``cpp.terminate`` event per block: ``exc_type`` = X, ``message`` = the ``what()`` text (with its
continuation lines: NCCL's detail line, ``Last error:`` payload...), ``detail`` = where the exception
was raised and the function names of the ``frame #N:`` lines. When the ``what()`` text is a c10d
message (watchdog timeout, NCCL error, gloo failure...), the typed columns the torch family would
set for it (``seq``, ``op``, ``timeout_ms``, ``version``, ``peer``...) are set here too.

``read_backtrace`` is shared with the torch family, which folds the ``Exception raised from ...``
blocks that follow a c10d log line into that line's event.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from nccllens import lazy_regex
from nccllens.parse.base import FileContext, Line
from nccllens.parse.progress import last_bar

FAMILY = "cpp"
PREFILTER = (r"terminate called (?:after throwing an instance of|without an active exception)"
             r"|^\s*Exception raised from (?:\S*::)?(?:ncclCommWatchdog|watchdogHandler|checkTimeout) at ")

_TERMINATE = lazy_regex.compile(r"terminate called (?:after throwing an instance of '(?P<exc>[^']*)'?|without an active exception)")
_WHAT = lazy_regex.compile(r"^\s*what\(\):\s+(?P<text>.*)$")
_RAISED = lazy_regex.compile(r"^\s*Exception raised from (?P<func>\S+) at (?P<file>\S+?):(?P<line>\d+)")
_FRAME = lazy_regex.compile(r"^\s*frame #\d+: (?P<sym>.*?)(?: \+ 0x[0-9a-f]+)? \(0x[0-9a-f]+ in [^)]*\)\s*$")
_FRAME_LOOSE = lazy_regex.compile(r"^\s*frame #\d+: ")
_OMITTED = "<omitting python frames>"
# lines that start another record (another rank's print, a log header, a Python exception or traceback)
_NEW_RECORD = lazy_regex.compile(
    r"\[(?:rank|default)\d+\]|\(\w+ pid=\d+|\[?[IWEFC]\d{3,4} \d\d:|\[[IWEF] \S+:\d+\]|\[\d{4}-\d\d-\d\d |"
    r"(?:DEBUG|INFO|WARNING|ERROR|CRITICAL):|Traceback \(most recent call last\)|Fatal Python error|"
    r"[A-Za-z_][\w.]*(?:Error|Exception): "
)
_NOISE_FRAMES = {
    "c10::Error::Error", "c10::DistError::DistError", "c10::DistBackendError::DistBackendError",
    "c10::DistNetworkError::DistNetworkError", "c10::DistStoreError::DistStoreError",
    "c10::detail::torchCheckFail", "c10::detail::torchInternalAssertFail", "clone", "start_thread",
    "__libc_start_main", "_start", "__clone", "__clone3",
}
_FOLLOW_LINES = 160
_MAX_MESSAGE = 4000


def short_function(symbol: str) -> str | None:
    """``c10d::ProcessGroupNCCL::WorkNCCL::checkTimeout(std::optional<...>) + 0x1e1`` -> ``WorkNCCL::checkTimeout``."""
    symbol = symbol.strip()
    if not symbol or symbol.startswith("<unknown"):
        return None
    depth, cut = 0, len(symbol)
    for i, ch in enumerate(symbol):  # cut at the first "(" outside template brackets
        if ch == "<":
            depth += 1
        elif ch == ">":
            depth = max(0, depth - 1)
        elif ch == "(" and depth == 0 and i > 0:
            cut = i
            break
    name = symbol[:cut].strip()
    if name in _NOISE_FRAMES:
        return None
    name = re.sub(r"<.*>", "", name)  # drop template arguments
    parts = [p for p in name.split("::") if p]
    if not parts:
        return None
    return "::".join(parts[-2:])


def starts_backtrace(line: Line) -> bool:
    """Would ``read_backtrace`` read anything from a window that starts with ``line``?"""
    text = line.message
    return bool(_RAISED.match(text) or _FRAME_LOOSE.match(text)) or text.strip() == _OMITTED


def read_backtrace(following: list[Line], start: int = 0) -> tuple[int, list[str], list[str]]:
    """Read ``Exception raised from`` blocks and ``frame #N:`` lines from ``following[start:]``.

    Returns ``(next_index, raised, frames)``: ``raised`` as ``func (file:line)`` items, ``frames`` as
    short function names (duplicates dropped, order kept). Blank lines between two blocks are skipped.
    """
    i, raised, frames = start, [], []
    seen: set[str] = set()
    while i < len(following):
        text = following[i].message
        stripped = text.strip()
        m = _RAISED.match(text)
        if m:
            raised.append(f"{m['func']} ({m['file'].rsplit('/', 1)[-1]}:{m['line']})")
            i += 1
            continue
        if _FRAME_LOOSE.match(text):
            fm = _FRAME.match(text)
            name = short_function(fm["sym"] if fm else text.split(":", 1)[1])
            if name and name not in seen:
                seen.add(name)
                frames.append(name)
            i += 1
            continue
        if stripped == _OMITTED:
            i += 1
            continue
        if not stripped and raised:
            # a blank line ends a block; keep going only if another block follows
            j = i
            while j < len(following) and not following[j].message.strip():
                j += 1
            if j < len(following) and _RAISED.match(following[j].message):
                i = j
                continue
        break
    return i, raised, frames


def backtrace_detail(raised: list[str], frames: list[str]) -> str | None:
    parts = []
    if raised:
        parts.append("raised from: " + ", ".join(raised))
    if frames:
        parts.append("frames: " + ", ".join(frames))
    return "; ".join(parts) or None


def _what_text(following: list[Line]) -> tuple[int, str | None]:
    """Find ``what():`` in the first lines after ``terminate called`` and read its continuation."""
    for i, ln in enumerate(following[:4]):
        m = _WHAT.match(ln.message)
        if not m:
            continue
        parts = [m["text"].strip()]
        j = i + 1
        while j < len(following) and len(parts) < 40:
            text = following[j].message
            if not text.strip() or _RAISED.match(text) or _FRAME_LOOSE.match(text) or _TERMINATE.search(text):
                break
            if _NEW_RECORD.match(text) and not text.startswith("nccl"):
                break
            if last_bar(text):  # a progress bar redrawn after it: another writer, never the message's text
                break
            parts.append(text.strip())
            j += 1
        return j, "\n".join(parts)
    return 0, None


def parse(lines: list[Line], ctx: FileContext) -> Iterator[dict]:
    from nccllens.parse.torch_classify import classify, resolve_rank  # late: torch imports this module

    read_until = 0  # the last line a block read: its frames are not read again
    for line in lines:
        if line.line <= read_until:
            continue
        try:
            m = _TERMINATE.search(line.message)
            if not m:
                event = raised_event(line, ctx)
                if event is not None:
                    read_until = event.get("_last_line") or line.line
                    yield event
                continue
            following = ctx.following(line, _FOLLOW_LINES)
            j, what = _what_text(following)
            end, raised, frames = read_backtrace(following, j)
            event = {
                "family": FAMILY,
                "kind": "cpp.terminate",
                "level": "critical",
                "exc_type": m["exc"] or None,
                "message": (what or line.message[m.start():])[:_MAX_MESSAGE],
                "detail": backtrace_detail(raised, frames),
            }
            if what:
                found = classify(what)
                if found is not None:
                    rank = resolve_rank(found, line.rank)
                    if rank is not None:
                        event["rank"] = rank
                    for key, value in found.items():
                        if key not in ("kind", "level", "detail") and value is not None:
                            event.setdefault(key, value)
                    if found.get("detail") and not event["detail"]:
                        event["detail"] = found["detail"]
            if end:
                event["_last_line"] = following[end - 1].line  # what() and the frames are this event's
                read_until = event["_last_line"]
            yield event
        except Exception:  # never lose the file's other events
            continue


_WATCHDOG = lazy_regex.compile(r"ncclCommWatchdog|watchdogHandler|checkTimeout")


def raised_event(line: Line, ctx: FileContext) -> dict | None:
    """The NCCL watchdog's ``Exception raised from ncclCommWatchdog at <file>:<line>`` block whose log line
    and ``terminate called`` were not pasted (no other family's record took it): a collective failed or
    timed out, and where it was raised, with its frames."""
    m = _RAISED.match(line.message)
    if not m:
        return None
    following = ctx.following(line, _FOLLOW_LINES)
    end, raised, frames = read_backtrace([line, *following], 0)
    if not _WATCHDOG.search(" ".join([m["func"], *frames])):
        return None  # c10d also prints such stacks under warnings: only the watchdog's is a failure for sure
    event = {"family": FAMILY, "kind": "cpp.raised", "level": "error", "key": m["func"],
             "message": line.message.strip()[:_MAX_MESSAGE], "detail": backtrace_detail(raised, frames)}
    if end > 1:
        event["_last_line"] = following[end - 2].line
    return event
