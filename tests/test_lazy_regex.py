"""Module-level patterns are compiled on first use (``nccllens.lazy_regex``): a pattern that does not
compile must still fail a test, not a user's run."""

from __future__ import annotations

import importlib
import pickle
import pkgutil
import re

import nccllens
from nccllens import lazy_regex


def _modules():
    for info in pkgutil.walk_packages(nccllens.__path__, "nccllens."):
        yield importlib.import_module(info.name)


def _lazy_in(value, depth=0):
    if isinstance(value, lazy_regex.LazyPattern):
        yield value
    elif isinstance(value, (list, tuple)) and depth < 3:
        for item in value:
            yield from _lazy_in(item, depth + 1)
    elif isinstance(value, dict) and depth < 3:
        for item in value.values():
            yield from _lazy_in(item, depth + 1)


def test_every_module_pattern_compiles():
    found = [p for module in _modules() for value in vars(module).values() for p in _lazy_in(value)]
    assert len(found) > 200  # the parsers' patterns are found (the walk is not vacuous)
    for pattern in found:
        assert isinstance(pattern.compiled(), re.Pattern), pattern.pattern


def test_behaves_as_the_compiled_pattern():
    lazy = lazy_regex.compile(r"rank (?P<rank>\d+)", re.IGNORECASE)
    assert lazy.pattern == r"rank (?P<rank>\d+)"
    assert lazy.search("RANK 7 failed")["rank"] == "7"
    assert lazy.groupindex == {"rank": 1} and lazy.flags & re.IGNORECASE
    assert lazy.sub("rank ?", "rank 3 and rank 4") == "rank ? and rank ?"
    copy = pickle.loads(pickle.dumps(lazy))
    assert copy.search("rank 12")["rank"] == "12"
