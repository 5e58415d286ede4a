"""Native crash reports: a process that died on a signal and said so itself.

One ``cpp.signal`` event per report, ``signal`` = the signal's name, ``detail`` = the library the crash
happened in and the function names of the backtrace that follows (``in libnccl.so.2; frames: ncclGroupEnd,
ncclGetUniqueId``), as far as the report names them.
Shapes (each printed by the crash handler of a library linked into the training process):

- UCX / HPC-X: ``[host:pid :0:tid] Caught signal 7 (Bus error: nonexistent physical address)``,
  then ``==== backtrace (tid: N) ====`` and `` 0 0x... func()  file:0`` lines;
- glog / absl: ``*** SIGSEGV (@0x0) received by PID 123 (TID ...) ...`` and
  ``*** SIGBUS received at time=1700000000 on cpu 3 ***``, then ``PC: @ ...`` / ``@ 0x... func`` lines;
- Python's faulthandler: ``Fatal Python error: Segmentation fault`` / ``Bus error`` / ``Aborted``, and the
  interpreter's own fatal errors (``Fatal Python error: none_dealloc: ...``), after which it aborts (SIGABRT);
- Open MPI: ``*** Process received signal ***`` + ``Signal: Bus error (7)``;
- glibc's allocator finding the heap corrupted, after which it aborts the process (SIGABRT): ``free(): invalid next
  size (fast)``, ``double free or corruption (!prev)``, ``malloc(): corrupted top size``, ``corrupted size vs.
  prev_size``; before glibc 2.26 inside ``*** Error in `python': double free or corruption (out): 0x... ***``;
- the shell that ran the process, reporting how it died: ``Segmentation fault (core dumped)``, ``Bus error``,
  ``Killed`` on a line of their own, or a job report ``./run.sh: line 12:  4242 Killed   python train.py``.
"""

from __future__ import annotations

from collections.abc import Iterator

from nccllens import lazy_regex
from nccllens.parse.base import FileContext, Line, event_for
from nccllens.parse.prefixes import SHELL_DEATHS

_DEATHS = "|".join(SHELL_DEATHS)

FAMILY = "crash"  # the family column of its events is "cpp" (C++-side failures)
# glibc's malloc_printerr texts: the heap of the process was found corrupted, and glibc aborts it
_HEAP_WORDS = (r"(?:(?:free|malloc|realloc|munmap_chunk|malloc_consolidate)\(\): (?:invalid (?:pointer|size|old size|"
               r"chunk size|next size(?: \((?:fast|normal)\))?)|corrupted (?:top size|unsorted chunks(?: \d)?|"
               r"double-linked list)|double free detected in tcache 2|memory corruption(?: \(fast\))?|unaligned [\w ]+ "
               r"detected(?: in tcache 2)?)|double free or corruption \((?:top|out|!prev|fasttop)\)|"
               r"corrupted size vs\. prev_size(?: in fastbins)?|corrupted double-linked list)")
PREFILTER = (
    r"^(?:\[\d+\][+-]? +)?(?:" + _DEATHS + r"|Terminated|Hangup)(?: +\(core dumped\))?(?:\s*$| {2,}\S)"
    r"|: line \d+: +\d+ (?:" + _DEATHS + r")\b"
    r"|Caught signal \d+ \(|\*\*\* SIG[A-Z]+ (?:\(@\S+\) )?received|Fatal Python error: \S"
    r"|\] Signal: [A-Z][a-z]+[a-z ]* \(\d+\)"
    r"|" + _HEAP_WORDS +
    # the shell's word right after a progress bar that never ended its line (``... 35.73s/it]Killed``)
    r"|\](?:" + _DEATHS + r")(?: +\(core dumped\))?\s*$"
)

NUMBERS = {1: "SIGHUP", 2: "SIGINT", 4: "SIGILL", 6: "SIGABRT", 7: "SIGBUS", 8: "SIGFPE", 9: "SIGKILL",
           11: "SIGSEGV", 13: "SIGPIPE", 15: "SIGTERM"}
NAMES = {"segmentation fault": "SIGSEGV", "bus error": "SIGBUS", "aborted": "SIGABRT",
         "floating point exception": "SIGFPE", "illegal instruction": "SIGILL", "terminated": "SIGTERM",
         "hangup": "SIGHUP"}

_UCX = lazy_regex.compile(r"^\[(?P<host>[\w.-]+):(?P<pid>\d+) *:\d+:\d+\] +Caught signal (?P<num>\d+) \((?P<what>[^)]*)\)")
_CAUGHT = lazy_regex.compile(r"Caught signal (?P<num>\d+) \((?P<what>[^)]*)\)")
_ABSL = lazy_regex.compile(r"\*\*\* (?P<sig>SIG[A-Z]+) (?:\(@\S+\) )?received(?: by PID (?P<pid>\d+))?")
# faulthandler names the fatal signal; any other fatal error (``none_dealloc: deallocating None``, ``PyThreadState_Get:
# ...``, ``Cannot recover from stack overflow``) is the interpreter's own, after which it aborts (SIGABRT)
_PYTHON = lazy_regex.compile(r"Fatal Python error: (?P<what>[^:]+)")
# a whole line of it, alone (glibc 2.26 and later) or in the older "*** Error in `prog': ...: 0x... ***" wrapper
_HEAP = lazy_regex.compile(r"^(?:" + _HEAP_WORDS + r"\s*|\*\*\* Error in `[^`]*': " + _HEAP_WORDS + r": 0x[0-9a-f]+ \*\*\*\s*)$")
_MPI = lazy_regex.compile(r"\] Signal: (?P<what>[A-Z][a-z]+[a-z ]*) \((?P<num>\d+)\)")
# backtrace lines: UCX " 3 0x000000000007b0ef ncclGroupEnd()  ???:0", absl "@ 0x7f... ncclGroupEnd"
# bash's words for a child's fatal signal (``strsignal``), alone, in a script's job report ``line N: PID <word>
# command`` or in job control's ``[1]+  Killed                  nohup python train.py`` (a background run);
# "Terminated" and "Hangup" only alone or in job control (a script's report of them is the harness family's)
_SHELL = lazy_regex.compile(r"^(?:.*: line \d+: +\d+ |\[\d+\][+-]? +)?(?P<what>" + _DEATHS + r")(?: +\(core dumped\))?(?:\s|$)"
                    r"|^(?:\[\d+\][+-]? +)?(?P<stop>Terminated|Hangup)(?:\s*$| {2,}\S)")
_FRAME = lazy_regex.compile(r"^\s*(?:\d+\s+0x[0-9a-f]+\s+|@\s+0x[0-9a-f]+\s+(?:\d+\s+)?|\[[\w.-]+:\d+\] \[\s*\d+\] \S+\()"
                    r"(?P<func>[A-Za-z_][\w:]*)")
# the shared library a frame lies in, as glibc's backtrace and Open MPI's handler print it
# ("[host:pid] [ 1] /usr/lib/libnccl.so.2(+0x3533c)[0x7f..]", "/usr/lib/libnccl.so.2(ncclGroupEnd+0x12)[0x7f..]")
# and gdb ("#1 0x00007f.. in ncclCommInitRank () from /usr/lib/libnccl.so.2")
_FRAME_LIBRARY = lazy_regex.compile(r"(?:^|[\s/])(?P<lib>lib[\w+-]+\.so(?:\.\d+)*)(?:\(|\[|\s|$)")
# libraries every native backtrace passes through (the signal trampoline, the C and C++ runtimes, the loader):
# they say nothing of where the crash happened
_SYSTEM_LIBRARIES = lazy_regex.compile(r"^lib(?:c|pthread|dl|rt|m|gcc_s|stdc\+\+|ld-linux[\w-]*|python\d[\w.]*)\.so")
_FOLLOW = 40
# CPython's state when it failed, printed after its fatal error: "finalizing" is the interpreter's exit
_FINALIZING = lazy_regex.compile(r"^\s*Python runtime state: finaliz")


def _signal(line: Line) -> tuple[str, dict] | None:
    text = line.message
    m = _UCX.match(text) or _CAUGHT.search(text)
    if m:
        extra = {"host": m.groupdict().get("host"), "pid": int(m["pid"]) if m.groupdict().get("pid") else None}
        name = NUMBERS.get(int(m["num"])) or NAMES.get(m["what"].split(":")[0].strip().lower())
        return (name or f"signal {m['num']}"), extra
    m = _ABSL.search(text)
    if m:
        return m["sig"], {"pid": int(m["pid"]) if m["pid"] else None}
    m = _SHELL.match(text.strip())
    if m:
        what = m["what"] or m["stop"]
        return ("SIGKILL" if what == "Killed" else NAMES[what.lower()]), {}
    m = _PYTHON.search(text)
    if m:
        name = NAMES.get(m["what"].strip().lower())
        return (name or "SIGABRT"), {"interpreter": name is None}
    if _HEAP.match(text.strip()):
        return "SIGABRT", {}
    m = _MPI.search(text)
    if m:
        name = NAMES.get(m["what"].strip().lower())
        if name is None and m.groupdict().get("num"):
            name = NUMBERS.get(int(m["num"]))
        return (name or m["what"]), {}
    return None


def _frames(following: list[Line]) -> tuple[list[str], str | None]:
    """The backtrace's function names, and the first library it names past the system's own (the library the
    crash happened in, when the frames are printed innermost first as every crash handler does)."""
    names: list[str] = []
    library = None
    for ln in following:
        m = _FRAME.match(ln.message)
        if m and m["func"] not in names and m["func"] not in ("killpg", "clone", "start_thread", "__libc_start_main"):
            names.append(m["func"])
        if library is None and "0x" in ln.message:  # a frame's address is on its line
            lib = _FRAME_LIBRARY.search(ln.message)
            if lib and not _SYSTEM_LIBRARIES.match(lib["lib"]):
                library = lib["lib"]
    return names[:12], library


def _detail(frames: list[str], library: str | None) -> str | None:
    parts = ([f"in {library}"] if library else []) + (["frames: " + ", ".join(frames)] if frames else [])
    return "; ".join(parts) or None


def parse(lines: list[Line], ctx: FileContext) -> Iterator[dict]:
    for line in lines:
        found = _signal(line)
        if found is None:
            continue
        name, extra = found
        following = ctx.following(line, _FOLLOW)
        if extra.get("interpreter") and any(_FINALIZING.match(ln.message) for ln in following[:2]):
            continue  # the interpreter failed while shutting down, after the program's own end: no crash of the run
        frames, library = _frames(following)
        event = event_for(line, "cpp.signal", family="cpp", level="critical", signal=name,
                          message=line.message.strip(), detail=_detail(frames, library))
        if extra.get("pid") is not None:
            event["pid"] = extra["pid"]
        if extra.get("host") and not line.host:
            event["host"] = extra["host"]
        yield event
