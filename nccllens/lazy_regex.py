"""Regular expressions compiled on first use.

The parsers and analyses hold ~400 patterns as module constants. Compiling them all when the modules
load cost ~0.1 s of every run (measured on ``nccllens analyze`` of a 4-line log), although a small log
reaches a few of them. ``compile`` returns a stand-in that compiles on its first use; from then on its
methods are the compiled pattern's own (kept on the instance, no indirection per call).
"""

from __future__ import annotations

import re

# what the stand-in copies from the compiled pattern on first use
_ATTRS = ("match", "search", "fullmatch", "finditer", "findall", "sub", "subn", "split", "scanner", "flags",
          "groups", "groupindex")


class LazyPattern:
    """``re.compile(pattern, flags)``, done on first use. ``pattern`` is there before it."""

    def __init__(self, pattern: str, flags: int = 0) -> None:
        self.pattern = pattern
        self._flags = flags

    def __getattr__(self, name: str):  # only for names not yet on the instance
        if name.startswith("_"):
            raise AttributeError(name)
        compiled = self.compiled()
        if name not in _ATTRS:
            raise AttributeError(name)
        return getattr(compiled, name)

    def compiled(self) -> re.Pattern:
        """The compiled pattern (compiled now if it was not yet)."""
        held = self.__dict__.get("_compiled")
        if held is None:
            held = self.__dict__["_compiled"] = re.compile(self.pattern, self._flags)
            for attr in _ATTRS:
                self.__dict__[attr] = getattr(held, attr)
        return held

    def __reduce__(self):
        return (LazyPattern, (self.pattern, self._flags))

    def __repr__(self) -> str:
        return f"lazy_regex.compile({self.pattern!r}, {self._flags!r})"


def compile(pattern: str, flags: int = 0) -> LazyPattern:  # noqa: A001 - mirrors re.compile
    """``re.compile(pattern, flags)`` on first use."""
    return LazyPattern(pattern, flags)
