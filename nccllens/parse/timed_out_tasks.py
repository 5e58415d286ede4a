"""The processes a coordination-service barrier names as missing, as the exception's ``peer``.

JAX (and TensorFlow's multi-worker runtime) wait in barriers of the coordination service; when some processes
never arrive, the exception's text ends with ``Timed out task names:`` and one line per missing process follows:
``/job:jax_worker/replica:0/task:3``. The task number is the process id (the job's rank), so the event's ``peer``
is ``ranks 0, 3``: a rule with ``culprit = "peer"`` blames them, not the process that waited.
"""

from __future__ import annotations

from collections.abc import Sequence

from nccllens import lazy_regex
from nccllens.parse.base import FileContext, Line

LISTED = "Timed out task names:"
_TASK = lazy_regex.compile(r"^/job:[\w-]+/replica:\d+/task:(\d+)\s*$")
MAX_TASKS = 4096


def timed_out_tasks(line: Line, ctx: FileContext) -> str | None:
    """``ranks a, b`` for the task lines right after ``line`` (None: none follow)."""
    ranks: set[int] = set()
    for following in ctx.lines_after(line, MAX_TASKS):
        m = _TASK.match(following.message.strip())
        if not m:
            break
        ranks.add(int(m[1]))
    return "ranks " + ", ".join(str(r) for r in sorted(ranks)) if ranks else None


def with_timed_out_tasks(event: dict, lines: Sequence[Line], ctx: FileContext) -> None:
    """Set ``event["peer"]`` from the task list after the line of ``lines`` that ends with ``LISTED``."""
    if LISTED not in (event.get("message") or ""):
        return
    for line in lines:
        if line.message.rstrip().endswith(LISTED):
            peer = timed_out_tasks(line, ctx)
            if peer:
                event["peer"] = peer
            return
