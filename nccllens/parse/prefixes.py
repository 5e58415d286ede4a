"""Launcher prefixes that schedulers and wrappers put before each line, and what they tell.

Applied only to lines that survived the prefilter. Prefixes stack in any order, e.g.
``(Worker pid=7, ip=10.0.0.3) [rank31]:[E323 ...]`` or ``[default0]:[rank0]:[E1122 ...]``.

One table (:data:`SHAPES`) lists every prefix shape and which of its groups is the global rank, the
local rank, the host, the pid or the time. A shape marked ``lead`` (a bare timestamp that a CI job or a
benchmark harness writes) is taken off only when another prefix follows it, since a timestamp alone
may be the log record's own header.

Past the table, a fallback finds a rank marker (``[rankN]:``, ``[rank=N]``, ``Rank N:``) after a
leading segment the table does not know, when that segment's shape (digits as ``0``) starts many
lines of the same file (:func:`file_leads`), e.g. ``2024-11-20 14:37:16 [rank3]: ...`` or a harness
report's ``        | [rank0]: ...``. A segment seen on one line only is message text, never a prefix.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from nccllens import lazy_regex
from nccllens.parse.pastes import COMPOSE_PREFIX
from nccllens.parse.prefix_time import parse_ts

_TS = r"\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d(?:[.,]\d{1,9})?"


@dataclass(frozen=True)
class Shape:
    """One prefix shape: ``pattern`` is matched at the start of the rest of the line; ``groups`` maps
    a named group to what it is (``rank``, ``local_rank``, ``host``, ``pid``, ``ts``)."""

    name: str
    pattern: re.Pattern[str]
    lead: bool = False  # taken off only when another shape follows
    check: Callable[[re.Match[str]], bool] | None = None  # the match is a prefix (e.g. not a device name)
    fields: Callable[[re.Match[str]], dict] | None = None  # what the match tells, beyond plain groups


_HOSTY = lazy_regex.compile(r"^(?=.*[\d-])(?=.*[A-Za-z])[A-Za-z0-9][A-Za-z0-9-]*(?:\.[A-Za-z0-9-]+)*$")
_NOT_PDSH = lazy_regex.compile(
    r"^(?:(?:rank|default|local|worker|iter|step|epoch|http|https|error|warning|note|line|item|batch|cuda"
    r"|device|node_rank|process|proc|thread|task)\d*"
    r"|nvidia-\S*|nvswitch\d*|mlx\d\S*|ib\d+\S*|eth\d+\S*|en[opsx]\S*|bond\d+\S*|nvme\S*|sd[a-z]+\d*"
    r"|docker\d*|veth\S*|lo\d*|usb\d\S*|pci\S*|acpi\S*|cpu\d+|node-exporter|x86\S*|0x[0-9a-f]+|\d+e\d+"
    # daemons that put their host after a dash: "slurmstepd-gpu20-15: error: ..." (the slurm family reads it)
    r"|slurmstepd-\S*|slurmd-\S*"
    # Python logger names (module paths), not hosts: deepspeed.runtime.zero.stage3: ...
    r"|(?:torch|deepspeed|transformers|accelerate|megatron|vllm|sglang|ray|lightning|pytorch_lightning|apex|"
    r"torchvision|numpy|triton|nemo|colossalai|fairscale|horovod|datasets|peft|trl)\..*)$", re.I)


# pdsh names a host the way the host file does: DeepSpeed's launcher often by IPv4 address ("10.3.35.83: ")
_IPV4 = lazy_regex.compile(r"^(?:(?:25[0-5]|2[0-4]\d|1?\d?\d)\.){3}(?:25[0-5]|2[0-4]\d|1?\d?\d)$")


def _pdsh_host(m: re.Match[str]) -> bool:
    host = m["host"]
    return (bool(_HOSTY.match(host)) and not _NOT_PDSH.match(host)) or bool(_IPV4.match(host))


def _tee(m: re.Match[str]) -> dict:
    role, num = m["role"], int(m["num"])
    if role.lower() == "rank":
        return {"rank": num}
    return {"local_rank": num}


def _worker_name(m: re.Match[str]) -> dict:
    """Ray/vLLM actor names: ``[rank=N]`` or `` rank=N`` is the rank; a ``TPn`` tensor-parallel index is the
    rank only without a later pipeline stage (``PP1_TP0`` is not rank 0)."""
    out: dict = {}
    rank = m["rank"] or m["rank2"]
    if rank is not None:
        out["rank"] = int(rank)
    else:
        tp = re.search(r"(?:^|[_ ])TP(\d+)\b", m["actor"] or "")
        pp = re.search(r"(?:^|[_ ])PP(\d+)", m["actor"] or "")
        if tp and (pp is None or pp[1] == "0"):
            out["rank"] = int(tp[1])
    return out


def _sglang(m: re.Match[str]) -> dict:
    if m["pp"] is None or m["pp"] == "0":
        return {"rank": int(m["tp"])}
    return {}


SHAPES: tuple[Shape, ...] = (
    # kubectl logs --timestamps / GitHub Actions: RFC 3339 with Z; a container runtime's own log file (CRI:
    # /var/log/pods, what log collectors ship) adds the stream and a full/partial tag, and CRI-O an offset
    Shape("k8s_ts", lazy_regex.compile(r"(?P<ts>\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d{1,9})?(?:Z(?: (?:stdout|stderr) [FP])?"
                                r"|[+-]\d\d:\d\d (?:stdout|stderr) [FP])) ")),
    # kubectl logs --prefix: [pod/<name>/<container>]
    Shape("kubectl", lazy_regex.compile(r"\[pod/(?P<host>[^/\]\s]+)/[^\]\s]+\] ")),
    # Open MPI --tag-output (mpirun, horovodrun over MPI): [jobid,rank]<stream>:
    Shape("mpi", lazy_regex.compile(r"\[\d+,(?P<rank>\d+)\]<(?:stdout|stderr)>:\s?")),
    # horovodrun with its Gloo controller: [rank]<stream>:
    Shape("horovod", lazy_regex.compile(r"\[(?P<rank>\d+)\]<(?:stdout|stderr)>:\s?")),
    # horovodrun --prefix-output-with-timestamp: time.asctime() before the tag, "Fri Oct 23 17:16:00 2020[0]<stderr>:"
    Shape("horovod_ts", lazy_regex.compile(r"[A-Z][a-z]{2} [A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d \d{4}"
                                   r"\[(?P<rank>\d+)\]<(?:stdout|stderr)>:\s?")),
    # Ray actors and tasks: (RayTrainWorker pid=123, ip=10.0.0.1), (MegatronPolicyWorker[rank=31] pid=..),
    # (pid=7); vLLM: (VllmWorker rank=0 pid=..), (VllmWorkerProcess pid=..), (VllmWorker TP1 pid=..)
    Shape("ray", lazy_regex.compile(r"\((?:(?P<actor>[\w.]+(?: TP\d+)?)(?:\[rank=(?P<rank>\d+)\]| rank=(?P<rank2>\d+))? )?"
                            r"pid=(?P<pid>\d+)(?:, ip=(?P<host>[\w.:-]+))?\)\s"), fields=_worker_name),
    # SGLang: [2025-01-01 12:00:00 TP0], [2025-01-01 12:00:00 DP0 TP3 EP3], [TP0]
    Shape("sglang", lazy_regex.compile(r"\[(?:(?P<ts>" + _TS + r") )?(?:DP\d+ )?(?:PP(?P<pp>\d+) )?TP(?P<tp>\d+)"
                               r"(?: EP\d+)?\] "), fields=_sglang),
    # torchrun --tee / --log-line-prefix-template: [default0]:, [rank3]:, [trainer1]:
    Shape("tee", lazy_regex.compile(r"\[(?P<role>[A-Za-z_][\w-]*?)(?P<num>\d+)\]:\s?"), fields=_tee),
    # [rank=3] (Lightning, some harnesses) and "Rank 3: " at the start of a line
    Shape("rank_eq", lazy_regex.compile(r"\[rank=(?P<rank>\d+)\]:?\s?")),
    Shape("rank_word", lazy_regex.compile(r"Rank (?P<rank>\d{1,6}): ")),
    # srun --label pads the task id: "%*d: "
    Shape("srun", lazy_regex.compile(r"\s*(?P<rank>\d{1,6}): ")),
    # a shell prompt names the host: user@host:~/dir$ (bash), [user@host dir]# (RHEL), user@host ~ % (zsh)
    Shape("prompt", lazy_regex.compile(r"(?:\([\w.-]+\) )?(?:[A-Za-z_][\w.-]*@(?P<host>[A-Za-z0-9][\w.-]*):[~/][^\s$#]*\s{0,8}[#$]"
                               r"|\[[A-Za-z_][\w.-]*@(?P<host2>[A-Za-z0-9][\w.-]*) [^\]]*\][#$]"
                               r"|[A-Za-z_][\w.-]*@(?P<host3>[A-Za-z0-9][\w.-]*) (?:~|/)[^\s%#$]* [%#]) ")),
    # docker compose logs: the container's name and index, padded, and a bar ("trainer-1  | ", v1 "trainer_1  | ");
    # the name is compose's, not the host name the container's own lines print (NCCL's, a prompt's): not a host
    Shape("compose", lazy_regex.compile(COMPOSE_PREFIX)),
    # pdsh / DeepSpeed's launcher: "host: "
    Shape("pdsh", lazy_regex.compile(r"(?P<host>[A-Za-z0-9][\w-]*(?:\.[\w-]+)*): "), check=_pdsh_host),
    # journald / syslog of a service's output (journalctl -u, /var/log/messages): "Nov 01 10:00:00 host ident[pid]: ";
    # the kernel's own lines ("host kernel: ", no pid) are the kernel family's
    Shape("syslog", lazy_regex.compile(r"[A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d(?:\.\d{1,6})? (?P<host>[A-Za-z0-9][\w.-]*) "
                                r"[\w./@-]+\[(?P<pid>\d+)\]: ")),
    # a CI or benchmark harness's timestamp before another prefix
    Shape("ci_ts", lazy_regex.compile(r"\[?(?P<ts>" + _TS + r")(?:Z|[+-]\d\d:?\d\d)?\]? +"), lead=True),
)
_BY_NAME = {s.name: s for s in SHAPES}
# a shell prompt (``user@host:~/dir$``): the host it names, for the file facts
PROMPT = _BY_NAME["prompt"].pattern
_ROLES = ("rank", "local_rank", "host", "host2", "host3", "pid", "ts")

# how any shape can start (a digit, a bracket, a parenthesis, blank, "Rank N", a prompt, a host
# name and ": ", or an asctime stamp): a line matching none, like every NCCL line (``host:pid:tid [dev] NCCL ...``), is left
# as is after one test instead of one per shape
_MAY_START = lazy_regex.compile(r"[\d\[(\s]|Rank \d|[A-Za-z_][\w.-]*@|[A-Za-z0-9][\w-]*(?:\.[\w-]+)*: |" + COMPOSE_PREFIX
                                + r"|[A-Z][a-z]{2} (?:[A-Z][a-z]{2} )?[ \d]\d \d\d:")
GLUED = lazy_regex.compile(r"(?<=\S)(?=\[(?:rank|default)\d+\][: ]|\[\d+,\d+\]<(?:stdout|stderr)>:)")
# a traceback printed right after a progress bar that ended without a newline (tqdm's last redraw)
# bash's words for a child's fatal signal (``strsignal``), as it reports how a command died
SHELL_DEATHS = ("Segmentation fault", "Bus error", "Aborted", "Illegal instruction", "Floating point exception", "Killed")
# that report printed right after a progress bar that never ended its line
GLUED_SHELL = lazy_regex.compile(r"(?<=\])(?=(?:" + "|".join(SHELL_DEATHS) + r")(?: +\(core dumped\))?\s*$)")
_SHELL_ENDS = (*(w.rsplit(" ", 1)[-1] for w in SHELL_DEATHS), "(core dumped)")  # the last words such a line ends in
GLUED_TRACEBACK = lazy_regex.compile(r"(?<=[\]|%])(?=Traceback \(most recent call last\):)")
# NCCL records that a terminal or a paste ran together: "... to 0. [0] NCCL INFO NCCL_IB_HCA set to ..."
_GLUED_NCCL = lazy_regex.compile(r"(?<=\S) (?=(?:[^\s:\[\]]+:\d+:\d+ )?\[\d+\] NCCL (?:INFO|WARN) )")

# the fallback: a rank marker after a leading segment that repeats on many lines of the file
MARK = lazy_regex.compile(r"\[rank(?P<a>\d+)\]:\s?|\[rank=(?P<b>\d+)\]:?\s?|(?<![\w\[])Rank (?P<c>\d{1,6}): ")
_DIGITS = lazy_regex.compile(r"\d")
_LEAD_TS = lazy_regex.compile(_TS)
MAX_LEAD = 80  # characters before the marker
MIN_REPEATS = 3  # lines of the file that start with the segment's shape
SAMPLE = 4000  # lines of the file looked at


@dataclass(slots=True)
class Prefixes:
    """What a line's launcher prefixes said (host, rank, time) and the message after them."""

    message: str
    host: str | None = None
    rank: int | None = None
    local_rank: int | None = None
    pid: int | None = None
    ts: datetime | None = None

    @property
    def stream(self) -> str:
        """Who wrote the line, as far as its prefixes say: lines of one record share it (a process id that a prefix
        states, Ray's and vLLM's ``(Worker pid=N)``, tells its lines from the unprefixed lines of others)."""
        return f"{self.host or ''}|{'' if self.rank is None else self.rank}|" \
               f"{'' if self.local_rank is None else self.local_rank}|{'' if self.pid is None else self.pid}"


BARE_STREAM = Prefixes("").stream  # the stream of a line no prefix marks


def _take(out: Prefixes, shape: Shape, m: re.Match[str]) -> None:
    """Fill what ``out`` does not know yet from one shape's match (the outermost prefix wins)."""
    found = {k: v for k, v in m.groupdict().items() if k in _ROLES and v is not None}
    if shape.fields is not None:
        found.update(shape.fields(m))
    for alt in ("host2", "host3"):
        if alt in found:
            found.setdefault("host", found.pop(alt))
    for key, value in found.items():
        if getattr(out, key) is not None:
            continue
        if key == "ts":
            value = parse_ts(value)
        elif key in ("rank", "local_rank", "pid"):
            value = int(value)
        setattr(out, key, value)


def _match(text: str) -> tuple[Shape, re.Match[str]] | None:
    for shape in SHAPES:
        m = shape.pattern.match(text)
        if m and (shape.check is None or shape.check(m)):
            if shape.lead:
                rest = text[m.end():]
                if not rest or not any(s.pattern.match(rest) and not s.lead and (s.check is None or s.check(
                        s.pattern.match(rest))) for s in SHAPES):
                    continue
            return shape, m
    return None


def shape_of(segment: str) -> str:
    return _DIGITS.sub("0", segment)


def _lead_marker(raw: str, leads: frozenset[str]) -> re.Match[str] | None:
    """The rank marker after a known repeating leading segment of ``raw``, if any."""
    m = MARK.search(raw, 1, MAX_LEAD + 12)
    if m is None or m.start() > MAX_LEAD or shape_of(raw[:m.start()]) not in leads:
        return None
    return m


def strip(raw: str, leads: frozenset[str] = frozenset()) -> Prefixes:
    """Remove stacked launcher prefixes from ``raw`` and collect what they say. ``leads``: the shapes of
    this file's repeating leading segments (:func:`file_leads`)."""
    out = Prefixes(raw)
    text = raw
    if leads:
        m = _lead_marker(raw, leads)
        if m is not None:
            stamp = _LEAD_TS.search(raw, 0, m.start())
            if stamp:
                out.ts = parse_ts(stamp[0])
            text = raw[m.start():]
    if not _MAY_START.match(text):
        out.message = text
        return out
    indent = len(text) - len(text.lstrip(" \t"))
    if indent and _match(text) is None and _match(text[indent:]) is not None:
        text = text[indent:]  # a paste indented as a whole (a code block inside a list or a quote)
    for _ in range(8):
        found = _match(text)
        if found is None:
            break
        shape, m = found
        _take(out, shape, m)
        text = text[m.end():]
    out.message = text
    return out


def split_glued(raw: str) -> list[str]:
    """Split lines where two ranks' output was glued together (``...16[rank0]: ...``, a bar then
    ``[1,290]<stderr>:...`` of mpirun --tag-output), a traceback or the shell's report of a fatal signal
    (``...35.73s/it]Killed``) glued after a progress bar, and NCCL records run together on one line
    (``... [0] NCCL INFO a. [0] NCCL INFO b``)."""
    if "Traceback (most recent call last):" in raw and not raw.lstrip().startswith("Traceback"):
        raw_parts = GLUED_TRACEBACK.split(raw)
        if len(raw_parts) > 1:
            return [q for part in raw_parts if part for q in split_glued(part)]
    if raw.rstrip().endswith(_SHELL_ENDS) and (cut := GLUED_SHELL.search(raw)):
        return [q for part in (raw[:cut.start()], raw[cut.start():]) for q in split_glued(part)]
    parts = [raw]
    if "[rank" in raw or "[default" in raw or "]<std" in raw:
        parts = [p for p in GLUED.split(raw) if p] or [raw]
    if "NCCL" in raw and raw.count(" NCCL ") > 1:
        parts = [q for p in parts for q in _GLUED_NCCL.split(p) if q]
    return parts
