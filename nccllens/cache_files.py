"""Where nccllens keeps what earlier runs computed, and how such a file is read and written.

The folder is ``$NCCLLENS_CACHE_DIR``, else ``$XDG_CACHE_HOME/nccllens``, else ``~/.cache/nccllens``;
``NCCLLENS_NO_CACHE=1`` turns every cache off. Cache files are JSON (never pickle: the folder may be
shared or tampered with). A file that cannot be read, parsed or written is ignored: the caller then
computes what it needs as without a cache.

Entries are checked, never trusted: each carries an HMAC of its name and content under this user's
key (``.key`` in the folder, made once, mode 0600; a key file another user could have written turns
caching off). An entry whose digest does not match (a crafted or damaged file, another key, another
name) is ignored and rebuilt, so a cache can make a run faster but never change a finding. Writes go
to a temporary name and are renamed, so concurrent runs see an old entry or a new one.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import hmac
import json
import os
import secrets
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


@functools.lru_cache(maxsize=4)
def _key(folder: str) -> bytes | None:
    """This user's signing key in ``folder`` (made on first use), or None when it cannot be trusted."""
    path = os.path.join(folder, ".key")
    for _ in range(2):
        try:
            fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
        except FileNotFoundError:
            _make_key(folder, path)
            continue
        except OSError:
            return None
        try:
            st = os.fstat(fd)
            key = os.read(fd, 64)
        finally:
            os.close(fd)
        mine = not hasattr(os, "getuid") or st.st_uid == os.getuid()
        return key if mine and not st.st_mode & 0o077 and len(key) == 32 else None
    return None


def _make_key(folder: str, path: str) -> None:
    with contextlib.suppress(OSError):
        os.makedirs(folder, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=".key-")  # mode 0600
        try:
            os.write(fd, secrets.token_bytes(32))
            os.close(fd)
            os.link(tmp, path)  # fails if another run made one first: theirs is used
        except OSError:
            pass
        finally:
            os.unlink(tmp)


def _digest(name: str, value) -> str | None:
    folder = directory()
    key = _key(str(folder)) if folder is not None else None
    if key is None:
        return None
    text = json.dumps([name, value], sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hmac.new(key, text.encode("utf-8"), hashlib.sha256).hexdigest()


def sign(name: str, value) -> dict | None:
    """``value`` with the digest of its name and content (None: no trusted key, keep nothing)."""
    digest = _digest(name, value)
    return None if digest is None else {"digest": digest, "value": value}


def verified(name: str, entry):
    """The value of a signed ``entry`` when its digest matches ``name`` and its content, else None."""
    if not isinstance(entry, dict) or not isinstance(entry.get("digest"), str) or "value" not in entry:
        return None
    try:
        digest = _digest(name, entry["value"])
    except (TypeError, ValueError, RecursionError):
        return None
    return entry["value"] if digest is not None and hmac.compare_digest(digest, entry["digest"]) else None
