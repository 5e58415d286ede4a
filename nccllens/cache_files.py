"""Where nccllens keeps what earlier runs computed, and how such a file is read and written.

The folder is ``$NCCLLENS_CACHE_DIR``, else ``$XDG_CACHE_HOME/nccllens``, else ``~/.cache/nccllens``;
``NCCLLENS_NO_CACHE=1`` turns every cache off. Cache files are JSON (never pickle: the folder may be
shared or tampered with). A file that cannot be read, parsed or written is ignored: the caller then
computes what it needs as without a cache.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import sys
import tempfile
from pathlib import Path


def directory() -> Path | None:
    """The cache folder (None: caching is off)."""
    if os.environ.get("NCCLLENS_NO_CACHE"):
        return None
    where = os.environ.get("NCCLLENS_CACHE_DIR")
    if where:
        return Path(where)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "nccllens"


def code_digest(modules, *extra: str) -> str | None:
    """A name for what ``modules``' code (and ``extra``) computes, with this Python's version (None:
    a module's source cannot be read)."""
    digest = hashlib.sha256(repr(sys.version_info[:2]).encode())
    for module in modules:
        try:
            digest.update(Path(module.__file__).read_bytes())
        except (OSError, TypeError):
            return None
    for text in extra:
        digest.update(text.encode())
    return digest.hexdigest()[:16]


def read_json(path: Path):
    """The JSON value in ``path``, or None when it cannot be read or parsed."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return None


def write_json(path: Path, data) -> bool:
    """Write ``data`` to ``path`` at once (readers see the old file or the new one, never half of one)."""
    tmp = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.stem}-", suffix=".tmp")
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(data, fh, ensure_ascii=False)
        os.replace(tmp, path)
        return True
    except (OSError, TypeError, ValueError):
        if tmp is not None:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
        return False
