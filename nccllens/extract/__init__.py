"""Extraction: sources of bytes → tables (events, inputs, dense summaries). One-way, in stages:

1. ``plan``    — every family PREFILTER and rule pattern → what decides which lines reach Python:
                 the compiled ``engine`` (Hyperscan, patterns rewritten by ``superset``, database kept
                 by ``db_cache``) or, without it, the plain path's literals and regex groups;
2. ``source``  — one source → its event rows, inventory entry and summaries (pieces scanned, survivors
                 handed to the family parsers in ``nccllens.parse``);
3. ``batch``   — many small sources as one frame (uses ``source`` for anything unusual);
4. ``jobs``    — sources grouped into jobs, run in the ``workers`` (processes forked before polars loads);
5. ``tables``  — paths → the three tables of the whole input, the public entry point.

Each stage imports only the ones before it (tests/extract/test_package.py checks it). The names below
are the package's contract; they load on first use, so that importing ``nccllens.extract.workers``
(which must happen before polars loads) costs nothing else.
"""

from __future__ import annotations

import importlib

_PUBLIC = {
    "combined_prefilter": "plan",
    "extract_source": "source",
    "extract_source_tables": "source",
    "extract": "tables",
    "extract_tables": "tables",
    "events_from_text": "tables",
}
__all__ = sorted(_PUBLIC)


def __getattr__(name: str):
    module = _PUBLIC.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{module}"), name)
