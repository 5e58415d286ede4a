"""The prefilter plan's slow parts, kept between runs.

Finding the literals every pattern branch requires (``prefilter.literals_of``: ~600 branches parsed
by Python's regex parser) and choosing the keys (``prefilter_keys.key_groups``) cost about 0.3 s per
run, on the main process, while the workers wait for the plan. Both are pure functions of their
inputs and of the code that computes them, so their results are kept in one JSON file per version of
that code, in the cache folder (``cache_files``). A file that cannot be read, parsed or written is
ignored: the plan is then computed as without a cache.

The finished products are kept too (``recall``/``keep``: the whole plan of a set of patterns, the index
of their branches), so that a run whose patterns were seen before builds nothing: ~50 ms of every run,
measured on a 4-line log, most of what remained of a small run's start-up beside the imports. Each
product is a file of its own (~50-70 KB), read when asked for: kept in the parts' file, the products of
16 rule sets made a 2 MB file that every run read and checked whole (~70 ms of a 4-line log's run).
"""

from __future__ import annotations

import functools
import importlib
from pathlib import Path

from nccllens import cache_files, prefilter, prefilter_keys
from nccllens.parse import dense_rows

FORMAT = "signed-bytes-1"  # how a file is laid out (cache_files.write_signed): another layout, another name
MAX_PATTERNS = 20_000  # past this many patterns (many custom rule sets) the cache is no longer extended
MAX_GROUPS = 16  # key choices, and products of each kind, kept (one per rule set); the oldest go first
# the modules whose code decides the cached results (by name: some of them keep their results here)
_CODE = ("nccllens.prefilter", "nccllens.prefilter_keys", "nccllens.parse.masks", "nccllens.parse.dense_rows",
         "nccllens.parse.dense", "nccllens.regex_groups", "nccllens.extract.superset", "nccllens.extract.tails",
         "nccllens.extract.engine", "nccllens.extract.plan")


@functools.lru_cache(maxsize=1)
def _code_digest() -> str | None:
    """What names the cache file: the Python version and the code of ``_CODE`` (None: unreadable)."""
    try:
        modules = [importlib.import_module(name) for name in _CODE]
    except ImportError:
        return None
    return cache_files.code_digest(modules, FORMAT)


def _path(kind: str = "", key: str = "") -> Path | None:
    """The file of the plan's parts (literals, key groups, watch patterns), or of one ``kind`` product."""
    directory, digest = cache_files.directory(), _code_digest()
    if directory is None or digest is None:
        return None
    return directory / (f"plan-{digest}-{kind}-{key[:24]}.json" if kind else f"plan-{digest}.json")


def _literals(data) -> dict[str, tuple[frozenset[str] | None, bool]]:
    out = {}
    for pattern, (found, nocase) in data.items():
        if not isinstance(pattern, str) or not isinstance(nocase, bool):
            raise ValueError("bad literal entry")
        if found is not None and not all(isinstance(s, str) for s in found):
            raise ValueError("bad literal entry")
        out[pattern] = (None if found is None else frozenset(found), nocase)
    return out


def _groups(data) -> dict[tuple[tuple[str, ...], tuple[str, ...]], tuple[str, ...]]:
    out = {}
    for literals, nocase, groups in data:
        parts = (literals, nocase, groups)
        if not all(isinstance(p, list) and all(isinstance(s, str) for s in p) for p in parts):
            raise ValueError("bad group entry")
        out[(tuple(literals), tuple(nocase))] = tuple(groups)
    return out


def _watch(data) -> dict[str, dict[str, str]]:
    if not isinstance(data, dict) or not all(isinstance(k, str) and isinstance(v, dict) and all(
            isinstance(f, str) and isinstance(r, str) for f, r in v.items()) for k, v in data.items()):
        raise ValueError("bad watch entry")
    return data


_MEMO: dict[str, dict[str, object]] = {}  # per kind, per key: a finished product (a JSON value)


def recall(kind: str, key: str):
    """The ``kind`` product kept under ``key`` (this run's or the cache's), or None. Each product is a file of
    its own, read only when asked for: a run reads the plan and index of its own patterns, not every set's."""
    held = _MEMO.get(kind, {}).get(key)
    if held is not None:
        return held
    path = _path(kind, key)
    data = None if path is None else cache_files.read_signed(path, path.name)
    if data is None or data.get("key") != key or "value" not in data:
        return None
    _MEMO.setdefault(kind, {})[key] = data["value"]
    return data["value"]


def keep(kind: str, key: str, value) -> None:
    """Remember a product (a JSON value; ``key`` names everything it was computed from), for later runs:
    written now, in a file of its own (a product built after ``save`` is kept too)."""
    _MEMO.setdefault(kind, {})[key] = value
    path = _path(kind, key)
    if path is not None and cache_files.write_signed(path, path.name, {"key": key, "value": value}):
        _prune(path.name.rsplit("-", 1)[0] + "-*.json", path.parent)


def remembered(kind: str, material, build, dump, undump):
    """``build()``'s product for ``material`` (any JSON value naming what it is computed from): read back with
    ``undump`` when a cache holds it, else built and kept as ``dump(product)``. An entry that does not read back
    (``undump`` raises) is built again."""
    import hashlib
    import json

    key = hashlib.sha256(json.dumps(material).encode()).hexdigest()
    held = recall(kind, key)
    if held is not None:
        try:
            return undump(held)
        except (TypeError, ValueError, KeyError, AttributeError):
            pass  # not what ``dump`` writes: built again
    built = build()
    keep(kind, key, dump(built))
    return built


_held: tuple[int, int, int] | None = None  # what the cache held when this process read it (None: not read)


def load() -> None:
    """Teach this process the plan's parts the cache holds (once per process)."""
    global _held
    if _held is not None:
        return
    _held = (0, 0, 0)
    path = _path()
    data = None if path is None else cache_files.read_signed(path, path.name)
    if data is None:
        return  # none, crafted, damaged or another user's: rebuilt and written again at the end of the run
    try:
        literals, groups = _literals(data["literals"]), _groups(data["groups"])
        watch = _watch(data["watch"])
    except (ValueError, KeyError, TypeError, AttributeError):
        return
    prefilter.learn_literals(literals)
    prefilter_keys.learn_groups(groups)
    dense_rows.learn_watch(watch)
    _held = (len(literals), len(groups), len(watch))


def save() -> None:
    """Write the parts if this process learnt some the cache did not hold."""
    global _held
    literals, groups, watch = prefilter.known_literals(), prefilter_keys.known_groups(), dense_rows.known_watch()
    now = (len(literals), len(groups), len(watch))
    if _held is None or now <= _held or len(literals) > MAX_PATTERNS:
        return
    path = _path()
    if path is None:
        return
    data = {"literals": {p: [None if f is None else sorted(f), ci] for p, (f, ci) in sorted(literals.items())},
            # in the order learnt (the cache's first, then this run's): the newest MAX_GROUPS are kept
            "groups": [[list(k[0]), list(k[1]), list(v)] for k, v in list(groups.items())[-MAX_GROUPS:]],
            "watch": dict(list(watch.items())[-MAX_GROUPS:])}
    if cache_files.write_signed(path, path.name, data):
        _held = now


def _prune(pattern: str, folder: Path) -> None:
    """Keep the MAX_GROUPS newest products of one kind; older ones go."""
    try:
        kept = sorted(folder.glob(pattern), key=lambda p: p.stat().st_mtime)
        for old in kept[:-MAX_GROUPS]:
            old.unlink()
    except OSError:
        pass
