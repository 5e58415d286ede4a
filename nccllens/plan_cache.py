"""The prefilter plan's slow parts, kept between runs.

Finding the literals every pattern branch requires (``prefilter.literals_of``: ~600 branches parsed
by Python's regex parser) and choosing the keys (``prefilter_keys.key_groups``) cost about 0.3 s per
run, on the main process, while the workers wait for the plan. Both are pure functions of their
inputs and of the code that computes them, so their results are kept in one JSON file per version of
that code, in the cache folder (``cache_files``). A file that cannot be read, parsed or written is
ignored: the plan is then computed as without a cache.
"""

from __future__ import annotations

import functools
from pathlib import Path

from nccllens import cache_files, prefilter, prefilter_keys
from nccllens.parse import dense_rows, masks

MAX_PATTERNS = 20_000  # past this many patterns (many custom rule sets) the cache is no longer extended
MAX_GROUPS = 16  # key choices kept (one per set of literals: per rule set); the oldest go first
_CODE = (prefilter, prefilter_keys, masks, dense_rows)  # the modules whose code decides the cached results


@functools.lru_cache(maxsize=1)
def _code_digest() -> str | None:
    """What names the cache file: the Python version and the code of ``_CODE`` (None: unreadable)."""
    return cache_files.code_digest(_CODE)


def _path() -> Path | None:
    directory, digest = cache_files.directory(), _code_digest()
    if directory is None or digest is None:
        return None
    return directory / f"plan-{digest}.json"


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


_held: tuple[int, int, int] | None = None  # what the cache held when this process read it (None: not read)


def load() -> None:
    """Teach this process what the cache holds (once per process)."""
    global _held
    if _held is not None:
        return
    _held = (0, 0, 0)
    path = _path()
    if path is None:
        return
    try:
        data = cache_files.read_json(path)
        signed = cache_files.verified(path.name, {"digest": data["digest"], "value": [data["literals"],
                                                                                       data["groups"],
                                                                                       data.get("watch", {})]})
        if signed is None:
            return  # crafted, damaged or another user's: rebuilt and written again at the end of the run
        literals, groups = _literals(data["literals"]), _groups(data["groups"])
        watch = _watch(data.get("watch", {}))
    except (ValueError, KeyError, TypeError):
        return
    prefilter.learn_literals(literals)
    prefilter_keys.learn_groups(groups)
    dense_rows.learn_watch(watch)
    _held = (len(literals), len(groups), len(watch))


def save() -> None:
    """Write what this process knows, if it learnt something the cache did not hold."""
    global _held
    literals, groups, watch = prefilter.known_literals(), prefilter_keys.known_groups(), dense_rows.known_watch()
    if _held is None or (len(literals), len(groups), len(watch)) <= _held or len(literals) > MAX_PATTERNS:
        return
    path = _path()
    if path is None:
        return
    data = {"literals": {p: [None if f is None else sorted(f), ci] for p, (f, ci) in sorted(literals.items())},
            # in the order learnt (the cache's first, then this run's): the newest MAX_GROUPS are kept
            "groups": [[list(k[0]), list(k[1]), list(v)] for k, v in list(groups.items())[-MAX_GROUPS:]],
            "watch": dict(list(watch.items())[-MAX_GROUPS:])}
    entry = cache_files.sign(path.name, [data["literals"], data["groups"], data["watch"]])
    if entry is None:
        return
    data["digest"] = entry["digest"]
    if cache_files.write_json(path, data):
        _held = (len(literals), len(groups), len(watch))
