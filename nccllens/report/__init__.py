"""Renderers: one Report, many formats. ``render(report, fmt)`` picks one by name."""

from __future__ import annotations

import importlib

from nccllens.report.model import Report

FORMATS = {
    "text": "nccllens.report.text",
    "json": "nccllens.report.json_out",
    "html": "nccllens.report.html",
    "md": "nccllens.report.markdown",
}
EXTENSIONS = {".json": "json", ".html": "html", ".htm": "html", ".md": "md", ".markdown": "md", ".txt": "text"}


def render(report: Report, fmt: str, **options: object) -> str:
    try:
        module = importlib.import_module(FORMATS[fmt])
    except ModuleNotFoundError:
        if fmt != "text":
            raise
        module = importlib.import_module("nccllens.report.plain")
    return module.render(report, **options)
