"""Where nccllens keeps what earlier runs computed, and how such a file is read and written.

The folder is ``$NCCLLENS_CACHE_DIR``, else ``$XDG_CACHE_HOME/nccllens``, else ``~/.cache/nccllens``;
``NCCLLENS_NO_CACHE=1`` turns every cache off. Cache files are JSON (never pickle: the folder may be
shared or tampered with). A file that cannot be read, parsed or written is ignored: the caller then
computes what it needs as without a cache.

Entries are checked, never trusted: each carries an HMAC of its name and content under this user's
key (``.key`` in the folder, made once, mode 0600; a key file another user could have written turns
caching off). A signed file (``write_signed``/``read_signed``) is a JSON object whose first member is
the digest, taken over the file's own bytes after it, so that checking a file costs one HMAC pass over
its bytes, not a second serialisation of what was parsed (that was ~40 ms of a 4-line log's run). An entry whose digest does not match (a crafted or damaged file, another key, another
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


_HEAD = b'{"digest":"'
_DIGITS = 64  # hex digits of an HMAC-SHA256


def _mac(name: str, body: bytes) -> str | None:
    folder = directory()
    key = _key(str(folder)) if folder is not None else None
    if key is None:
        return None
    return hmac.new(key, name.encode("utf-8") + b"\0" + body, hashlib.sha256).hexdigest()


def write_signed(path: Path, name: str, data: dict) -> bool:
    """Write the object ``data`` (its keys strings, none named ``digest``) to ``path`` with the digest of
    ``name`` and its bytes as the first member; False when it was not written (no trusted key, not JSON)."""
    if not isinstance(data, dict) or not data or "digest" in data:
        return False
    try:
        text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    except (TypeError, ValueError, RecursionError):
        return False
    body = b"," + text[1:].encode("utf-8")
    digest = _mac(name, body)
    if digest is None:
        return False
    return _write_bytes(path, _HEAD + digest.encode("ascii") + b'"' + body)


def read_signed(path: Path, name: str) -> dict | None:
    """The object ``write_signed`` wrote to ``path`` under ``name`` (without its digest), or None when the
    file cannot be read, is not signed so, or its digest does not match ``name`` and its bytes."""
    try:
        raw = path.read_bytes()
    except OSError:
        return None
    start = len(_HEAD) + _DIGITS
    if not raw.startswith(_HEAD) or raw[start:start + 2] != b'",':
        return None
    body = raw[start + 1:]
    digest = _mac(name, body)
    if digest is None or not hmac.compare_digest(digest.encode("ascii"), raw[len(_HEAD):start]):
        return None
    try:
        data = json.loads(b"{" + body[1:])
    except (ValueError, RecursionError):
        return None
    return data if isinstance(data, dict) else None


def kept(kind: str, source: bytes, build):
    """``build(source)``, a JSON value that is a function of ``source`` alone, read back from the file named
    by ``kind`` and the digest of ``source`` when an earlier run kept it (e.g. a TOML data file parsed once:
    ~20 ms with tomllib, <1 ms as JSON). Values that do not survive JSON unchanged are not kept."""
    folder = directory()
    path = None if folder is None else folder / f"{kind}-{hashlib.sha256(source).hexdigest()[:24]}.json"
    held = None if path is None else read_signed(path, path.name)
    if held is not None and "value" in held:
        return held["value"]
    value = build(source)
    if path is not None:
        try:
            same = json.loads(json.dumps(value)) == value
        except (TypeError, ValueError, RecursionError):
            same = False
        if same:
            write_signed(path, path.name, {"value": value})
    return value


def _write_bytes(path: Path, data: bytes) -> bool:
    tmp = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.stem}-", suffix=".tmp")
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)
        return True
    except OSError:
        if tmp is not None:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
        return False


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
