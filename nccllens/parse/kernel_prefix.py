"""Timestamp and host prefixes of kernel-log lines (shared/reference/dmesg_xid.md §1).

``split_kernel_prefix(message, year)`` strips, in order, whatever is present of:

- ``/dev/kmsg`` records ``prio,seq,usec,flags;``            → ts_kind ``boot`` (``ts_rel``)
- talosctl ``kern: warning: [ISO]: ``                         → ``absolute``
- ``dmesg -x`` facility/level ``kern  :warn  : ``
- ``dmesg -T`` ``[Sun Jan  5 18:28:55 2025] ``                → ``absolute``
- ISO wall clock (``dmesg --time-format=iso`` comma decimals, rsyslog RFC 3339,
  ``journalctl -o short-iso``)                                → ``absolute`` (offset dropped: local time as printed)
- syslog ``Mon DD HH:MM:SS[.f]`` (journalctl short/short-precise, rsyslog kern.log) → ``no_year``
- ``host ident[pid]: `` after a wall clock (or ``kernel: `` alone, as ``grep`` of a journal prints it)
- printk ``[ 4254.197860] `` (also after ``host kernel:``)   → ``boot`` (``ts_rel``), kept with a wall clock
- ``dmesg -H`` relative ``[  +0.000316] `` and the caller tag ``[ T1946] `` (dropped)

It never raises; what it cannot read stays in the message.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timedelta

from nccllens import lazy_regex

_KMSG = lazy_regex.compile(r"(?P<prio>\d+),(?P<seq>\d+),(?P<usec>\d+),[^;]*;")
_TALOS = lazy_regex.compile(r"(?:(?P<node>[^\s:]+): )?kern: *\w+: \[(?P<iso>[^\]]+)\]: ")
_DECODE = lazy_regex.compile(r"[a-z]+ *:[a-z]+ *: ")
_CTIME = lazy_regex.compile(r"\[(?P<ctime>[A-Z][a-z]{2} [A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d \d{4})\] ?")
_ISO = lazy_regex.compile(r"(?P<iso>\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:[.,]\d+)?)(?P<tz>Z|[+-]\d\d:?\d\d)? +")
_SYSLOG = lazy_regex.compile(r"(?P<mon>[A-Z][a-z]{2}) +(?P<day>\d{1,2}) (?P<hms>\d\d:\d\d:\d\d)(?:\.(?P<frac>\d+))? +")
_IDENTS = r"kernel|systemd-networkd|NetworkManager|systemd-udevd|nv-fabricmanager|nvidia-fabricmanager"
_HOST_IDENT = lazy_regex.compile(r"(?P<host>[^\s\[\]:]+) (?:(?P<ident>" + _IDENTS + r")(?:\[\d+\])?|[\w.\-/@]+\[\d+\]): +")
_BARE_IDENT = lazy_regex.compile(r"(?:(?P<host>[^\s\[\]:]+) )?(?P<ident>" + _IDENTS + r")(?:\[\d+\])?: +")
_MONO = lazy_regex.compile(r"\[ *(?P<mono>\d+\.\d+)\] ?")
_RELATIVE = lazy_regex.compile(r"\[ *\+\d+\.\d+\] ?")
_CALLER = lazy_regex.compile(r"\[ *[TC]\d+\] ?")
_MONTHS = {m: i for i, m in enumerate(
    ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"), start=1)}


@dataclass(slots=True)
class KernelPrefix:
    """The dmesg/syslog prefix of a kernel line and the message after it."""

    message: str
    ts: datetime | None = None
    ts_kind: str | None = None
    ts_rel: float | None = None
    host: str | None = None


def _iso(text: str) -> datetime | None:
    text = text.replace(",", ".").rstrip("Z")
    head, _, frac = text.partition(".")
    try:
        ts = datetime.strptime(head[:19], "%Y-%m-%dT%H:%M:%S")
    except ValueError:
        return None
    digits = "".join(ch for ch in frac if ch.isdigit())
    return ts.replace(microsecond=int((digits + "000000")[:6])) if digits else ts


def _utc(ts: datetime | None, tz: str | None) -> datetime | None:
    """``ts`` moved to UTC when the line states its offset (``+02:00``, ``-0500``): hosts logging in
    different zones are then ordered by when things happened, not by their wall clocks."""
    if ts is None or not tz or tz == "Z":
        return ts
    sign = -1 if tz[0] == "-" else 1
    digits = tz[1:].replace(":", "")
    try:
        return ts - sign * timedelta(hours=int(digits[:2]), minutes=int(digits[2:]))
    except OverflowError:
        return None


def _ctime(text: str) -> datetime | None:
    try:
        return datetime.strptime(" ".join(text.split()), "%a %b %d %H:%M:%S %Y")
    except ValueError:
        return None


def _syslog(m: re.Match, year: int | None) -> datetime | None:
    month = _MONTHS.get(m["mon"])
    if month is None:
        return None
    try:
        h, mi, s = (int(x) for x in m["hms"].split(":"))
        micro = int((m["frac"] + "000000")[:6]) if m["frac"] else 0
        return datetime(year or 1970, month, int(m["day"]), h, mi, s, micro)
    except ValueError:
        return None


def split_kernel_prefix(message: str, year: int | None = None) -> KernelPrefix:
    text = message.strip()
    out = KernelPrefix(text)
    m = _KMSG.match(text)
    if m:
        out.ts_rel, out.ts_kind = int(m["usec"]) / 1e6, "boot"
        text = text[m.end():]
    m = _TALOS.match(text)
    if m:
        out.ts, out.host, text = _iso(m["iso"]), m["node"], text[m.end():]
    m = _DECODE.match(text)
    if m:
        text = text[m.end():]
    wall = False
    for rx in (_CTIME, _ISO, _SYSLOG):
        m = rx.match(text)
        if m:
            if rx is _CTIME:
                out.ts = _ctime(m["ctime"])
            elif rx is _ISO:
                out.ts = _utc(_iso(m["iso"]), m["tz"])
            else:
                out.ts = _syslog(m, year)
                out.ts_kind = "no_year" if out.ts else None
            text, wall = text[m.end():], True
            break
    m = (_HOST_IDENT if wall else _BARE_IDENT).match(text)
    if m:
        out.host = m["host"]
        text = text[m.end():]
    m = _MONO.match(text)
    if m:
        out.ts_rel = float(m["mono"])
        out.ts_kind = out.ts_kind or "boot"
        text = text[m.end():]
        if out.host is None:  # journalctl -o short-monotonic: '[secs] host kernel: '
            m = _BARE_IDENT.match(text)
            if m:
                out.host, text = m["host"], text[m.end():]
    else:
        m = _RELATIVE.match(text)
        if m:
            text = text[m.end():]
    m = _CALLER.match(text)
    if m:
        text = text[m.end():]
    if out.ts is not None and out.ts_kind is None or out.ts is not None and out.ts_kind == "boot":
        out.ts_kind = "absolute"
    out.message = text.strip()
    return out
