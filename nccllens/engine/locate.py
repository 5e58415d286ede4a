"""Find the line of a key in a TOML file's text, so every problem can say ``path:line: message``.

A light line scanner, not a TOML parser: it follows table headers (``[en]``, ``[match.where]``),
arrays of tables (``[[examples]]``, numbered from 0), ``key = value`` lines, keys inside a one-line
inline table, and skips the body of multi-line strings. The document has already been parsed by
tomllib, so it is well formed.
"""

from __future__ import annotations

import re

from nccllens import lazy_regex

_HEADER = lazy_regex.compile(r"^\s*(\[\[?)\s*([^\]]+?)\s*\]\]?\s*(?:#.*)?$")
_KEY = lazy_regex.compile(r"""^\s*((?:[A-Za-z0-9_-]+|"[^"]*"|'[^']*')(?:\s*\.\s*(?:[A-Za-z0-9_-]+|"[^"]*"|'[^']*'))*)\s*=""")
_INLINE_KEY = lazy_regex.compile(r"""[{,]\s*([A-Za-z0-9_-]+|"[^"]*")\s*=""")


def _split_key(key: str) -> tuple[str, ...]:
    parts = re.findall(r"""[A-Za-z0-9_-]+|"[^"]*"|'[^']*'""", key)
    return tuple(p.strip("\"'") for p in parts)


class KeyLines:
    """Map key paths such as ``("examples", 1, "match")`` to 1-based line numbers."""

    def __init__(self, text: str) -> None:
        self._text = text
        self._lines: dict[tuple, int] | None = None  # scanned on first use: most files have no problem
        self.last_line = max(1, text.count("\n") + (0 if text.endswith("\n") else 1))

    @property
    def lines(self) -> dict[tuple, int]:
        if self._lines is None:
            self._lines = {}
            self._scan(self._text)
        return self._lines

    def _scan(self, text: str) -> None:
        assert self._lines is not None
        table: tuple = ()
        counters: dict[tuple, int] = {}
        closing: str | None = None
        for number, line in enumerate(text.splitlines(), start=1):
            if closing is not None:
                if closing in line:
                    closing = None
                continue
            header = _HEADER.match(line)
            if header and not _KEY.match(line):
                name = _split_key(header.group(2))
                if header.group(1) == "[[":
                    index = counters.get(name, -1) + 1
                    counters[name] = index
                    self._lines.setdefault(name, number)
                    table = (*name, index)
                else:
                    table = name
                self._lines.setdefault(table, number)
                continue
            key = _KEY.match(line)
            if not key:
                continue
            path = (*table, *_split_key(key.group(1)))
            self._lines.setdefault(path, number)
            rest = line[key.end() :].strip()
            if rest.startswith("{"):
                for inner in _INLINE_KEY.finditer(rest):
                    self._lines.setdefault((*path, inner.group(1).strip('"')), number)
            for quote in ('"""', "'''"):
                if rest.startswith(quote) and rest.count(quote) == 1:
                    closing = quote

    def line_of(self, *path) -> int:
        """The line of ``path``, else of its nearest enclosing key or table, else 1."""
        path = tuple(path)
        while path:
            if path in self.lines:
                return self.lines[path]
            path = path[:-1]
        return 1
