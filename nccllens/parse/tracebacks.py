"""A Python traceback's lines → what it says: the exception (last of a chain, the first kept), the innermost
frames, and the C++ frames PyTorch prints inside the exception text.

Used by the python family (``parse.python``) and by every reader of a traceback another program wraps: the
torchrun failure table (``parse.torchrun_records``), its ``error.json`` (``parse.error_json``), and the analyses
that read frames from an event's detail (``traceback_frames``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from nccllens import lazy_regex

TRACEBACK_HEAD = lazy_regex.compile(r"^(?P<indent>\s*)Traceback \(most recent call last\):")
MAX_TRACEBACK_LINES = 200
MAX_EXCEPTION_TEXT_LINES = 60
KEPT_FRAMES = 3
KEPT_CPP_FRAMES = 6
# notes a traceback event's detail carries after its frames: C++ frames, the chain's first exception, the context
# manager being entered (all written by ``Traceback.detail``), where a cut traceback's exception was read from
# (``cut_tracebacks``)
DETAIL_NOTES = ("C++: ", "first: ", "entering: ", "cut: ")

# a wrapper that re-raises another process's exception and prints its traceback after its own line
# (DataLoader's "Caught X in DataLoader worker process N.", multiprocessing's spawn errors)
_ORIGINAL = lazy_regex.compile(r"^\s*Original Traceback \(most recent call last\):")
_FRAME = lazy_regex.compile(r'^\s+File "(?P<file>[^"]+)", line (?P<line>\d+)(?:, in (?P<func>.+))?$')
# a frame's source line that opens a ``with`` block on a call (``with args.main_process_first(desc=...):``): where the
# next frame is a context manager's ``__enter__``, that call's generator is what the frame was entering
_WITH_CALL = lazy_regex.compile(r"^\s*(?:async\s+)?with\s+(?:[\w.()\[\]]+\.)?(?P<name>[A-Za-z_]\w*)\(")
# Ray names the exception its task raised in brackets after its own: RayTaskError(ValueError): ...
_EXC = lazy_regex.compile(r"^(?P<type>(?:[A-Za-z_]\w*\.)*[A-Za-z_]\w*)(?:\((?P<inner>[A-Za-z_][\w.]*)\))?"
                          r"(?::(?: (?P<text>.*))?)?$")
_EXC_NAME = lazy_regex.compile(r"(?:Error|Exception|Exit|Interrupt|Warning)$")
_CHAIN = lazy_regex.compile(
    r"^(?:During handling of the above exception, another exception occurred:"
    r"|The above exception was the direct cause of the following exception:)"
)
_CPP_RAISED = lazy_regex.compile(r"Exception raised from (?P<func>\S+) at ")
_CPP_FRAME = lazy_regex.compile(r"^\s*frame #\d+: (?P<func>.+?)(?: \+ 0x[0-9a-f]+)?(?: \(0x[0-9a-f]+ in .*\))?$")
_CPP_NOISE = lazy_regex.compile(r"^(?:<unknown|_?Py|clone|start_thread|__libc|c10::Error::Error|c10::detail::)")


@dataclass
class Traceback:
    """What one (possibly chained) traceback says."""

    exc_type: str | None = None
    text: str = ""
    first: str | None = None  # first exception of a chain, as "Type: text"
    frames: list[str] = field(default_factory=list)  # "file:line in func", last segment only
    cpp: list[str] = field(default_factory=list)
    texts: list[str] = field(default_factory=list)  # every exception line of the chain
    entering: str | None = None  # the context manager (by its function's name) the last frames were entering
    consumed: int = 0  # how many of the given lines belong to the traceback

    @property
    def message(self) -> str | None:
        if not self.exc_type:
            return None
        return f"{self.exc_type}: {self.text}" if self.text else self.exc_type

    def detail(self) -> str | None:
        parts = list(self.frames[-KEPT_FRAMES:])
        if self.cpp:
            parts.append("C++: " + " < ".join(self.cpp[:KEPT_CPP_FRAMES]))
        if self.first and self.first != self.message:
            parts.append("first: " + self.first)
        if self.entering:
            parts.append("entering: " + self.entering)
        return "\n".join(parts) or None


def traceback_frames(detail: str | None) -> list[str]:
    """A traceback event's frames (``file:line in func``), outermost first, from its ``detail``."""
    return [f for f in (detail or "").split("\n") if f and not f.startswith(DETAIL_NOTES)]


def short_path(path: str) -> str:
    for marker in ("site-packages/", "dist-packages/"):
        if marker in path:
            return path.split(marker, 1)[1]
    return path


def dedent(text: str, indent: int) -> str:
    """Remove ``indent`` leading characters when they are blanks (else all leading blanks)."""
    if indent <= 0:
        return text
    return text[indent:] if text[:indent].isspace() else text.lstrip()


def _is_exception_line(text: str) -> re.Match | None:
    m = _EXC.match(text)
    if not m:
        return None
    if m["text"] is None and ":" not in text and "." not in m["type"] and not _EXC_NAME.search(m["type"]):
        return None
    return m


def _chain_follows(texts: list[str], start: int) -> bool:
    """Whether the next non-blank line (within a few) announces a chained exception."""
    for text in texts[start : start + 3]:
        if text.strip():
            return bool(_CHAIN.match(text.strip()))
    return False


def fold_traceback(texts: list[str]) -> Traceback:
    """Fold the lines that follow a ``Traceback (most recent call last):`` line.

    ``texts`` are message bodies with the indentation of the Traceback line already removed.
    """
    tb = Traceback()
    frames: list[str] = []
    opened = None  # the call the last frame's source line opens a ``with`` block on
    i, n = 0, len(texts)
    while i < n:
        text = texts[i].rstrip()
        frame = _FRAME.match(text)
        if frame:
            func = (frame["func"] or "?").strip()
            frames.append(f"{short_path(frame['file'])}:{frame['line']} in {func}")
            if func == "__enter__" and opened:
                tb.entering = opened
            with_call = _WITH_CALL.match(texts[i + 1]) if i + 1 < n else None
            opened = with_call["name"] if with_call else None
            i += 1
            continue
        # before any frame, only the line right after the header (a traceback cut to its last line, as
        # some launchers print it) is taken for the exception: a line further on may be anything
        first = not frames and not any(t.strip() for t in texts[:i])
        exc = None if text[:1].isspace() or not (frames or first) else _is_exception_line(text)
        if exc is None:
            if TRACEBACK_HEAD.match(text) and frames:
                break  # a new, unrelated traceback
            i += 1
            continue
        exc_type = (exc["inner"] or exc["type"]).removeprefix("builtins.")  # the task's own over Ray's wrapper
        line_text = (exc["text"] or "").strip()
        tb.texts.append(f"{exc_type}: {line_text}" if line_text else exc_type)
        if tb.first is None:
            tb.first = tb.texts[-1]
        tb.exc_type, tb.text, tb.frames = exc_type, line_text, frames
        i += 1
        chained = False
        limit = min(n, i + MAX_EXCEPTION_TEXT_LINES)
        while i < limit:
            more = texts[i].rstrip()
            if _CHAIN.match(more.strip()):
                chained = True
                i += 1
                break
            if TRACEBACK_HEAD.match(more):
                break
            if _ORIGINAL.match(more):
                inner = fold_traceback(texts[i + 1:])
                if inner.exc_type:  # the inner error is the one to act on; the wrapper stays as "first"
                    tb.exc_type, tb.text, tb.frames = inner.exc_type, inner.text, inner.frames or frames
                    tb.texts.extend(inner.texts)
                    tb.cpp.extend(inner.cpp)
                i += 1 + inner.consumed
                break
            if not more and not _chain_follows(texts, i + 1):
                break
            raised = _CPP_RAISED.search(more)
            cpp = _CPP_FRAME.match(more)
            if raised:
                tb.cpp.append(raised["func"])
            elif cpp and not _CPP_NOISE.match(cpp["func"]):
                tb.cpp.append(cpp["func"].split("(", 1)[0])
            i += 1
        if not chained:
            tb.consumed = i
            return tb
        frames, opened, tb.entering = [], None, None
        while i < n and not TRACEBACK_HEAD.match(texts[i]):
            i += 1
        i += 1
    tb.consumed = i
    if tb.exc_type is None:
        tb.frames = frames
    return tb
