"""The time a line's prefix states: RFC 3339 or ``YYYY-MM-DD HH:MM:SS[.,]frac``, in UTC where it says its offset."""

from __future__ import annotations

from datetime import datetime, timedelta

from nccllens import lazy_regex

_CRI_TAIL = lazy_regex.compile(r" (?:stdout|stderr) [FP]$")
_OFFSET = lazy_regex.compile(r"([+-])(\d\d):(\d\d)$")


def parse_ts(text: str) -> datetime | None:
    """A stamp's time in UTC (naive, as a ``Z`` stamp reads): an offset (``+02:00``) is taken off."""
    text = _CRI_TAIL.sub("", text)
    shift = _OFFSET.search(text)
    if shift:
        text = text[:shift.start()]
    text = text.rstrip("Z").replace("T", " ").replace(",", ".")
    head, _, frac = text.partition(".")
    try:
        ts = datetime.strptime(head, "%Y-%m-%d %H:%M:%S")
    except ValueError:
        return None
    if frac.isdigit():
        ts = ts.replace(microsecond=int((frac + "000000")[:6]))
    if shift:
        sign = 1 if shift[1] == "+" else -1
        ts -= sign * timedelta(hours=int(shift[2]), minutes=int(shift[3]))
    return ts
