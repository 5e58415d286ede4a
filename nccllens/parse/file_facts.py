"""What a file's lines say of all of them: the leading segments that repeat before a rank marker, the host
(and rank) that its shell prompts or its launcher's header state, and the width a terminal wrapped it at.

Read from a sample of the file's first lines (``SAMPLE``); ``parse.facts_frame`` computes them per file of a
batch and hands them to the prefix stripping (``parse.prefixes.strip``) as ``PathHints``.
"""

from __future__ import annotations

from bisect import bisect_right
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from nccllens import lazy_regex
from nccllens.parse.prefixes import MARK, MAX_LEAD, MIN_REPEATS, PROMPT, SAMPLE, shape_of, strip


@dataclass(frozen=True)
class FileFacts:
    """What a file's lines say of all of them: the leading-segment shapes that repeat, and the host
    (and rank) that its shell prompts or its launcher's own header name (one only)."""

    leads: frozenset[str] = frozenset()
    host: str | None = None
    hosts: tuple[str, ...] = field(default=())
    # where a file's prompts name two hosts or more (a terminal session that moved between machines): each
    # prompt's line number (from 1) and host; the lines after a prompt were printed on its host
    host_marks: tuple[tuple[int, str], ...] = field(default=())
    rank: int | None = None
    wrap: int | None = None  # the width a terminal hard-wrapped the file's long lines at


# a launcher that writes one log per task and states where the task runs at its top: submitit's
# "Starting with JobEnvironment(job_id=.., hostname=learnfair0293, local_rank=0(2), node=0(1), global_rank=0(2))"
_TASK_HEADER = lazy_regex.compile(r"JobEnvironment\((?=.*?\bhostname=(?P<host>[\w.-]+))(?=.*?\bglobal_rank=(?P<rank>\d+))")
# a program that states its host on a line of its own at start-up ("Hostname: cn-251", RETURNN and others)
_HOSTNAME_LINE = lazy_regex.compile(r"^(?:Hostname|hostname|HOSTNAME|Host name)\s*[:=]\s*(?P<host>[A-Za-z0-9][\w.-]{0,62})\s*$")


def _hostname_line(raw: str) -> str | None:
    """The host a "Hostname: cn-251" line states (its marker sits in the first columns: one cheap test first)."""
    if "ost" not in raw[:12]:
        return None
    h = _HOSTNAME_LINE.match(raw)
    return h["host"] if h else None


# a command typed at a prompt that prints another machine's output: the lines under it are that pod's or host's
# (``kubectl logs fsdp-worker-0``, ``kubectl exec -it worker-1 -- nvidia-smi``, ``ssh gpu-07 dmesg``); a pod's host
# name is its name unless its spec says otherwise
_REMOTE_COMMAND = lazy_regex.compile(r"\s*(?:sudo\s+)?(?:kubectl\b(?P<kubectl>[^|;&<>]*)|ssh\s(?P<ssh>[^|;&<>]*))")
_KUBECTL_VERBS = ("logs", "exec", "attach")
# options that take the next word as their value (the others are flags, or carry it after "=")
_KUBECTL_VALUED = {"-n", "--namespace", "-c", "--container", "--tail", "--since", "--since-time", "-l", "--selector",
                   "--context", "--kubeconfig", "--cluster", "--user", "-s", "--server"}
_SSH_VALUED = {"-p", "-i", "-l", "-o", "-J", "-F", "-b", "-c", "-D", "-E", "-L", "-R", "-W", "-w", "-m", "-O", "-Q", "-S"}
_HOST_WORD = lazy_regex.compile(r"[A-Za-z0-9][\w.-]{0,62}")


def _first_operand(words: list[str], valued: set[str]) -> str | None:
    skip = False
    for word in words:
        if skip:
            skip = False
        elif word == "--":
            return None
        elif word.startswith("-"):
            skip = word in valued
        else:
            return word
    return None


def prompt_host(raw: str, match) -> str | None:
    """The host the lines under a shell prompt were printed on: the pod or host its command reads from
    (``kubectl logs POD``, ``kubectl exec POD``, ``ssh HOST``), else the prompt's own host."""
    own = match["host"] or match["host2"] or match["host3"]
    command = _REMOTE_COMMAND.match(raw, match.end())
    if command is None:
        return own
    if command["kubectl"] is not None:
        words = command["kubectl"].split()
        verb = next((i for i, w in enumerate(words) if w in _KUBECTL_VERBS), None)
        target = None if verb is None else _first_operand(words[verb + 1:], _KUBECTL_VALUED)
        target = target.split("/", 1)[1] if target and target.startswith(("pod/", "pods/")) else target
    else:
        target = _first_operand(command["ssh"].split(), _SSH_VALUED)
        target = target.rsplit("@", 1)[-1] if target else None
    return target if target and _HOST_WORD.fullmatch(target) else own


# a sample line ``file_facts`` looks at closer holds one of these (a rank marker's, a prompt's, a task header's)
_MARK_LITERALS = ("[rank", "Rank ")  # one of them is in every ``MARK`` match
FACT_HINTS = (*((lit, 1, MAX_LEAD + 12) for lit in _MARK_LITERALS), ("@", 0, MAX_LEAD), ("JobEnvironment(", 0, None),
              ("ostname", 0, 12), ("Host name", 0, 12))


def file_facts(raws: Sequence[str], picked: Sequence[str] | None = None,
               width: int | None | bool = False) -> FileFacts:
    """The leading segments (as shapes) before a rank marker that start at least ``MIN_REPEATS`` of the
    file's lines, and the one host the file's shell prompts name. ``picked`` (the sample lines holding a
    ``FACT_HINTS`` string in its window) and ``width`` (``_wrap_width`` of the sample) may come computed."""
    sample = raws[:SAMPLE]
    cands: dict[str, int] = {}
    prompts: Counter[str] = Counter()
    tasks: set[int] = set()
    prompt = PROMPT
    for raw in (sample if picked is None else picked):
        # every marker holds one of these, within the window searched (a line that starts with its marker has
        # none there: the usual launcher-prefixed line costs no regex search)
        if raw.find("[rank", 1, MAX_LEAD + 12) >= 0 or raw.find("Rank ", 1, MAX_LEAD + 12) >= 0:
            m = MARK.search(raw, 1, MAX_LEAD + 12)
            if m is not None and 0 < m.start() <= MAX_LEAD:
                lead = raw[:m.start()]
                if strip(raw).rank is None:  # the table does not read this line's rank already
                    cands.setdefault(shape_of(lead), len(lead))
        if "@" in raw[:MAX_LEAD]:
            p = prompt.match(raw)
            if p:
                prompts[prompt_host(raw, p)] += 1
        named = _hostname_line(raw)
        if named:
            prompts[named] += 1
        if "JobEnvironment(" in raw:
            t = _TASK_HEADER.search(raw)
            if t:
                prompts[t["host"]] += 1
                tasks.add(int(t["rank"]))
    leads = set()
    for shape, n in list(cands.items())[:16]:
        count = 0
        for raw in sample:
            if len(raw) >= n and shape_of(raw[:n]) == shape:
                count += 1
                if count >= MIN_REPEATS:
                    leads.add(shape)
                    break
    hosts = tuple(prompts)
    return FileFacts(frozenset(leads), hosts[0] if len(hosts) == 1 else None, hosts,
                     host_marks(sample) if len(hosts) > 1 else (),
                     next(iter(tasks)) if len(tasks) == 1 else None,
                     _wrap_width(sample) if width is False else width)


def stated_host(raws: Sequence[str]) -> str | None:
    """The one host a file states on a line of its own ("Hostname: cn-251", submitit's task header), for a
    file none of whose lines became an event (a shell prompt counts only beside events: its "@" is no
    candidate literal, so only the full frame holds it)."""
    hosts = set()
    for raw in raws[:SAMPLE]:
        named = _hostname_line(raw)
        task = None if named or "JobEnvironment(" not in raw else _TASK_HEADER.search(raw)
        hosts.update(h for h in (named, task and task["host"]) if h)
    return next(iter(hosts)) if len(hosts) == 1 else None


def host_marks(sample: Sequence[str]) -> tuple[tuple[int, str], ...]:
    """The line numbers (from 1) of the sample's shell prompts and host-naming lines, with the host each names."""
    prompt = PROMPT
    out = []
    for i, raw in enumerate(sample, 1):
        if "@" in raw[:MAX_LEAD]:
            p = prompt.match(raw)
            if p:
                out.append((i, prompt_host(raw, p)))
                continue
        named = _hostname_line(raw)
        if named:
            out.append((i, named))
    return tuple(out)


def host_at(marks: Sequence[tuple[int, str]], line_no: int) -> str | None:
    """The host the last of ``marks`` at or before ``line_no`` names (None before the first)."""
    k = bisect_right(marks, (line_no, "\uffff"))
    return marks[k - 1][1] if k else None


WRAP_MIN = 60


def _wrap_width(sample: Sequence[str]) -> int | None:
    """The width of a terminal that hard-wrapped the file: its longest lines, when at least two have
    that very length (each wrapped piece but the last is exactly as wide as the terminal)."""
    lengths = Counter(len(r) for r in sample)
    if not lengths:
        return None
    width = max(lengths)
    return width if width >= WRAP_MIN and lengths[width] >= 2 else None
