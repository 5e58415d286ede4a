"""Renderers: one Report, many formats. ``render(report, fmt)`` picks one by name."""

from __future__ import annotations

import importlib
from collections.abc import Iterable

from nccllens.report.model import Report
from nccllens.terminal import safe_report

FORMATS = {
    "text": "nccllens.report.text",
    "json": "nccllens.report.json_out",
    "html": "nccllens.report.html",
    "md": "nccllens.report.markdown",
}
EXTENSIONS = {".json": "json", ".html": "html", ".htm": "html", ".md": "md", ".markdown": "md", ".txt": "text"}


TERMINAL_FORMATS = ("text", "md")  # text from logs is shown escaped there (nccllens.terminal)


def render(report: Report, fmt: str, **options: object) -> str:
    if fmt in TERMINAL_FORMATS:
        report = safe_report(report)
    return _module(fmt).render(report, **options)


def render_pieces(report: Report, fmt: str, **options: object) -> Iterable[str]:
    """The rendered text in pieces, for writing as they come: a format that can be built piece by piece
    (JSON) says so with a ``pieces`` function; the others are one piece."""
    module = _module(fmt)
    if fmt in TERMINAL_FORMATS:
        report = safe_report(report)
    if hasattr(module, "pieces"):
        return module.pieces(report, **options)
    return [module.render(report, **options)]


def _module(fmt: str):
    try:
        module = importlib.import_module(FORMATS[fmt])
    except ModuleNotFoundError:
        if fmt != "text":
            raise
        module = importlib.import_module("nccllens.report.plain")
    return module
