"""NVIDIA driver messages in the kernel log (shared/reference/dmesg_xid.md §2.1–2.3).

``GPU_MESSAGES`` lists ``(kind, pattern, fields)``; the pattern is searched (not anchored) in the
message left after the timestamp/host prefix, and compiles in Python ``re`` and Rust ``regex``.
``fields(match)`` returns the typed columns and may override the level.

Xid line generations handled: very old ``NVRM: Xid (0000:01:00): 3, ...`` (no ``PCI:``), old (no
pid/name), middle (``pid=`` only), current (``pid='<unknown>', name=<unknown>``), MIG
(``GPU-I:`` / ``GPU-CI:`` in the parentheses), and bodies with no trailing text.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from nccllens import lazy_regex

Fields = Callable[[re.Match], dict]

_BDF = r"[0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}(?:\.[0-7])?"
_XID_REST = lazy_regex.compile(r"^(?:, ?pid=(?P<pid>'<unknown>'|<unknown>|\d+))?(?:, ?name=(?P<name>[^,]*))?(?:, ?(?P<text>.*))?$")


def pci(text: str | None) -> str | None:
    """``0000:3B:00.0`` → ``0000:3b:00``: the GPU bus id as Xid lines print it (a non-zero function stays)."""
    if not text:
        return None
    text = text.lower().strip(".:")
    if text.endswith(".0"):
        text = text[:-2]
    return text


def _xid(m: re.Match) -> dict:
    rest = _XID_REST.match(m["rest"] or "")
    out = {"xid": int(m["xid"]), "pci": pci(m["pci"])}
    if m["gi"]:
        out["key"] = f"GPU-I:{m['gi']}" + (f" GPU-CI:{m['ci']}" if m["ci"] else "")
    if rest:
        if rest["pid"] and rest["pid"].isdigit():
            out["pid"] = int(rest["pid"])
        if rest["name"] and rest["name"] != "<unknown>":
            out["value"] = rest["name"].strip()
        out["detail"] = (rest["text"] or "").strip() or None
    else:
        out["detail"] = (m["rest"] or "").lstrip(", ").strip() or None
    return out


def _sxid(m: re.Match) -> dict:
    fatal = m["sev"] == "Fatal"
    return {"xid": int(m["sxid"]), "pci": pci(m["pci"]), "key": f"nvswitch{m['sw']}",
            "value": m["sev"], "detail": (m["text"] or m["text2"] or "").strip() or None,
            "level": "critical" if fatal else "warning"}


def _uuid(m: re.Match) -> dict:
    return {"pci": pci(m["pci"]), "value": m["uuid"], "level": "info"}


def _fallen(m: re.Match) -> dict:
    return {"pci": pci(m["a"] or m["b"]), "xid": 79}


def _fallen_tail(m: re.Match) -> dict:
    return {"xid": 79}  # the PCI address is on 'NVRM: The NVIDIA GPU <bdf>', two lines before


def _gpu_header(m: re.Match) -> dict:
    return {"pci": pci(m["bdf"]), "level": "info", "key": "gpu_header"}


def _driver(m: re.Match) -> dict:
    return {"version": f"driver {m['ver']}", "level": "info"}


def _nvrm(m: re.Match) -> dict:
    return {}


def _peermem(m: re.Match) -> dict:
    return {"level": "error", "value": "nvidia-peermem"}


GPU_MESSAGES: list[tuple[str, str, Fields]] = [
    ("kernel.xid", r"NVRM: Xid \((?:PCI:)?(?P<pci>" + _BDF + r")(?: GPU-I:(?P<gi>\d+))?(?: GPU-CI:(?P<ci>\d+))?\): "
     r"(?P<xid>\d+)(?P<rest>.*)", _xid),
    ("kernel.sxid", r"nvidia-nvswitch(?P<sw>\d+): SXid \((?:PCI:)?(?P<pci>" + _BDF + r")\): (?P<sxid>\d+),? ?"
     r"(?:(?P<sev>Fatal|Non-fatal), (?P<text>.*)|(?P<text2>.*))", _sxid),
    ("kernel.gpu_uuid", r"NVRM: GPU at PCI:(?P<pci>[0-9a-fA-F:.]+): (?P<uuid>GPU-[0-9a-fA-F-]+)", _uuid),
    ("kernel.fallen_off_bus", r"NVRM: (?:GPU at (?:PCI:)?(?P<a>[0-9a-fA-F:.]+) has fallen off the bus"
     r"|GPU (?P<b>[0-9a-fA-F:.]+): GPU has fallen off the bus)", _fallen),
    ("kernel.fallen_off_bus", r"NVRM: fallen off the bus and is not responding", _fallen_tail),
    ("kernel.nvrm", r"NVRM: The NVIDIA GPU (?P<bdf>[0-9a-fA-F:.]+)\s*$", _gpu_header),
    ("kernel.nvrm", r"NVRM: loading NVIDIA UNIX .*?Kernel Module(?: for \w+)? +(?P<ver>\d+\.\d+(?:\.\d+)?)", _driver),
    ("kernel.nvrm", r"NVRM: ", _nvrm),
    ("kernel.nvrm", r"nvidia-peermem \S+ ERROR", _peermem),
]
