"""The terminal report's lines without rich, where rich would only copy them: no colour and no wrapping
(output piped to a file or another program, the common case of scripts and CI).

Importing rich's console costs ~0.02 s of every run. When nothing is coloured or wrapped, what rich prints is
the text itself (less the control codes its ``Text`` drops), a line it may not wrap cut to the width with
``…``, a line it may wrap left as it is when it fits. ``PlainConsole`` does exactly that, and raises
``NeedsRich`` for anything else (a line rich would wrap, a tab it would expand, a control character): the
caller then lays the report out with rich, so the bytes are the same either way (tests compare them).
Cell widths of text that is not plain ASCII come from rich's own tables (``rich.cells``, imported only then).
"""

from __future__ import annotations

from nccllens import lazy_regex

_DROPPED = {code: None for code in (7, 8, 11, 12, 13)}  # the control codes rich's Text removes
_ONE_CELL = lazy_regex.compile(r"^[\x20-\x7e]*$")
_UNSURE = lazy_regex.compile(r"[\x00-\x09\x0e-\x1f\x7f-\x9f]")  # tabs and control characters rich treats its own way


class NeedsRich(Exception):
    """A line this console cannot lay out as rich would: lay the whole report out with rich."""


def cell_len(text: str) -> int:
    if _ONE_CELL.match(text):
        return len(text)
    from rich.cells import cell_len as rich_cell_len

    return rich_cell_len(text)


def ellipsis_cut(text: str, width: int) -> str:
    """``text`` cut to ``width`` cells with a final ``…``, as rich's ``overflow="ellipsis"`` does."""
    if cell_len(text) <= width:
        return text
    if _ONE_CELL.match(text):
        return text[: width - 1] + "…"
    from rich.cells import set_cell_size

    return set_cell_size(text, width - 1) + "…"


class PlainText:
    """The part of rich's ``Text`` the terminal report uses, without styles (nothing is coloured)."""

    __slots__ = ("plain",)

    def __init__(self, text: str = "", style: str | None = None) -> None:
        self.plain = text.translate(_DROPPED)

    def append(self, text: str | PlainText, style: str | None = None) -> PlainText:
        self.plain += text.plain if isinstance(text, PlainText) else text.translate(_DROPPED)
        return self

    def __add__(self, other: str | PlainText) -> PlainText:
        return PlainText(self.plain).append(other)

    def truncate(self, max_width: int, *, overflow: str | None = None) -> None:
        if overflow != "ellipsis":
            raise NeedsRich(f"overflow {overflow!r}")
        self.plain = ellipsis_cut(self.plain, max_width)

    def __str__(self) -> str:
        return self.plain


class PlainConsole:
    """Collects the lines rich's console would print for ``print`` calls without colour or wrapping."""

    Text = PlainText
    wrap = False

    def __init__(self, width: int) -> None:
        self.width = width
        self._lines: list[str] = []

    def print(self, text: PlainText | None = None, *, soft_wrap: bool = False, no_wrap: bool | None = None,
              overflow: str | None = None) -> None:
        plain = "" if text is None else text.plain
        if _UNSURE.search(plain):
            raise NeedsRich("a tab or a control character")
        for line in plain.split("\n"):
            if not soft_wrap and cell_len(line) > self.width:
                if not (no_wrap and overflow == "ellipsis"):
                    raise NeedsRich("a line rich would wrap")
                line = ellipsis_cut(line, self.width)
            self._lines.append(line)

    def getvalue(self) -> str:
        return "".join(line + "\n" for line in self._lines)
