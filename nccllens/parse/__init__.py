"""Family parsers, in the order they are offered each surviving line.

Each module listed in ``FAMILY_MODULES`` exports ``FAMILY``, ``PREFILTER`` and ``parse`` (see
``nccllens.parse.base``). A module that is absent or broken is reported by ``load_families`` and
left out, so one bad parser never stops the others.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any

FAMILY_MODULES = ("nccl", "kernel", "torch", "cpp", "crash", "torchrun", "python", "slurm", "k8s", "frtrace", "harness", "progress", "horovod", "openmpi", "lightning", "stacks", "loglevel")


@dataclass(frozen=True)
class Family:
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
