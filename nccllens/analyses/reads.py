"""What an analysis reads, declared beside it, so that ``run_all`` skips one whose inputs are absent.

An analysis that can find something only in events of certain kinds (``torch.watchdog_timeout``,
``flight.entry``…) or only in summary rows of certain dense families (``nccl.coll``…) says so with
``@reads(...)``: every query it makes starts from those rows, so without them it returns no finding.
``run_all`` looks once at the kinds and families present and calls such an analysis only when one of its
inputs is there, instead of paying its one to six small polars queries (~0.3 ms each) for nothing. An
analysis that also reads other things (error levels, hosts, the rank status) declares nothing and always
runs. ``tests/forensics/test_reads.py`` checks the declarations against every scenario fixture: the same
findings with and without skipping, and none left once an analysis's declared kinds are taken away.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from typing import TypeVar

F = TypeVar("F", bound=Callable)


def reads(*kinds: str, summaries: tuple[str, ...] = ()) -> Callable[[F], F]:
    """Declare the event ``kinds`` (a trailing ``*``: every kind with that prefix) and the summary
    ``summaries`` families without all of which the analysis finds nothing."""
    def mark(fn: F) -> F:
        fn.inputs = (tuple(kinds), tuple(summaries))  # type: ignore[attr-defined]
        return fn
    return mark


def declared(fn: Callable) -> tuple[tuple[str, ...], tuple[str, ...]] | None:
    """(kinds, summary families) that ``fn`` declared, or None: it always runs."""
    return getattr(fn, "inputs", None)


def has_kind(kinds: Collection[str], wanted: str) -> bool:
    if wanted.endswith("*"):
        return any(k.startswith(wanted[:-1]) for k in kinds)
    return wanted in kinds


def can_find(fn: Callable, kinds: Collection[str], families: Collection[str]) -> bool:
    """False only when ``fn`` declared its inputs and none of them is among the ``kinds`` of the events
    and the ``families`` of the summaries present."""
    inputs = declared(fn)
    if inputs is None:
        return True
    want_kinds, want_families = inputs
    return any(has_kind(kinds, k) for k in want_kinds) or any(f in families for f in want_families)
