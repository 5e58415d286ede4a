"""Compiled engine databases kept between runs, in the cache folder (``cache_files``).

Compiling ~400 branches takes 0.3–2 s; loading a serialised database, milliseconds. An entry is named
by the library's version, this CPU's features (a database compiled for AVX-512 must not run on a CPU
without) and the expressions' digest, and carries an HMAC of its name and bytes under this user's key.
An entry that is missing, damaged, signed otherwise or refused by the library is ignored and rebuilt.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import os
import platform
import tempfile
from pathlib import Path

from nccllens import cache_files

_SIG = 64  # hex digits of the signature before the database's bytes


@functools.lru_cache(maxsize=1)
def _machine() -> str:
    """The library's version and what this CPU offers (Linux: the flags line of /proc/cpuinfo)."""
    import hyperscan as hs

    flags = ""
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace").splitlines():
            if line.startswith(("flags", "Features")):
                flags = line
                break
    return f"{getattr(hs, '__version__', '?')}|{platform.machine()}|{flags}"


def _path(digest: str) -> Path | None:
    folder = cache_files.directory()
    if folder is None:
        return None
    name = hashlib.sha256(f"{_machine()}|{digest}".encode()).hexdigest()[:24]
    return folder / f"hsdb-{name}.bin"


def load(digest: str):
    """The cached database for ``digest``, or None."""
    import hyperscan as hs

    path = _path(digest)
    if path is None:
        return None
    try:
        data = path.read_bytes()
    except OSError:
        return None
    sig, body = data[:_SIG].decode("ascii", errors="replace"), data[_SIG:]
    if cache_files.verified(path.name, {"digest": sig, "value": hashlib.sha256(body).hexdigest()}) is None:
        return None
    try:
        db = hs.loadb(body, mode=hs.HS_MODE_BLOCK)
        db.scratch = hs.Scratch(db)  # a loaded database comes without the scratch space a scan needs
        return db
    except Exception:  # noqa: BLE001 - whatever the library says of bad bytes, the entry is rebuilt
        return None


def save(digest: str, db) -> None:
    import hyperscan as hs

    path = _path(digest)
    if path is None:
        return
    try:
        body = hs.dumpb(db)
    except Exception:  # noqa: BLE001 - not kept, compiled again next time
        return
    signed = cache_files.sign(path.name, hashlib.sha256(body).hexdigest())
    if signed is None:
        return
    tmp = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".hsdb-", suffix=".tmp")
        with os.fdopen(fd, "wb") as fh:
            fh.write(signed["digest"].encode("ascii") + body)
        os.replace(tmp, path)
    except OSError:
        if tmp is not None:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
