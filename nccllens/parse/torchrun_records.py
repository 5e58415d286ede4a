"""Multi-line torchrun records, read forward with ``ctx.following`` from their first line.

- the launch config block (``Starting elastic_operator with launch configs:`` + ``  key : value``);
- the rendezvous result (``Rendezvous complete for workers. Result:`` + ``  key=value``);
- the ChildFailedError table (``Failures:`` / ``Root Cause (first observed failure):`` sections,
  and the older ``Other Failures:`` / ``Root Cause:`` ones), one event per ``[i]:`` entry.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime

from nccllens import lazy_regex
from nccllens.parse.base import FileContext, Line
from nccllens.parse.headers import split_header
from nccllens.parse.torchrun_agent import signal_for_exit
from nccllens.parse.tracebacks import dedent, fold_traceback

CONFIG_START = lazy_regex.compile(r"Starting elastic_operator with launch configs:")
RESULT_START = lazy_regex.compile(r"\[(?P<role>[^\]]+)\] Rendezvous complete for workers\. Result:")
SECTION = lazy_regex.compile(r"^\s*(?P<name>Root Cause \(first observed failure\)|Root Cause|Failures|Other Failures):\s*$")

MAX_CONFIG_LINES = 40
MAX_RESULT_LINES = 20
MAX_TABLE_LINES = 2000
MAX_DETAIL_CHARS = 2000

_CONFIG_ROW = lazy_regex.compile(r"^\s+(?P<key>\w+)\s*: ?(?P<value>.*?)\s*$")
_RESULT_ROW = lazy_regex.compile(r"^\s+(?P<key>\w+)=(?P<value>.*?)\s*$")
_ENTRY = lazy_regex.compile(r"^\[(?P<idx>\d+)\]:\s*$")
_FIELD = lazy_regex.compile(r"^\s{1,4}(?P<key>time|host|rank|exitcode|error_file|traceback|msg)\s*:\s?(?P<value>.*)$")
_BORDER = lazy_regex.compile(r"^\s*(?:={5,}|-{5,}|\*{5,})\s*$")
_RANK = lazy_regex.compile(r"^(?P<rank>-?\d+)(?: \(local_rank: (?P<lr>-?\d+)\))?")
_EXIT = lazy_regex.compile(r"^(?P<code>-?\d+)(?: \(pid: (?P<pid>\d+)\))?(?:\s+\((?P<sig>SIG\w+)\))?")
_ATTEMPT = lazy_regex.compile(r"attempt_(?P<attempt>\d+)/(?P<lr>\d+)/[^/]*$")
_NA = "<N/A>"


def _body(line: Line, year: int | None) -> str:
    return split_header(line.message, year)[1]


def _at(line: Line) -> dict:
    """Event fields that place an event on ``line`` (not on the record's first line)."""
    return {"file": line.file, "line": line.line, "raw": line.raw}


def config_events(line: Line, ctx: FileContext) -> list[dict]:
    events = []
    for row in ctx.lines_after(line, MAX_CONFIG_LINES):
        m = _CONFIG_ROW.match(_body(row, ctx.year))
        if not m:
            break
        events.append({**_at(row), "kind": "torchrun.config", "key": m["key"], "value": m["value"],
                       "message": f"{m['key']} : {m['value']}"})
    return events


def result_event(line: Line, m: re.Match, ctx: FileContext) -> dict:
    fields: dict[str, str] = {}
    for row in ctx.lines_after(line, MAX_RESULT_LINES):
        row_match = _RESULT_ROW.match(_body(row, ctx.year))
        if not row_match:
            break
        fields[row_match["key"]] = row_match["value"]
    event = {"kind": "torchrun.rendezvous", "value": "complete", "key": m["role"],
             "detail": ", ".join(f"{k}={v}" for k, v in fields.items()) or None}
    if fields.get("restart_count", "").isdigit():
        event["attempt"] = int(fields["restart_count"])
    sizes = re.findall(r"\d+", fields.get("global_world_sizes", ""))
    if sizes:
        event["nranks"] = int(sizes[0])
    if fields.get("master_addr") and fields.get("master_port"):
        event["peer"] = f"{fields['master_addr']}:{fields['master_port']}"
    return event


def _table_ts(text: str) -> datetime | None:
    for fmt in ("%Y-%m-%d_%H:%M:%S", "%Y-%m-%d_%H:%M:%S.%f", "%Y-%m-%dT%H:%M:%S"):
        try:
            return datetime.strptime(text.strip(), fmt)
        except ValueError:
            continue
    return None


def _clip(text: str) -> str:
    if len(text) <= MAX_DETAIL_CHARS:
        return text
    first = text.split("\n", 1)[0]
    return first + "\n…\n" + text[-(MAX_DETAIL_CHARS - len(first) - 3):]


def _entry_event(section: str, idx: str, first: Line, fields: dict[str, str], tb_lines: list[str]) -> dict:
    root = section.startswith("Root Cause")
    event = {**_at(first), "kind": "torchrun.root_cause" if root else "torchrun.failure",
             "level": "error", "local_rank": None}
    m = _RANK.match(fields.get("rank", ""))
    if m:
        event["rank"] = int(m["rank"])
        event["local_rank"] = int(m["lr"]) if m["lr"] is not None else None
    m = _EXIT.match(fields.get("exitcode", ""))
    if m:
        event["exit_code"] = int(m["code"])
        event["pid"] = int(m["pid"]) if m["pid"] else None
        event["signal"] = m["sig"] or signal_for_exit(event["exit_code"])
    if fields.get("host"):
        event["host"] = fields["host"].strip()
    ts = _table_ts(fields.get("time", ""))
    if ts is not None:
        event["ts"], event["ts_kind"] = ts, "absolute"
    error_file = fields.get("error_file", "").strip()
    if error_file and error_file != _NA:
        event["value"] = error_file
        m = _ATTEMPT.search(error_file)
        if m:
            event["attempt"] = int(m["attempt"])
    traceback = "\n".join([fields.get("traceback", fields.get("msg", "")).strip(), *tb_lines]).strip()
    if traceback:
        event["detail"] = _clip(traceback)
    exc_text = None
    if tb_lines and traceback.startswith("Traceback"):
        folded = fold_traceback(tb_lines)
        event["exc_type"] = folded.exc_type
        exc_text = folded.message
    head = f"{section}: [{idx}]" if idx else section
    parts = [f"{head} rank {fields['rank'].strip()}" if fields.get("rank") else head]
    if fields.get("exitcode"):
        parts.append(f"exitcode {fields['exitcode'].strip()}")
    event["message"] = " ".join(", ".join(parts).split())
    if exc_text:
        # the worker's own exception, so rules about it also see the table's rank and host
        event["message"] += f": {exc_text}"
    return event


@dataclass
class _Entry:
    """One failure-table entry as its rows are read: the ``key : value`` fields, then a traceback's lines."""

    first: Line
    idx: str = ""
    fields: dict[str, str] = field(default_factory=dict)
    tb_lines: list[str] = field(default_factory=list)
    in_tb: bool = False
    exit_row: Line | None = None

    def take(self, row: Line, body: str) -> bool:
        """Read ``row`` into the entry; False when it is neither a field nor a line of the traceback."""
        found = None if self.in_tb else _FIELD.match(body)
        if found:
            self.fields[found["key"]] = found["value"]
            if found["key"] == "exitcode":
                self.exit_row = row
            self.in_tb = found["key"] in ("traceback", "msg") and found["value"].startswith("Traceback")
            return True
        if self.in_tb:
            self.tb_lines.append(dedent(body, 2))
            return True
        return False

    def event(self, section: str, last: Line | None) -> dict:
        # the exitcode row says the most in one line: it is the event's line (and its evidence)
        event = _entry_event(section, self.idx, self.exit_row or self.first, self.fields, self.tb_lines)
        event["_first_line"] = self.first.line
        if last is not None:
            event["_last_line"] = last.line  # the entry's field lines belong to this event
        return event


def table_events(line: Line, section: str, ctx: FileContext) -> list[dict]:
    """One event per ``[i]:`` entry of the section that starts at ``line``."""
    events: list[dict] = []
    entry: _Entry | None = None
    last: Line | None = None
    for row in ctx.lines_after(line, MAX_TABLE_LINES):
        body = _body(row, ctx.year).rstrip()
        if _BORDER.match(body) or SECTION.match(body) or "<NO_OTHER_FAILURES>" in body:
            break
        head = _ENTRY.match(body.strip())
        if head:
            if entry is not None and entry.fields:
                events.append(entry.event(section, last))
            entry = _Entry(row, head["idx"])
            continue
        if entry is None:
            continue
        last = row
        entry.take(row, body)
    if entry is not None and entry.fields:
        events.append(entry.event(section, last))
    return events


ORPHAN_FIELD = lazy_regex.compile(r"^\s{0,4}time\s*:\s*\d{4}-\d\d-\d\d_\d\d:\d\d:\d\d\s*$")


def orphan_entry_events(line: Line, ctx: FileContext) -> list[dict]:
    """One failure-table entry pasted without its section and ``[i]:`` head (a ticket quoting the rows from
    ``time :`` on): read the same way, as long as the rows go on and name an exit code."""
    entry = _Entry(line)
    first = _body(line, ctx.year).rstrip()
    # a paste indented as a whole is read dedented: its rows lost the two columns torchrun indents them by
    pad = "" if first[:1].isspace() else "  "
    if not entry.take(line, pad + first):
        return []
    last = line
    for row in ctx.lines_after(line, MAX_TABLE_LINES):
        body = pad + _body(row, ctx.year).rstrip()
        if _BORDER.match(body) or SECTION.match(body) or _ENTRY.match(body.strip()) or not entry.take(row, body):
            break
        last = row
    return [entry.event("Failures", last)] if "exitcode" in entry.fields else []
