"""Is this a log? Recognise scripts, configs, images and binaries from the name and first bytes."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator

from nccllens import lazy_regex

_NOT_LOG_SUFFIX = {
    ".py": "Python source", ".sh": "shell script", ".bash": "shell script", ".ipynb": "notebook",
    ".yaml": "configuration", ".yml": "configuration", ".toml": "configuration", ".ini": "configuration",
    ".cfg": "configuration", ".conf": "configuration", ".md": "document", ".rst": "document",
    ".html": "document", ".pdf": "document", ".png": "image", ".jpg": "image", ".jpeg": "image",
    ".gif": "image", ".svg": "image", ".webp": "image", ".pt": "model weights", ".pth": "model weights",
    ".safetensors": "model weights", ".bin": "binary data", ".so": "binary", ".o": "binary",
    ".parquet": "data file", ".csv": "data file", ".npy": "data file", ".npz": "data file",
    ".whl": "package", ".c": "source code", ".cpp": "source code", ".h": "source code",
}
_SHEBANG = lazy_regex.compile(rb"^#!\s*/\S*(?:python|bash|sh|env)")
_FR_NAME = lazy_regex.compile(r"(?:^|[/!_.-])(?:fr_trace|nccl_trace|flight|trace)[\w.-]*?(?:rank)?[_-]?\d+(?:\.json)?$", re.I)


def _suffix(name: str) -> str:
    base = name.rsplit("/", 1)[-1].rsplit("!", 1)[-1]
    if base.endswith(".gz"):
        base = base[:-3]
    dot = base.rfind(".")
    return base[dot:].lower() if dot > 0 else ""


_CONTROLS = bytes(b for b in range(32) if b not in (0, 9, 10, 13, 27))


def looks_binary(head: bytes) -> bool:
    """True for images, archives, executables and other non-text data (a few NULs are fine)."""
    if not head:
        return False
    sample = head[:8192]
    if sample.startswith((b"\x89PNG", b"\xff\xd8\xff", b"GIF8", b"%PDF", b"PK\x03\x04", b"\x7fELF")):
        return True
    if sample.count(0) > len(sample) // 10:
        return True
    controls = len(sample) - len(sample.translate(None, _CONTROLS))
    if controls > len(sample) // 20:
        return True
    if sample.isascii():  # nothing to decode badly
        return False
    text = sample.decode("utf-8", errors="replace")
    return text.count("\ufffd") > len(text) // 10


def skip_leading_nuls(first: bytes, rest: Iterator[bytes]) -> tuple[bytes, int]:
    """The first block without a leading run of NULs (``copytruncate`` leaves one where a writer kept
    its offset), reading on through blocks of nothing but NULs; and how many were skipped."""
    skipped = 0
    while first[:1] == b"\x00":
        kept = first.lstrip(b"\x00")
        skipped += len(first) - len(kept)
        first = kept or next(rest, b"")
    return first, skipped


def classify(name: str, head: bytes) -> tuple[str, str | None]:
    """Return (kind, skip_reason). kind: log, error_json, flight_json, flight_pickle, skipped."""
    base = name.rsplit("/", 1)[-1].rsplit("!", 1)[-1].lower()
    suffix = _suffix(name)
    if base == "error.json":
        return "error_json", None
    if head[:4] == b"PAR1" and base.endswith(".parquet"):
        return "events_parquet", None
    if head[:2] in (b"\x80\x02", b"\x80\x03", b"\x80\x04", b"\x80\x05"):
        if _FR_NAME.search(name) or b"entries" in head[:4096] or b"version" in head[:4096]:
            return "flight_pickle", None
        return "skipped", "not a log: pickled Python data"
    if suffix == ".json" or head.lstrip()[:1] == b"{":
        if b'"entries"' in head[:65536] and (b'"version"' in head[:65536] or b'"pg_config"' in head[:65536]):
            return "flight_json", None
        if suffix == ".json":
            return "skipped", "not a log: JSON data"
    if suffix in _NOT_LOG_SUFFIX:
        return "skipped", f"not a log: {_NOT_LOG_SUFFIX[suffix]}"
    if looks_binary(head):
        return "skipped", "not a log: binary data"
    if _SHEBANG.match(head):
        return "skipped", "not a log: script"
    return "log", None


def load_json(data: bytes):
    """Parse JSON without ever raising: None when it is not JSON."""
    try:
        return json.loads(data.decode("utf-8", errors="replace"))
    except (ValueError, RecursionError):
        return None
