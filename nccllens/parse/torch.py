"""The ``torch`` family: PyTorch c10d (ProcessGroupNCCL/Gloo, TCPStore, DETAIL debug, DDP reducer).

``PREFILTER`` keeps only lines that carry a c10d fact (timeouts, PG status, NCCL errors, store and
gloo failures, dump/heartbeat messages); ``parse`` strips the log header (``split_header``),
classifies the body (``torch_classify``) and folds what follows the line in the same stream:
NCCL's detail line and ``Last error:`` payload, the ``Exception raised from ... frame #N:``
backtrace, the DDP ``Parameters which did not receive grad`` lines, the failed collective's stack.
"""

from __future__ import annotations

from collections.abc import Iterator

from nccllens.parse.base import FileContext, Line
from nccllens.parse.cpp import backtrace_detail, read_backtrace, starts_backtrace
from nccllens.parse.headers import split_header
from nccllens.parse.torch_classify import classify, resolve_rank
from nccllens.parse.torch_debug import ddp_params_line, fingerprints, running_fingerprint
from nccllens.parse.torch_patterns import LAST_ERROR, NCCL_DETAIL_LINE, nccl_error_code

FAMILY = "torch"

# Rust regex syntax (polars): no look-around, no back-references. Phrases are chosen so that
# C++ frame lines (``c10::DistBackendError::DistBackendError(...)``, ``ProcessGroupGloo::monitoredBarrier``)
# and healthy NCCL INFO chatter do not match.
_PHRASES = (
    r"collective operation timeout",
    r"Work\w*\(SeqNum=\d+",
    r"NCCL work: -?\d+|detected by watchdog at work|NCCL Work update periodically",
    r"Some NCCL operations have failed|we are taking the entire process down",
    r"watchdog thread terminated",
    r"dump signal|dump debug info|dumping nccl trace|debug info to |Flight Recorder trace|flight recorder (?:dump|"
    r"successfully)|global timeout from another rank|First PG on this rank|extra dumping signal|Error opening file "
    r"for writing|watchdog detected a collective timeout|write to it to trigger",
    r"Heartbeat monitor|watchdog got stuck|no heartbeat of its watchdog|Could not acquire GIL|c\+\+ stacktraces|"
    r"indeed a watchdog hang",
    r"Stack trace of the failed collective",
    r"NCCL error|NCCL communicator (?:encountered error|was aborted)|is setting up NCCL communicator|"
    r"DistBackendError: |async exception|remote error detected from rank",
    r"for (?:recv|send) operation to complete|Connection closed by peer \[|Read error \[|"
    r"Received data size doesn't match",
    r"client socket has (?:timed out|failed to connect)|TCP client failed to connect|server socket has failed|"
    r"server could not be initialized|network addresses of \(|(?:recvValue\w*|recvBytes|sendBytes) failed on Socket|"
    r"should dump\" flag|waitForInput: socket|TCPStoreMasterDaemon",
    r"wait timeout after \d+ms|waiting for clients\.|Socket Timeout|Timeout waiting for key|store based barrier on rank|Waiting in store based barrier|Completed store-based barrier|"
    r"Stop_waiting response|(?:DistNetworkError|RuntimeError): (?:Connection reset by peer|Broken pipe|[Ff]ailed to "
    r"recv|connect\(\) timed out)",
    r"Detected mismatch between collectives|Running collective: CollectiveFingerPrint\(|failed to pass monitoredBarrier|reached monitoredBarrier, but|"
    r"timed out in monitoredBarrier|processed in monitoredBarrier",
    r"Expected to have finished reduction|did not receive grad for rank|Expected to mark a variable ready only once|"
    r"DDP expects same model across all ranks|not match (?:sizes|strides) of the same param",
    r"Timeout at collective: |are the lagging ranks|joined but didn't finish|but didn't join collective",
)
PREFILTER = "|".join(f"(?:{p})" for p in _PHRASES)

_FOLLOW_LINES = 120
_MAX_DETAIL = 2000


def _nccl_continuation(following: list[Line], event: dict) -> int:
    """``ncclRemoteError: ...`` / ``Last error:`` + payload after an NCCL error line; returns lines used."""
    i, detail_line, last_error = 0, None, None
    while i < len(following) and i < 6:
        text = following[i].message.strip()
        m = LAST_ERROR.match(text)
        if m:
            last_error, source = m["text"].strip() or None, following[i]
            i += 1
            if last_error is None and i < len(following) and following[i].message.strip():
                last_error, source = following[i].message.strip(), following[i]
                i += 1
            if last_error:
                event["_payload"] = (source, last_error)
            break
        if NCCL_DETAIL_LINE.match(text):
            detail_line = text
            i += 1
            continue
        break
    if detail_line and event.get("error_code") is None:
        name, code = nccl_error_code(detail_line)
        event["error_code"] = code
        event.setdefault("value", name)
    if last_error or detail_line:
        event["detail"] = last_error or detail_line
    return i


def _failed_stack(following: list[Line]) -> tuple[int, list[str]]:
    frames = []
    for ln in following[:64]:
        text = ln.message.strip()
        if not (text.startswith("#") and " from " in text):
            break
        frames.append(text)
    return len(frames), frames


def _scans_ahead(event: dict) -> bool:
    """Records whose continuation is looked for past the next line (the others take only a backtrace
    that starts right after them)."""
    kind = event["kind"]
    return (kind in ("torch.nccl_error", "torch.watchdog_exception", "torch.ddp_error")
            or "NCCL error" in event["message"]
            or (kind == "torch.warning" and event.get("key") == "failed_collective_stack"))


def _fold(line: Line, event: dict, ctx: FileContext) -> list[Line]:
    """Fold the lines that continue this record; return the lines consumed."""
    if not _scans_ahead(event):
        # most records have no continuation: one line tells, instead of reading the next 120
        first = ctx.following(line, 1)
        if not first or not starts_backtrace(first[0]):
            return []
    following = ctx.following(line, _FOLLOW_LINES)
    if not following:
        return []
    used = 0
    if event["kind"] in ("torch.nccl_error", "torch.watchdog_exception") or "NCCL error" in event["message"]:
        used = _nccl_continuation(following, event)
    if event.get("key") == "failed_collective_stack" and event["kind"] == "torch.warning":
        n, frames = _failed_stack(following[used:])
        if frames:
            event["detail"] = "\n".join(frames)
        used += n
    if event["kind"] == "torch.ddp_error" and event.get("detail") is None:
        for k, ln in enumerate(following[used:used + 8]):
            m = ddp_params_line(ln.message)
            if m:
                event["detail"] = m["names"].strip()
                event["_self_rank"] = int(m["rank"])
                used += k + 1
                break
    end, raised, frames = read_backtrace(following, used)
    trace = backtrace_detail(raised, frames)
    if trace:
        event["detail"] = f"{event['detail']}\n{trace}" if event.get("detail") else trace
    return following[:end]


def payload_event(wrapper: Line, event: dict, source: Line, text: str) -> dict:
    """NCCL's ``Last error:`` payload as an event of its own (the precise cause: a shm segment, a
    duplicate GPU, a reset connection), with the wrapper's rank, host and time."""
    return {"family": "nccl", "kind": "nccl.last_error", "level": "error", "message": text, "file": wrapper.file,
            "line": source.line, "raw": source.raw, "rank": event.get("rank", wrapper.rank),
            "host": event.get("host") or wrapper.host, "local_rank": wrapper.local_rank, "attempt": wrapper.attempt,
            "ts": event.get("ts") or wrapper.ts, "ts_kind": event.get("ts_kind") or wrapper.ts_kind,
            "pid": event.get("pid"), "error_code": event.get("error_code")}


def _events_for(line: Line, body: str) -> list[dict]:
    if "Detected mismatch between collectives" in body:
        found = list(fingerprints(body))
        if found:
            return found
    if "Running collective: CollectiveFingerPrint(" in body:
        running = running_fingerprint(body)
        if running is not None:
            return [running]
    one = classify(body)
    return [one] if one is not None else []


def parse(lines: list[Line], ctx: FileContext) -> Iterator[dict]:
    consumed: set[int] = set()
    for line in lines:
        if line.line in consumed:
            continue
        try:
            header, body = split_header(line.message, ctx.year)
            if body.lstrip().startswith("what():"):
                continue  # the cpp family owns the what() of a terminate block
            for fields in _events_for(line, body):
                event = {"family": FAMILY, "message": fields.pop("_message", None) or body.strip(), **fields}
                if header is not None:
                    event["level"] = header.level
                    if header.ts is not None:
                        event["ts"], event["ts_kind"] = header.ts, header.ts_kind
                    if header.pid is not None and header.generation == "pylog-2.3":
                        event["pid"] = header.pid
                if event.pop("_report_part", False):
                    event["level"] = "info"  # a line of another record's report, whatever its glog level
                for folded in _fold(line, event, ctx):
                    consumed.add(folded.line)
                    event["_last_line"] = folded.line  # the pipeline claims the folded lines too
                rank = resolve_rank(event, line.rank)
                if rank is not None:
                    event["rank"] = rank
                if event.get("detail"):
                    event["detail"] = event["detail"][:_MAX_DETAIL]
                payload = event.pop("_payload", None)
                yield event
                if payload is not None:
                    yield payload_event(line, event, *payload)
        except Exception:  # one odd line must not cost the file its other events
            continue
