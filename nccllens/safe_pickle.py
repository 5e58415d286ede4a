"""Load pickled flight-recorder dumps without ever running code from them.

A pickle can name any importable callable and have the loader call it (``__reduce__``), so the
standard loader must never see an untrusted file. Flight-recorder dumps hold only plain data
(dicts, lists, tuples, strings, numbers, booleans, None), which the pickle format encodes with
opcodes that need no class lookup. ``loads`` therefore refuses every global lookup except the two
harmless container types older protocols spell by name, refuses persistent ids, and bounds the
input size, its opcodes before anything is built and the result's elements and depth after
(``nccllens.data_bounds``: allocation and shared-reference bombs).
"""

from __future__ import annotations

import io
import pickle

from nccllens import data_bounds

MAX_BYTES = data_bounds.MAX_BYTES
_ALLOWED = {("builtins", "set"): set, ("builtins", "frozenset"): frozenset,
            ("__builtin__", "set"): set, ("__builtin__", "frozenset"): frozenset}


class UnsafePickleError(pickle.UnpicklingError):
    """The data asked for something other than plain containers and scalars."""


class _PlainDataUnpickler(pickle.Unpickler):
    def find_class(self, module: str, name: str):
        allowed = _ALLOWED.get((module, name))
        if allowed is None:
            raise UnsafePickleError(
                f"refused to load {module}.{name}: a flight-recorder dump holds only plain data, "
                "so this pickle is not one (or was tampered with); nothing from it was run")
        return allowed

    def persistent_load(self, pid):
        raise UnsafePickleError("refused a persistent id: not a plain-data pickle")


def loads(data: bytes, max_bytes: int = MAX_BYTES):
    """Unpickle plain data only; raise :class:`UnsafePickleError` for anything else, and
    :class:`nccllens.data_bounds.OverBound` for plain data over a bound."""
    if len(data) > max_bytes:
        raise UnsafePickleError(f"pickle too large ({len(data)} bytes > {max_bytes}): not read")
    try:
        data_bounds.scan_pickle(data)
        value = _PlainDataUnpickler(io.BytesIO(data)).load()
        data_bounds.check_tree(value)
        return value
    except (UnsafePickleError, data_bounds.OverBound):  # over a bound: the caller skips the file
        raise
    except (pickle.UnpicklingError, EOFError, ValueError, TypeError, IndexError, KeyError,
            AttributeError, RecursionError, MemoryError, OverflowError, UnicodeDecodeError) as exc:
        raise UnsafePickleError(f"not a readable pickle: {type(exc).__name__}: {exc}") from None
