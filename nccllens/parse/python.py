"""Python tracebacks and bare exception lines (family ``python``).

One ``python.traceback`` per ``Traceback (most recent call last):`` block, read forward in the same
stream with ``ctx.following`` (bounded). Chained exceptions are folded: the last exception is the
event's ``exc_type``/``message``; the first one is kept in ``detail``. C++ ``Exception raised from``
and ``frame #N`` lines printed inside the exception text are reduced to function names.

``python.exception`` covers exception lines printed without a traceback (``RuntimeError: ...``
alone, ``[rank1] caught builtins.RuntimeError: ...``) and the DataLoader worker messages.
``python.ignored_exception`` is an exception the program went on from: one CPython reported as ignored
(``Exception ignored in: ...``), or a standard-library helper's own traceback (queue feeder, resource tracker).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from nccllens import lazy_regex
from nccllens.parse.base import FileContext, Line
from nccllens.parse.headers import split_header

FAMILY = "python"

PREFILTER = (
    r"Traceback \(most recent call last\)"
    r"|^Exception ignored (?:in|on|while)\b"
    r"|^ ?(?:[A-Za-z_]\w*\.)*(?:[A-Z]\w*(?:Error|Exception|Exit|Interrupt)|Exception)(?:\([A-Za-z_][\w.]*\))?(?::|\s*$)"
    r"|caught (?:\w+\.)*\w+(?:Error|Exception)"
    r"|DataLoader worker \(pid"
    r"|Unexpected (?:bus error|segmentation fault|floating-point exception) encountered in worker"
)

MAX_TRACEBACK_LINES = 200
MAX_EXCEPTION_TEXT_LINES = 60
KEPT_FRAMES = 3
KEPT_CPP_FRAMES = 6
# notes a traceback event's detail carries after its frames: C++ frames, the chain's first exception (both
# written by ``Traceback.detail``), where a cut traceback's exception was read from (``cut_tracebacks``)
DETAIL_NOTES = ("C++: ", "first: ", "cut: ")

# strsignal() descriptions (what DataLoader, shells and srun print) -> signal names.
SIGNAL_BY_DESCRIPTION = {
    "killed": "SIGKILL", "terminated": "SIGTERM", "aborted": "SIGABRT", "segmentation fault": "SIGSEGV",
    "bus error": "SIGBUS", "interrupt": "SIGINT", "hangup": "SIGHUP", "quit": "SIGQUIT",
    "floating point exception": "SIGFPE", "illegal instruction": "SIGILL", "broken pipe": "SIGPIPE",
    "alarm clock": "SIGALRM", "user defined signal 1": "SIGUSR1", "user defined signal 2": "SIGUSR2",
}

_TRACEBACK = lazy_regex.compile(r"^(?P<indent>\s*)Traceback \(most recent call last\):")
_IGNORED = lazy_regex.compile(r"^Exception ignored (?:in|on|while)\b")  # CPython's unraisable-exception report
# a wrapper that re-raises another process's exception and prints its traceback after its own line
# (DataLoader's "Caught X in DataLoader worker process N.", multiprocessing's spawn errors)
_ORIGINAL = lazy_regex.compile(r"^\s*Original Traceback \(most recent call last\):")
_FRAME = lazy_regex.compile(r'^\s+File "(?P<file>[^"]+)", line (?P<line>\d+)(?:, in (?P<func>.+))?$')
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
_STANDALONE = lazy_regex.compile(
    r"^(?:\[rank(?P<rank>\d+)\] )?(?:.*?caught )?"
    r"(?P<type>(?:[A-Za-z_]\w*\.)*(?:[A-Z]\w*(?:Error|Exception|Exit|Interrupt)|Exception))"
    r"(?:\((?P<inner>[A-Za-z_][\w.]*)\))?(?::\s?(?P<text>.*))?$"
)
_DL_KILLED = lazy_regex.compile(r"DataLoader worker \(pid (?P<pid>\d+)\) is killed by signal: (?P<sig>[^.]+)\.")
_DL_EXITED = lazy_regex.compile(
    r"DataLoader worker \(pid(?:\(s\))? (?P<pids>\d+(?:, \d+)*)\) exited unexpectedly"
    r"(?: with exit code (?P<code>-?\d+))?"
)
_DL_UNEXPECTED = lazy_regex.compile(
    r"Unexpected (?P<what>bus error|segmentation fault|floating-point exception) encountered in worker"
)
_DL_SIGNALS = {"bus error": "SIGBUS", "segmentation fault": "SIGSEGV", "floating-point exception": "SIGFPE"}
_TABLE_TRACEBACK = lazy_regex.compile(r"^\s*traceback\s*:\s*Traceback")


@dataclass
class Traceback:
    """What one (possibly chained) traceback says."""

    exc_type: str | None = None
    text: str = ""
    first: str | None = None  # first exception of a chain, as "Type: text"
    frames: list[str] = field(default_factory=list)  # "file:line in func", last segment only
    cpp: list[str] = field(default_factory=list)
    texts: list[str] = field(default_factory=list)  # every exception line of the chain
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
    i, n = 0, len(texts)
    while i < n:
        text = texts[i].rstrip()
        frame = _FRAME.match(text)
        if frame:
            func = (frame["func"] or "?").strip()
            frames.append(f"{short_path(frame['file'])}:{frame['line']} in {func}")
            i += 1
            continue
        # before any frame, only the line right after the header (a traceback cut to its last line, as
        # some launchers print it) is taken for the exception: a line further on may be anything
        first = not frames and not any(t.strip() for t in texts[:i])
        exc = None if text[:1].isspace() or not (frames or first) else _is_exception_line(text)
        if exc is None:
            if _TRACEBACK.match(text) and frames:
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
            if _TRACEBACK.match(more):
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
        frames = []
        while i < n and not _TRACEBACK.match(texts[i]):
            i += 1
        i += 1
    tb.consumed = i
    if tb.exc_type is None:
        tb.frames = frames
    return tb


def dataloader_facts(texts: Iterable[str]) -> dict:
    """pid / signal / exit code named by DataLoader worker messages among ``texts``."""
    facts: dict = {}
    for text in texts:
        m = _DL_KILLED.search(text)
        if m:
            facts.setdefault("pid", int(m["pid"]))
            facts.setdefault("signal", SIGNAL_BY_DESCRIPTION.get(m["sig"].strip().lower(), m["sig"].strip()))
        m = _DL_EXITED.search(text)
        if m:
            facts.setdefault("pid", int(m["pids"].split(",")[0]))
            if m["code"] is not None:
                facts.setdefault("exit_code", int(m["code"]))
        m = _DL_UNEXPECTED.search(text)
        if m:
            facts.setdefault("signal", _DL_SIGNALS[m["what"]])
    if facts:
        facts["key"] = "dataloader_worker"
    return facts


# the old launchers (torch.distributed.launch ≤ 1.8, other subprocess-based ones) raise CalledProcessError for
# a worker that failed: "Command '[..., '--local_rank=1', ...]' died with <Signals.SIGKILL: 9>." /
# "... returned non-zero exit status 1." The command is the last one the launcher spawned (a loop variable), not
# the failed worker's: its --local_rank names the failed worker only when it is 0 (one worker).
_CALLED = lazy_regex.compile(r"CalledProcessError: Command .*?(?:died with <Signals\.(?P<sig>SIG[A-Z0-9]+): \d+>"
                     r"|returned non-zero exit status (?P<code>-?\d+))")
_LOCAL_RANK_ARG = lazy_regex.compile(r"'--local[_-]rank[= ](?P<n>\d{1,5})'")


def launched_process_facts(message: str | None) -> dict:
    """Signal / exit code and local rank of the worker a launcher's ``CalledProcessError`` names."""
    m = _CALLED.search(message or "")
    if not m:
        return {}
    facts: dict = {"signal": m["sig"]} if m["sig"] else {"exit_code": int(m["code"])}
    arg = _LOCAL_RANK_ARG.search(message or "")
    if arg and arg["n"] == "0":
        facts["local_rank"] = 0
    return facts


# a standard-library thread or helper process that prints its own traceback and carries on: multiprocessing's
# queue feeder (``queues.py ... in _feed``) loses its reader when the process at the other end has gone or closed
# the queue; its resource tracker (``resource_tracker.py ... in main``, a process of its own) finds a shared-memory
# name already gone when the program unlinked it itself. No failure of the program's own; another process's
# failure, if any, is on its own lines
_BACKGROUND_THREAD = lazy_regex.compile(r"multiprocessing[\\/](?:queues\.py:\d+ in _feed|resource_tracker\.py:\d+ in main)$")


def _traceback_event(line: Line, body: str, header, ctx: FileContext) -> tuple[dict, list[Line]]:
    indent = len(body) - len(body.lstrip())
    following = ctx.following(line, MAX_TRACEBACK_LINES)
    texts = []
    for f in following:
        f_header, text = split_header(f.message)
        if f_header is not None and header is None:
            following = following[: len(texts)]
            break  # a new log record: the traceback ended
        texts.append(dedent(text, indent))
    tb = fold_traceback(texts)
    event = {
        "family": FAMILY, "kind": "python.traceback", "level": "error",
        "exc_type": tb.exc_type, "message": tb.message or body.strip(), "detail": tb.detail(),
    }
    if tb.frames and _BACKGROUND_THREAD.search(tb.frames[0]):
        # read as an exception the program went on from: its text is the detail, not a failure's message
        event.update(kind="python.ignored_exception", level="info", detail=event["message"],
                     message=f"Traceback of a standard-library helper ({short_path(tb.frames[0])})")
    event.update(dataloader_facts(tb.texts))
    event.update(launched_process_facts(tb.message))
    if header is not None and header.ts is not None:
        event["ts"], event["ts_kind"] = header.ts, header.ts_kind
    used = following[: tb.consumed]
    if used:
        event["_last_line"] = used[-1].line  # the pipeline claims the frames and the exception line
    return event, used


def _exception_event(body: str) -> dict | None:
    m = _STANDALONE.match(body.strip())
    if m:
        exc_type = (m["inner"] or m["type"]).removeprefix("builtins.")
        text = (m["text"] or "").strip()
        event = {"exc_type": exc_type, "message": f"{exc_type}: {text}" if text else exc_type}
        if m["rank"] is not None:
            event["rank"] = int(m["rank"])
    elif _DL_UNEXPECTED.search(body):
        event = {"message": body.strip()}
    else:
        return None
    event.update({"family": FAMILY, "kind": "python.exception", "level": "error"})
    event.update(dataloader_facts([body]))
    event.update(launched_process_facts(event["message"]))
    return event


def _ignored_event(line: Line, body: str, ctx: FileContext) -> tuple[dict, list[Line]]:
    """CPython's report of an exception it could not raise and ignored (in a finaliser, ``__del__``, an atexit
    hook, a thread at exit): ``Exception ignored in: <object>``, then the traceback or the exception line. The
    program went on, so the exception is context (``python.ignored_exception``, level info), never a failure;
    its lines are this event's, so that no rule reads them as one."""
    event = {"family": FAMILY, "kind": "python.ignored_exception", "level": "info", "message": body.strip()}
    following = ctx.following(line, 1)
    used: list[Line] = []
    if following:
        first = split_header(following[0].message, ctx.year)[1]
        if _TRACEBACK.match(first):
            inner, inner_used = _traceback_event(following[0], first, None, ctx)
            used = [following[0], *inner_used]
            event.update(exc_type=inner["exc_type"], detail=inner["message"])
        elif not first[:1].isspace() and (inner := _exception_event(first)) is not None:
            used = [following[0]]
            event.update(exc_type=inner.get("exc_type"), detail=inner["message"])
    if used:
        event["_last_line"] = used[-1].line
    return event, used


def parse(lines: list[Line], ctx: FileContext) -> Iterator[dict]:
    consumed: set[int] = set()
    for line in lines:
        if line.line in consumed:
            continue
        try:
            header, body = split_header(line.message, ctx.year)
            if _TABLE_TRACEBACK.match(body):
                continue  # a torchrun failure-table field: the torchrun family reads it
            if _IGNORED.match(body):
                event, used = _ignored_event(line, body, ctx)
                consumed.update(f.line for f in used)
                yield event
                continue
            if _TRACEBACK.match(body):
                event, used = _traceback_event(line, body, header, ctx)
                consumed.update(f.line for f in used)
                yield event
                continue
            if body[:2].isspace():
                continue
            event = _exception_event(body)
            if event is not None:
                yield event
        except Exception:  # noqa: BLE001 - one odd line must not cost the file its events
            continue
