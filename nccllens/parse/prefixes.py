"""Launcher prefixes that schedulers and wrappers put before each line, and what they tell.

Applied only to lines that survived the prefilter. Prefixes stack in any order, e.g.
``(Worker pid=7, ip=10.0.0.3) [rank31]:[E323 ...]`` or ``[default0]:[rank0]:[E1122 ...]``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime

_PATTERNS: list[tuple[str, re.Pattern[str]]] = [
    ("k8s_ts", re.compile(r"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d{1,9})?Z) ")),
    ("k8s_pod", re.compile(r"\[pod/([^/\]\s]+)/[^\]\s]+\] ")),
    ("mpi", re.compile(r"\[\d+,(\d+)\]<(?:stdout|stderr)>:\s?")),
    ("ray", re.compile(r"\((?:[\w.]+?)(?:\[rank=(\d+)\]| rank=(\d+))? pid=(\d+)(?:, ip=([\w.:-]+))?\)\s")),
    ("tee", re.compile(r"\[([A-Za-z_][\w-]*?)(\d+)\]:\s?")),
    ("srun", re.compile(r"\s*(\d{1,6}): ")),
    ("pdsh", re.compile(r"([A-Za-z][\w-]*(?:\.[\w-]+)*): ")),
]
# how any of the prefixes above can start (a digit, a bracket, a parenthesis, blank, or a host name
# and ": "): a line matching none, like every NCCL line (``host:pid:tid [dev] NCCL ...``), is left as is
# after one test instead of seven
_MAY_START = re.compile(r"[\d\[(\s]|[A-Za-z][\w-]*(?:\.[\w-]+)*: ")
_HOSTY = re.compile(r"^(?=.*[\d-])[A-Za-z][A-Za-z0-9-]*(?:\.[A-Za-z0-9-]+)*$")
_NOT_PDSH = re.compile(
    r"^(?:(?:rank|default|local|worker|iter|step|epoch|http|https|error|warning|note)\d*"
    r"|nvidia-\S*|nvswitch\d*|mlx\d\S*|ib\d+\S*|eth\d+\S*|en[opsx]\S*|bond\d+\S*|nvme\S*|sd[a-z]+\d*"
    r"|docker\d*|veth\S*|lo\d*|usb\d\S*|pci\S*|acpi\S*|cpu\d+|node-exporter)$", re.I)
GLUED = re.compile(r"(?<=\S)(?=\[(?:rank|default)\d+\][: ])")
# a traceback printed right after a progress bar that ended without a newline (tqdm's last redraw)
GLUED_TRACEBACK = re.compile(r"(?<=[\]|%])(?=Traceback \(most recent call last\):)")


@dataclass(slots=True)
class Prefixes:
    message: str
    host: str | None = None
    rank: int | None = None
    local_rank: int | None = None
    pid: int | None = None
    ts: datetime | None = None

    @property
    def stream(self) -> str:
        return f"{self.host or ''}|{'' if self.rank is None else self.rank}|" \
               f"{'' if self.local_rank is None else self.local_rank}"


def _parse_k8s_ts(text: str) -> datetime | None:
    try:
        base = text.rstrip("Z")
        if "." in base:
            head, frac = base.split(".", 1)
            base = f"{head}.{frac[:6]}"
            return datetime.strptime(base, "%Y-%m-%dT%H:%M:%S.%f")
        return datetime.strptime(base, "%Y-%m-%dT%H:%M:%S")
    except ValueError:
        return None


def strip(raw: str) -> Prefixes:
    """Remove stacked launcher prefixes from ``raw`` and collect what they say."""
    out = Prefixes(raw)
    if not _MAY_START.match(raw):
        return out
    text = raw
    for _ in range(8):
        for name, pattern in _PATTERNS:
            m = pattern.match(text)
            if not m:
                continue
            if name == "k8s_ts":
                out.ts = out.ts or _parse_k8s_ts(m[1])
            elif name == "k8s_pod":
                out.host = out.host or m[1]
            elif name == "mpi":
                out.rank = int(m[1]) if out.rank is None else out.rank
            elif name == "ray":
                r = m[1] or m[2]
                if r is not None and out.rank is None:
                    out.rank = int(r)
                out.pid = out.pid or int(m[3])
                if m[4] and out.host is None:
                    out.host = m[4]
            elif name == "tee":
                role, num = m[1], int(m[2])
                if role == "rank":
                    out.rank = num if out.rank is None else out.rank
                elif role in ("default", "trainer", "worker", "local_rank") or out.local_rank is None:
                    out.local_rank = num if out.local_rank is None else out.local_rank
            elif name == "srun":
                out.rank = int(m[1]) if out.rank is None else out.rank
            elif name == "pdsh":
                host = m[1]
                if not _HOSTY.match(host) or _NOT_PDSH.match(host):
                    continue
                out.host = out.host or host
            text = text[m.end() :]
            break
        else:
            break
    out.message = text
    return out


def split_glued(raw: str) -> list[str]:
    """Split lines where two ranks' output was glued together (``...16[rank0]: ...``)."""
    if "Traceback (most recent call last):" in raw and not raw.lstrip().startswith("Traceback"):
        raw_parts = GLUED_TRACEBACK.split(raw)
        if len(raw_parts) > 1:
            return [q for part in raw_parts if part for q in split_glued(part)]
    if "[rank" not in raw and "[default" not in raw:
        return [raw]
    parts = GLUED.split(raw)
    return [p for p in parts if p] or [raw]
