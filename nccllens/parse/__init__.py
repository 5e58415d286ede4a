"""Family parsers, in the order they are offered each surviving line.

``PARSERS`` is the one list of them: adding a parser is one entry there. Each module it names exports
``FAMILY``, ``PREFILTER`` and ``parse`` (see ``nccllens.parse.base``); its entry names the families of the
event kinds the module emits (a kind is ``family.name``: ``crash`` writes ``cpp.*`` kinds, ``frtrace``
``flight.*``). ``EVENT_FAMILIES``, what rules (``engine.validate``) and ``nccllens events --kind`` accept,
is derived from it. A module that is absent or broken is reported by ``load_families`` and left out, so
one bad parser never stops the others.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any

PARSERS: dict[str, tuple[str, ...]] = {  # module → the families of the event kinds it emits
    "nccl": ("nccl",), "kernel": ("kernel",), "torch": ("torch", "nccl"), "cpp": ("cpp",), "crash": ("cpp",),
    "torchrun": ("torchrun",), "python": ("python",), "slurm": ("slurm",), "k8s": ("k8s",), "ray": ("ray",),
    "frtrace": ("flight", "nccl"), "harness": ("harness",), "progress": ("progress",), "horovod": ("horovod",),
    "openmpi": ("openmpi",), "lightning": ("lightning",), "stacks": ("stack",), "p2ptest": ("p2ptest",),
    "loglevel": ("log",),  # offered last: ERROR/CRITICAL lines of loggers no other family knows
}
FAMILY_MODULES = tuple(PARSERS)
# kinds the extraction writes itself: other.text (a line only a rule pattern wanted), other.file_end,
# other.parser_error
BOOKKEEPING_FAMILY = "other"
EVENT_FAMILIES = tuple(sorted({f for families in PARSERS.values() for f in families} | {BOOKKEEPING_FAMILY}))


@dataclass(frozen=True)
class Family:
    """A parser family: its name, the regex its lines match, and its parse function."""

    name: str
    prefilter: str
    parse: Any


_CACHE: list[Family] | None = None
PROBLEMS: list[str] = []


def load_families() -> list[Family]:
    global _CACHE
    if _CACHE is not None:
        return _CACHE
    families = []
    for mod_name in FAMILY_MODULES:
        try:
            mod = importlib.import_module(f"nccllens.parse.{mod_name}")
            families.append(Family(mod.FAMILY, mod.PREFILTER, mod.parse))
        except Exception as exc:  # a missing or broken parser must not stop the others
            PROBLEMS.append(f"parser {mod_name!r} unavailable: {type(exc).__name__}: {exc}")
    _CACHE = families
    return families
