"""Text from logs, made safe to print on a terminal (or in Markdown read on one).

Control characters (C0 but tab and, in multi-line texts, newline; DEL; C1, of which 0x9b is an 8-bit
CSI), and so every escape sequence (colours, cursor moves, clear screen, OSC 8 links, OSC 52 clipboard
writes, window titles), and the bidirectional overrides that reorder what is shown (U+202A-U+202E,
U+2066-U+2069, U+061C, U+200E, U+200F) are shown as ``\\x1b`` / ``\\u202e`` escapes. :func:`safe_report`
applies this to every string of a report (the event table aside) before a text or Markdown renderer
sees it; HTML has its own escaping, JSON escapes control characters itself.
"""

from __future__ import annotations

import dataclasses
import re

from nccllens import lazy_regex

_UNSAFE = lazy_regex.compile("[\x00-\x08\x0a-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
_UNSAFE_KEEP_LINES = lazy_regex.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
MULTILINE = frozenset({"summary", "remediation", "texts"})  # report fields whose line breaks are kept


def _escape(m: re.Match) -> str:
    code = ord(m.group(0))
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def shown(text: str, keep_lines: bool = False) -> str:
    """``text`` with every control character and bidi override written as an escape."""
    rx = _UNSAFE_KEEP_LINES if keep_lines else _UNSAFE
    return rx.sub(_escape, text) if rx.search(text) else text


def _safe(value, keep_lines: bool):
    if isinstance(value, str):
        return shown(value, keep_lines)
    if isinstance(value, list):
        return [_safe(v, keep_lines) for v in value]
    if isinstance(value, tuple):
        return tuple(_safe(v, keep_lines) for v in value)
    if isinstance(value, dict):
        return {_safe(k, False): _safe(v, keep_lines) for k, v in value.items()}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        changes = {f.name: _safe(getattr(value, f.name), f.name in MULTILINE)
                   for f in dataclasses.fields(value) if f.name != "events" and f.init}
        return dataclasses.replace(value, **changes)
    return value


def safe_report(report):
    """A copy of ``report`` whose strings are all :func:`shown` (the event table is shared, not copied)."""
    return _safe(report, False)
