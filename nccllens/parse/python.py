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

from collections.abc import Iterable, Iterator
from dataclasses import replace

from nccllens import lazy_regex
from nccllens.parse.base import FileContext, Line
from nccllens.parse.headers import split_header
from nccllens.parse.prefixes import BARE_STREAM
from nccllens.parse.raised_where import RECEIVED_OBJECT, unpickles_received, with_frames_above
from nccllens.parse.timed_out_tasks import with_timed_out_tasks
from nccllens.parse.tracebacks import (
    MAX_TRACEBACK_LINES,
    TRACEBACK_HEAD,
    dedent,
    fold_traceback,
    short_path,
)

FAMILY = "python"

# a logger's message that ends where the traceback it formats begins (one record: the frames follow on the next
# lines, without the logger's header), as SGLang's scheduler and many servers print an exception
_HEAD_AFTER_MESSAGE = lazy_regex.compile(r"\S[:.]? (?P<head>Traceback \(most recent call last\):)\s*$")
PREFILTER = (
    r"Traceback \(most recent call last\)"
    r"|^Exception ignored (?:in|on|while)\b"
    r"|^ ?(?:[A-Za-z_]\w*\.)*(?:[A-Z]\w*(?:Error|Exception|Exit|Interrupt)|Exception)(?:\([A-Za-z_][\w.]*\))?(?::|\s*$)"
    r"|caught (?:\w+\.)*\w+(?:Error|Exception)"
    r"|DataLoader worker \(pid"
    r"|Unexpected (?:bus error|segmentation fault|floating-point exception) encountered in worker"
)

# strsignal() descriptions (what DataLoader, shells and srun print) -> signal names.
SIGNAL_BY_DESCRIPTION = {
    "killed": "SIGKILL", "terminated": "SIGTERM", "aborted": "SIGABRT", "segmentation fault": "SIGSEGV",
    "bus error": "SIGBUS", "interrupt": "SIGINT", "hangup": "SIGHUP", "quit": "SIGQUIT",
    "floating point exception": "SIGFPE", "illegal instruction": "SIGILL", "broken pipe": "SIGPIPE",
    "alarm clock": "SIGALRM", "user defined signal 1": "SIGUSR1", "user defined signal 2": "SIGUSR2",
}

_IGNORED = lazy_regex.compile(r"^Exception ignored (?:in|on|while)\b")  # CPython's unraisable-exception report
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


def _traceback_event(line: Line, body: str, header, ctx: FileContext, logged: str | None = None) -> tuple[dict, list[Line]]:
    """``logged``: the logger's message the head ends (its text before the head). A logger that prints its header
    (the line's prefix) on a record's first line only leaves the frames without it, as lines of no prefix's
    stream; where the traceback's own exception line is missing, the message says what failed."""
    indent = len(body) - len(body.lstrip())
    following = ctx.following(line, MAX_TRACEBACK_LINES)
    if logged is not None and next(iter(following), None) is None and line.stream != BARE_STREAM:
        following = ctx.following(replace(line, stream=BARE_STREAM), MAX_TRACEBACK_LINES)
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
        "exc_type": tb.exc_type, "message": tb.message or logged or body.strip(), "detail": tb.detail(),
    }
    if tb.frames and _BACKGROUND_THREAD.search(tb.frames[0]):
        # read as an exception the program went on from: its text is the detail, not a failure's message
        event.update(kind="python.ignored_exception", level="info", detail=event["message"],
                     message=f"Traceback of a standard-library helper ({short_path(tb.frames[0])})")
    event.update(dataloader_facts(tb.texts))
    event.update(launched_process_facts(tb.message))
    if unpickles_received(tb.frames):
        event["key"] = RECEIVED_OBJECT
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
        if TRACEBACK_HEAD.match(first):
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
            glued = _HEAD_AFTER_MESSAGE.search(body) if "Traceback (most recent" in body else None
            logged = None
            if glued is not None:  # "Scheduler hit an exception: Traceback (most recent call last):"
                logged, body = body[:glued.start("head")].strip(), body[glued.start("head"):]
            if TRACEBACK_HEAD.match(body):
                event, used = _traceback_event(line, body, header, ctx, logged=logged)
                consumed.update(f.line for f in used)
                with_timed_out_tasks(event, used, ctx)
                yield event
                continue
            if body[:2].isspace():
                continue
            event = _exception_event(body)
            if event is not None:
                if event.get("exc_type"):
                    with_frames_above(event, line, body, ctx)
                with_timed_out_tasks(event, [line], ctx)
                yield event
        except Exception:  # noqa: BLE001 - one odd line must not cost the file its events
            continue
