"""The kernel family: dmesg / journalctl -k / syslog kern.log / /dev/kmsg lines.

Kinds (docs/events.md): kernel.xid, kernel.sxid, kernel.fallen_off_bus, kernel.gpu_uuid,
kernel.ecc, kernel.aer, kernel.oom_kill, kernel.segfault, kernel.hung_task, kernel.ib_link,
kernel.nvrm, kernel.boot.

The prefix (kernel_prefix) gives ``ts``/``ts_kind``/``ts_rel`` and the syslog host; the message
patterns (kernel_gpu, kernel_host) give the kind and typed fields. ``message`` is the text after the
timestamp/host prefix. The 3-line "The NVIDIA GPU <bdf> ... fallen off the bus" notice becomes one
``kernel.fallen_off_bus`` on its last line, carrying the address from its first line.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

from nccllens import lazy_regex
from nccllens.parse.base import FileContext, Line
from nccllens.parse.kernel_gpu import GPU_MESSAGES
from nccllens.parse.kernel_host import HOST_MESSAGES
from nccllens.parse.kernel_prefix import split_kernel_prefix

FAMILY = "kernel"

_MESSAGES = GPU_MESSAGES + HOST_MESSAGES
_COMPILED = [(kind, lazy_regex.compile(p), fields) for kind, p, fields in _MESSAGES]

PREFILTER = "|".join(re.sub(r"\(\?P<\w+>", "(?:", p) for _, p, _ in _MESSAGES)

_LEVELS = {
    "kernel.xid": "critical", "kernel.sxid": "warning", "kernel.fallen_off_bus": "critical",
    "kernel.gpu_uuid": "info", "kernel.ecc": "warning", "kernel.aer": "warning", "kernel.oom_kill": "error",
    "kernel.segfault": "error", "kernel.hung_task": "warning", "kernel.ib_link": "warning",
    "kernel.nvrm": "warning", "kernel.boot": "info",
}
_HEADER_REACH = 3  # lines between 'The NVIDIA GPU <bdf>' and 'fallen off the bus and is not responding'


def _classify(message: str) -> tuple[str, dict] | None:
    for kind, rx, fields in _COMPILED:
        m = rx.search(message)
        if m:
            return kind, fields(m)
    return None


def _one(line: Line, ctx: FileContext, headers: dict[str, tuple[int, str]]) -> dict | None:
    pre = split_kernel_prefix(line.message, ctx.year)
    found = _classify(pre.message)
    if found is None:
        return None
    kind, fields = found
    if fields.get("key") == "gpu_header":
        del fields["key"]
        headers[line.stream] = (line.line, fields.get("pci") or "")
    if kind == "kernel.fallen_off_bus" and not fields.get("pci"):
        seen = headers.get(line.stream)
        if seen and 0 < line.line - seen[0] <= _HEADER_REACH and seen[1]:
            fields["pci"] = seen[1]
    ev = {
        "file": line.file, "line": line.line, "raw": line.raw, "family": FAMILY, "kind": kind,
        "level": fields.pop("level", None) or _LEVELS.get(kind, "warning"), "message": pre.message,
    }
    if pre.host:
        ev["host"] = pre.host
    if pre.ts is not None:
        ev["ts"], ev["ts_kind"] = pre.ts, pre.ts_kind or "absolute"
    if pre.ts_rel is not None:
        ev["ts_rel"] = pre.ts_rel
        if pre.ts is None:
            ev["ts_kind"] = "boot"
    ev.update(fields)
    return ev


def parse(lines: Iterable[Line], ctx: FileContext) -> Iterator[dict]:
    """Events for the kernel-log lines among ``lines``; other lines are skipped."""
    headers: dict[str, tuple[int, str]] = {}
    for line in lines:
        try:
            ev = _one(line, ctx, headers)
        except (ValueError, IndexError, TypeError, OverflowError):  # odd input never stops the file
            ev = None
        if ev is not None:
            yield {k: v for k, v in ev.items() if v is not None}
