"""Stacks of live processes (family ``stack``): what a hung rank was doing when someone looked.

People take these while a job hangs, and paste them into the ticket:

- ``py-spy dump``: ``Process 4242: python train.py`` then, per thread,
  ``Thread 0x7FA6E7C01740 (idle): "MainThread"`` and frames ``    get (queue.py:170)``
  (with ``--native`` also ``    cuStreamSynchronize (libcuda.so.1)``);
- gdb ``bt`` / ``thread apply all bt``: ``Thread 1 (Thread 0x7f.. (LWP 4242)):`` and frames
  ``#7  0x00007f.. in cuStreamSynchronize () from /usr/lib/.../libcuda.so.1``; a single ``bt`` starts
  at ``#0`` without a thread line;
- Python's ``faulthandler.dump_traceback`` (and ``dump_traceback_later``):
  ``Thread 0x00007f.. (most recent call first):`` / ``Current thread 0x.. (most recent call first):``
  and frames ``  File "x.py", line 12 in func``;
- pystack: ``Traceback for thread 4242 (python) [Has the GIL] (most recent call last):`` and frames
  ``    (Python) File "x.py", line 12, in func``;
- a py-spy dump pasted without its thread line: its innermost frame at the line's start
  (``all_reduce (torch/distributed/distributed_c10d.py:3075)``) and at least one indented frame under it.

→ one ``stack.thread`` event per thread: ``value`` = the thread's name (``MainThread``, ``Thread 1``),
``pid`` when the dump names the process (a thread whose outermost frame is ``<module>`` is the main
thread), ``key`` = what the innermost recognisable frame waits on
(``teardown``, ``collective``, ``gpu_sync``, ``store``, ``data``, ``other``; see ``wait_kind``) and ``detail`` =
``frames: inner, outer, ...``; a thread that waits in a collective has ``op`` = the collective's function
(``all_reduce``, ``broadcast``: see ``collective_op``), so that stacks in different collectives tell apart. Fatal-signal dumps (``Fatal Python error: ...``) are the ``crash``
family's; a faulthandler block that follows one is still a stack, and says where the crash happened.
"""

from __future__ import annotations

from collections.abc import Iterator

from nccllens import lazy_regex
from nccllens.parse.base import FileContext, Line, event_for

FAMILY = "stack"

_PYSPY_THREAD = r"^Thread (?:0x[0-9A-Fa-f]+|\d+) \((?:idle|active)[^)]*\)(?:: \"[^\"]*\")?\s*$"
_GDB_THREAD = r"^Thread \d+ \(Thread 0x[0-9a-f]+ \(LWP \d+\)\)"
_GDB_FIRST = r"^#0 +(?:0x[0-9a-f]+ in )?[A-Za-z_][\w:<>~.]* \("
_FAULTHANDLER = r"^(?:Current thread|Thread) 0x[0-9a-f]+ \(most recent call first\):"
_PYSTACK = r"^Traceback for thread \d+ \([^)]*\).*\(most recent call last\):"
_PROCESS = r"^Process \d+: \S"
_PYSPY_FIRST = r"^[A-Za-z_<][\w.<>]* \([^()\s]*\.py:\d+\)\s*$"  # a py-spy frame at the line's start: a paste without its thread line

PREFILTER = "|".join((_PYSPY_THREAD, _GDB_THREAD, _GDB_FIRST, _FAULTHANDLER, _PYSTACK, _PROCESS, _PYSPY_FIRST))

_HEADS = lazy_regex.compile("|".join(f"(?:{p})" for p in (_PYSPY_THREAD, _GDB_THREAD, _GDB_FIRST, _FAULTHANDLER, _PYSTACK,
                                                           _PYSPY_FIRST)))
_HEADLESS = lazy_regex.compile(_PYSPY_FIRST)
_PROCESS_RE = lazy_regex.compile(r"^Process (?P<pid>\d{1,9}): \S")
_THREAD_NAME = lazy_regex.compile(r'^Thread (?:0x[0-9A-Fa-f]+|\d+) \([^)]*\): "(?P<name>[^"]{1,80})"'
                          r"|^(?P<gdb>Thread \d+) \(Thread 0x[0-9a-f]+ \(LWP (?P<lwp>\d{1,9})\)\)"
                          r"|^(?P<current>Current thread) 0x")

# one frame, in each dump's shape: the function name is what classifies it
_FRAMES = (
    lazy_regex.compile(r"^#\d+ +(?:0x[0-9a-f]+ in )?(?P<func>\?\?|[A-Za-z_][\w:<>~.]*) \((?P<args>.*?)\)(?: (?:at|from) (?P<file>\S+))?"),
    lazy_regex.compile(r"^ {2}File \"(?P<file>[^\"]*)\", line \d+,? in (?P<func>[\w.<>]+)"),
    lazy_regex.compile(r"^ +\((?:Python|C)\) File \"(?P<file>[^\"]*)\", line \d+, in (?P<func>[\w.<>:~]+)"),
    lazy_regex.compile(r"^ {2,}(?:0x[0-9a-fA-F]+ )?(?P<func>[A-Za-z_<][\w.<>:~$]*) \((?P<file>[^()]*)\)\s*$"),
    lazy_regex.compile(r"^(?P<func>[A-Za-z_<][\w.<>]*) \((?P<file>[^()\s]*\.py):\d+\)\s*$"),  # a headless py-spy block's first
)
_MAX_FRAMES = 64

# what a frame waits on, innermost first; the first frame that says decides (order of the table matters
# only within one frame)
_WAITS = (
    # NCCL tearing a communicator down (abort, destroy, finalize) and never returning
    ("teardown", lazy_regex.compile(
        r"^(?:ncclCommAbort|ncclCommDestroy|ncclCommFinalize|commFree|commReclaim|commCleanup|commDestroySync|"
        r"destroy_process_group|_abort_process_group)$|ProcessGroupNCCL::(?:abort|shutdown)\b|NCCLComm::ncclCommAbort")),
    ("gpu_sync", lazy_regex.compile(r"(?i)^cu(?:da)?(?:Stream|Device|Event|Ctx)Synchronize$|^synchronize$")),
    ("collective", lazy_regex.compile(
        r"(?i)^(?:all_reduce|allreduce|all_gather\w*|_all_gather_base|allgather\w*|reduce_scatter\w*|"
        r"_reduce_scatter_base|broadcast\w*|barrier|monitored_barrier|all_to_all\w*|alltoall\w*|reduce|gather|"
        r"scatter|send|recv|isend|irecv|batch_isend_irecv|nccl[A-Z]\w*|ncclGroupEnd)$|::(?:allreduce|allgather|"
        r"barrier|broadcast|reduce_scatter|alltoall|wait)\b|ProcessGroup|gloo::")),
    ("store", lazy_regex.compile(r"(?i)^(?:_store_based_barrier|rendezvous|next_rendezvous|_rendezvous\w*|get|wait)$")),
    ("data", lazy_regex.compile(r"(?i)^(?:_next_data|_get_data|_try_get_data|_next_index|get|__next__)$")),
)
# files that make a generic name (get, wait, __next__) mean something
_WAIT_FILES = {
    "collective": lazy_regex.compile(r"distributed_c10d|torch/distributed/(?!elastic)|deepspeed/comm|libnccl|librccl|gloo"),
    "store": lazy_regex.compile(r"elastic/rendezvous|c10d_rendezvous|dynamic_rendezvous|torch/distributed/rendezvous"),
    "data": lazy_regex.compile(r"(?:^|/)queue\.py|multiprocessing/queues|utils/data/dataloader|dataloader|iterators?\.py"),
}
_GENERIC = {"get", "wait", "__next__", "synchronize", "reduce", "gather", "scatter", "send", "recv", "broadcast"}


def wait_kind(frames: list[tuple[str, str]]) -> str:
    """What a thread waits on, from its frames (innermost first, ``(function, file)``)."""
    for func, path in frames:
        bare = func.rsplit(".", 1)[-1]
        for kind, names in _WAITS:
            if not names.search(bare) and not names.search(func):
                continue
            files = _WAIT_FILES.get(kind)
            if bare.lower() in _GENERIC and not (kind == "gpu_sync" and "cuda" in path) and (
                    files is None or not files.search(path)):
                continue  # ``get`` of a dict, ``wait`` of a lock: says nothing without its file
            return kind
        for kind, files in _WAIT_FILES.items():
            if path and files.search(path) and kind != "store":
                return kind
    return "other"


# the collectives of torch.distributed's Python API (and DeepSpeed's comm module), as py-spy and faulthandler name them
_API_OPS = lazy_regex.compile(r"^(?:all_reduce|all_gather\w*|_all_gather_base|reduce_scatter\w*|_reduce_scatter_base|broadcast\w*|"
                              r"barrier|monitored_barrier|all_to_all\w*|reduce|gather\w*|scatter\w*|send|recv|isend|irecv|"
                              r"batch_isend_irecv)$")


def collective_op(frames: list[tuple[str, str]]) -> str | None:
    """The innermost collective of torch.distributed's API among ``frames`` (innermost first), or None."""
    for func, path in frames:
        bare = func.rsplit(".", 1)[-1]
        if _API_OPS.match(bare) and _WAIT_FILES["collective"].search(path):
            return bare
    return None


def _frame(text: str) -> tuple[str, str] | None:
    for shape in _FRAMES:
        m = shape.match(text)
        if m:
            return m["func"], m.groupdict().get("file") or ""
    return None


def _frames(head: Line, following: list[Line], innermost_first: bool) -> list[tuple[str, str]]:
    frames: list[tuple[str, str]] = []
    first = _frame(head.message)  # gdb's "#0 ..." head is itself a frame
    if first:
        frames.append(first)
    for ln in following:
        if _HEADS.match(ln.message) or _PROCESS_RE.match(ln.message):
            break
        found = _frame(ln.message)
        if found is None:
            if frames and ln.message.strip():
                break  # the dump ended
            continue
        frames.append(found)
        if len(frames) >= _MAX_FRAMES:
            break
    return frames if innermost_first else frames[::-1]


def parse(lines: list[Line], ctx: FileContext) -> Iterator[dict]:
    pid: int | None = None
    in_gdb_thread = False
    for line in lines:
        text = line.message
        m = _PROCESS_RE.match(text)
        if m:
            pid = int(m["pid"])
            continue
        if not _HEADS.match(text):
            continue
        if text.startswith("#0") and in_gdb_thread:
            in_gdb_thread = False
            continue  # the first frame of a thread whose "Thread N (...)" line was the head
        in_gdb_thread = text.startswith("Thread ") and "(LWP " in text
        frames = _frames(line, ctx.following(line, _MAX_FRAMES + 4), innermost_first="most recent call last" not in text)
        if not frames or (len(frames) < 2 and _HEADLESS.match(text)):
            continue  # a lone ``name (file.py:N)`` line is no stack
        named = _THREAD_NAME.match(text)
        name = None
        event_pid = pid
        if named:
            name = named["name"] or named["gdb"] or ("MainThread" if named["current"] else None)
            if named["lwp"] and event_pid is None and named["gdb"] == "Thread 1":
                event_pid = int(named["lwp"])
        if name is None and frames[-1][0] == "<module>":
            name = "MainThread"  # the thread that runs the script: faulthandler does not name threads
        kind = wait_kind(frames)
        event = event_for(line, "stack.thread", family=FAMILY, level="info", value=name, key=kind,
                          op=collective_op(frames) if kind == "collective" else None, message=text.strip()[:300],
                          detail="frames: " + ", ".join([f for f, _ in frames if f != "??"][:12]))
        if event_pid is not None:
            event["pid"] = event_pid
        yield event
