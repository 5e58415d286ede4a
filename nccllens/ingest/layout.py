"""What a path tells about where a log came from: host, rank, local rank, restart attempt.

Layouts understood:
- torchrun ``--log-dir``: ``<run_id>_<rand>/attempt_<k>/<local_rank>/{stdout,stderr}.log`` and ``error.json``;
- per-rank files: ``rank3.log``, ``rank_3.txt``, ``rank-3/...``, ``log_rank3``;
- per-node folders or files: ``node07/dmesg.txt``, ``gpu-node-07.log``, ``dmesg-node07.txt``;
- ``NCCL_DEBUG_FILE`` captures named ``<prefix>.<host>.<pid>`` (e.g. ``nccl.node07.12345.log``).
Hints from a path are defaults: a line that names its own host or rank wins. A rank comes only from the
file's own name and its parent folder (``runs/rank_sweep_4/...`` names no rank); temporary folders
(``tmpab12cd34``, ``pytest-of-user``) name no host; a container's short id (``8d6bf97c3bf4``) does.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from nccllens import lazy_regex

_ATTEMPT = lazy_regex.compile(r"(?:^|/)attempt_(\d+)/(\d+)/(?:stdout|stderr|error)(?:\.log|\.json)?$")
_ATTEMPT_ONLY = lazy_regex.compile(r"(?:^|/)attempt_(\d+)(?:/|$)")
_RANK = lazy_regex.compile(r"(?:^|[/_.-])rank[_-]?(\d{1,6})(?=$|[/_.-])", re.I)
_NCCL_FILE = lazy_regex.compile(r"(?:^|/)nccl[\w-]*[._]([A-Za-z][\w-]*?)[._](\d{2,8})(?:\.(?:log|txt|out))?$", re.I)
# words that start many host names (``worker-3``, ``node07``, ``dgx-a100-01``) and words that name a log, not a host
_ROLE_WORDS = r"node|host|gpu|worker|compute|master|server|dgx|hgx|cn|gn|ip|trainer|pod"
_LOG_WORDS = (r"dmesg|kern|kernel|syslog|journal|journalctl|console|stdout|stderr|log|logs|nccl|torchrun|output|"
              r"train|training|job|out|err|messages")
_HOSTLIKE = lazy_regex.compile(
    r"^(?:(?:" + _ROLE_WORDS + r")[-_]?[a-z0-9][a-z0-9.-]*"  # a role word, then host characters (no second "_")
    r"|[a-z]{2,}\d{2,}(?:[-.][a-z0-9]+)*"
    r"|(?=[a-f]*\d)(?=\d*[a-f])[0-9a-f]{12})$",  # a container's short id names its host: 8d6bf97c3bf4
    re.I,
)
_NOISE_WORDS = lazy_regex.compile(r"^(?:" + _LOG_WORDS + r")$", re.I)
_NOT_HOSTS = lazy_regex.compile(r"^(?:(?:rank|attempt|local|default|node_rank|worker_group|slurm|job|run|exp|step|epoch|iter|part|v)"
                        r"[-_]?\d*"
                        # temporary folders (mkdtemp, pytest, staging copies) are not hosts
                        r"|tmp[\w.-]*|temp[\w.-]*|pytest-[\w-]*|popen-gw\d+|case-\d+)$", re.I)


@dataclass(frozen=True)
class PathHints:
    """What a file's path says of who wrote it (host, rank, attempt...)."""

    host: str | None = None
    rank: int | None = None
    local_rank: int | None = None
    attempt: int | None = None
    # what the file's own lines say of all of them (``parse.file_facts.file_facts``): the shapes of the
    # leading segments that repeat before a rank marker
    leads: frozenset[str] = frozenset()
    line_host: str | None = None  # the one host the file's shell prompts or launcher header name
    host_marks: tuple[tuple[int, str], ...] = ()  # (line number, host) of each prompt where they name several
    line_rank: int | None = None  # the one global rank the file's launcher header names (submitit)
    wrap: int | None = None  # the width a terminal hard-wrapped the file's long lines at


_SEPARATORS = lazy_regex.compile(r"[/!]")
_LOG_SUFFIXES = lazy_regex.compile(r"(?:\.(?:log|txt|out|err|gz|json))+$", re.I)
_NOISE_AFFIX = lazy_regex.compile(r"^(?:dmesg|kern|syslog|journal|console|nccl)[-_]|[-_](?:dmesg|kern|syslog|journal|console)$",
                          re.I)
_STEM_PARTS = lazy_regex.compile(r"[._]")


# a role word with only a log's word after it names no host (``worker_stderr``, ``node_log``, ``trainer-output``)
_ROLE_AND_NOISE = lazy_regex.compile(r"^(?:" + _ROLE_WORDS + r")[-_](?:" + _LOG_WORDS + r")$", re.I)


def _hostlike(piece: str) -> bool:
    return bool(piece) and not _NOISE_WORDS.match(piece) and not _NOT_HOSTS.match(piece) \
        and not _ROLE_AND_NOISE.match(piece) and bool(_HOSTLIKE.match(piece))


@functools.lru_cache(maxsize=1024)
def _folder_candidates(folder: str) -> tuple[str, ...]:
    """The host-like names among a folder path's parts (the files of one folder share them)."""
    return tuple(p for p in _SEPARATORS.split(folder) if p not in (".", "..") and _hostlike(p))


def _host_candidates(path: str) -> list[str]:
    cut = max(path.rfind("/"), path.rfind("!"))  # the file's own name follows the last separator
    out = list(_folder_candidates(path[:max(cut, 0)]))
    last = path[cut + 1:]
    if last in ("", ".", ".."):
        return out
    stem = _LOG_SUFFIXES.sub("", last)
    # dmesg-node07 / node07-dmesg: drop the noise word first
    bare = _NOISE_AFFIX.sub("", stem)
    for piece in (bare, stem):
        if _hostlike(piece):
            out.append(piece)
            return out
    # one piece of a compound name (``node07.stdout``, ``nccl_gpu-07``), when its other pieces are words
    # that name no host (``mpirun_np10_tail`` names none: ``np10`` is a flag there, not a machine)
    pieces = [p for p in _STEM_PARTS.split(stem) if p]
    named = [p for p in pieces if _hostlike(p)]
    if len(named) == 1 and all(p in named or _NOISE_WORDS.match(p) or _NOT_HOSTS.match(p) or p.isdigit()
                               for p in pieces):
        out.append(named[0])
    return out


def hints_for(path: str) -> PathHints:
    """Host/rank/local-rank/attempt that the path alone suggests."""
    norm = path.replace("\\", "/")
    attempt = local_rank = rank = None
    m = _ATTEMPT.search(norm)
    if m:
        attempt, local_rank = int(m[1]), int(m[2])
    else:
        m = _ATTEMPT_ONLY.search(norm)
        if m:
            attempt = int(m[1])
    ranks = _RANK.findall("/".join(norm.replace("!", "/").split("/")[-2:]))  # the file's name and its folder
    if ranks:
        rank = int(ranks[-1])
    host = None
    m = _NCCL_FILE.search(norm)
    if m:
        host = m[1]
    if host is None:
        hosts = _host_candidates(norm)
        host = hosts[-1] if hosts else None
    return PathHints(host=host, rank=rank, local_rank=local_rank, attempt=attempt)
