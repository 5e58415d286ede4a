"""nccllens: find the quiet first cause of a failed distributed training job."""

from __future__ import annotations

__version__ = "0.1.0"

__all__ = ["__version__", "analyze"]


def analyze(paths, *, lang: str = "en", **options):
    """Analyze log files, folders or archives and return a :class:`nccllens.report.model.Report`."""
    from nccllens.analysis import run_analysis

    return run_analysis(paths, lang=lang, **options)
