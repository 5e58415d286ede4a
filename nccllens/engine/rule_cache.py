"""The rule set, as loaded and validated before, kept between runs.

Reading the 150 packaged rule files with ``tomllib`` and checking them costs ~0.15 s on every command,
more than the rest of a small run's start-up but importing polars. When every rule file loads without a
problem, the documents are kept in the cache folder (``cache_files``), under a key made of the code that
parses and checks them, the polars version, and every file's path, role and bytes: a file added, removed
or changed by one byte, or a new nccllens, gives another key and a full load. A rule set with any problem
is never kept, so its problems are reported on every run.

Within one process (a service or a script calling ``nccllens.analyze`` on ticket after ticket), the rules
a key named are also held in memory (``recall``/``remember``): the files are still listed, read and hashed
on every call, so a changed file still gives a new key, but the kept JSON of the set (~0.4 MB) is not
parsed and its digest checked again, nor the rules rebuilt from it.
"""

from __future__ import annotations

import functools
import hashlib
import json
import sys
from pathlib import Path

from nccllens import cache_files

FORMAT = "signed-bytes-1"  # how a file is laid out (cache_files.write_signed): another layout, another name
MAX_SETS = 8  # rule sets kept (the packaged one, with or without an organisation's folders); oldest go first
_CODE = ("nccllens.engine.loader", "nccllens.engine.validate", "nccllens.engine.rule", "nccllens.engine.patterns",
         "nccllens.engine.locate", "nccllens.events", "nccllens.taxonomy")


@functools.lru_cache(maxsize=1)
def _code_digest() -> str | None:
    polars = sys.modules.get("polars")
    modules = [sys.modules.get(name) for name in _CODE]
    if polars is None or None in modules:
        return None
    return cache_files.code_digest(modules, getattr(polars, "__version__", ""), FORMAT)


_MEMORY: dict[str, tuple] = {}  # key -> the rules it named, this process only (never written anywhere)


def recall(name: str | None) -> list | None:
    """The rules loaded under ``name`` earlier in this process (None: none, or caching is off)."""
    if name is None or cache_files.directory() is None:
        return None
    rules = _MEMORY.get(name)
    return None if rules is None else list(rules)


def remember(name: str | None, rules: list) -> None:
    """Hold ``rules`` (frozen, shared by every call) under ``name`` for this process; the oldest go first."""
    if name is None or cache_files.directory() is None:
        return
    _MEMORY.pop(name, None)
    _MEMORY[name] = tuple(rules)
    while len(_MEMORY) > MAX_SETS:
        del _MEMORY[next(iter(_MEMORY))]


def _path(name: str) -> Path | None:
    """One file per rule set (reading a run's set reads nothing else): the code's digest, then the set's."""
    directory, digest = cache_files.directory(), _code_digest()
    if directory is None or digest is None:
        return None
    return directory / f"rules-{digest}-{hashlib.sha256(name.encode()).hexdigest()[:16]}.json"


def _prune(path: Path) -> None:
    """Keep the MAX_SETS newest rule sets of this code; older ones go."""
    try:
        kept = sorted(path.parent.glob(path.name.rsplit("-", 1)[0] + "-*.json"), key=lambda p: p.stat().st_mtime)
        for old in kept[:-MAX_SETS]:
            old.unlink()
    except OSError:
        pass


def key(files: list[tuple[str | Path, bool]]) -> str | None:
    """What names this rule set: each file's path, whether its problems are reported, and its bytes
    (None: a file cannot be read; the full load then says why)."""
    digest = hashlib.sha256()
    for path, report in files:
        try:
            with open(path, "rb") as fh:
                data = fh.read()
        except OSError:
            return None
        digest.update(f"{path}\0{int(report)}\0{len(data)}\0".encode())
        digest.update(data)
    return digest.hexdigest()


def get(name: str | None) -> list[tuple[Path, dict]] | None:
    """The (file, document) pairs kept under ``name``, or None."""
    path = None if name is None else _path(name)
    if name is None or path is None:
        return None
    docs = (cache_files.read_signed(path, name) or {}).get("docs")
    if not isinstance(docs, list) or not all(
            isinstance(d, list) and len(d) == 2 and isinstance(d[0], str) and isinstance(d[1], dict) for d in docs):
        return None
    return [(Path(file), doc) for file, doc in docs]


def put(name: str | None, docs: list[tuple[Path, dict]]) -> None:
    """Keep ``docs`` under ``name`` if they survive JSON unchanged (TOML dates do not)."""
    path = None if name is None else _path(name)
    if name is None or path is None:
        return
    value = [[str(file), doc] for file, doc in docs]
    try:
        if json.loads(json.dumps(value)) != value:
            return
    except (TypeError, ValueError):
        return
    if cache_files.write_signed(path, name, {"docs": value}):
        _prune(path)
