"""What ``FileContext.following`` returns: the lines after a record's first one, read lazily."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from nccllens.parse.base import Line


class Following(Sequence):
    """The lines after a record's first one, read only as far as the parser looks: a record that ends at
    its next line (a one-line traceback before a new log record) no longer costs the 200 lines a
    traceback may have (a file of 2,000 such records: 5.5 s of its 10). Iterating, indexing, slicing
    from the start and truthiness read what they need; ``len`` and negative indexes read up to ``n``."""

    def __init__(self, lines: Iterator[Line]):
        self._lines: Iterator[Line] | None = lines
        self._got: list[Line] = []

    def _read(self, upto: int | None) -> None:
        while self._lines is not None and (upto is None or len(self._got) < upto):
            nxt = next(self._lines, None)
            if nxt is None:
                self._lines = None
            else:
                self._got.append(nxt)

    def __iter__(self) -> Iterator[Line]:
        i = 0
        while True:
            self._read(i + 1)
            if i >= len(self._got):
                return
            yield self._got[i]
            i += 1

    def __len__(self) -> int:
        self._read(None)
        return len(self._got)

    def __bool__(self) -> bool:
        self._read(1)
        return bool(self._got)

    def __getitem__(self, index):
        if isinstance(index, slice):
            whole = index.step not in (None, 1) or index.stop is None or index.stop < 0 or (index.start or 0) < 0
            self._read(None if whole else index.stop)
        else:
            self._read(None if index < 0 else index + 1)
        return self._got[index]

    def __eq__(self, other) -> bool:
        return list(self) == list(other) if isinstance(other, (list, Following)) else NotImplemented

    __hash__ = None  # type: ignore[assignment]
