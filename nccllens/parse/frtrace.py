"""Text reports of cross-rank analysers: PyTorch's flight-recorder analyser and NCCL's RAS client.

``torchfrtrace`` / ``fr_trace`` (``torch/distributed/flight_recorder``) prints one block per collective it
could not match across the dumps. Every generation is read:

- 2.6+ (logger): ``Not all ranks joining collective, sequence number: 4`` (also ``collective: sequence
  number: 31117``), then ``internal record id:``, ``group info: 0:default_pg``, ``collective: nccl:all_reduce``,
  ``missing ranks: {3, 4}``, ``input sizes:``, ``output sizes:``, ``world size: 8``, ``expected ranks: {..}``,
  ``collective state: scheduled``, ``error msg: Culprit rank 2; Error type: ...``, ``collective stack trace:``
  and frames ``all_reduce at /path/distributed_c10d.py:2707``;
- 2.5 (logger): ``Not all ranks joining collective 5 at entry 4`` and ``expected ranks: 2``;
- 2.4 (print, one line): ``Not all ranks joining collective for group 0:default_pg collective nccl:all_reduce
  Missing ranks are {1} ...``;
- ``Collective sequence number: 12 has errors`` (``error msg: Culprit rank N; ...``), ``Input/output mismatch in
  the collective sequence number: N``, ``we missed FR dumps from ranks ({3})``, ``Missing dump files from ranks {3}``.

One ``flight.analysis`` event per block: ``value`` = what is wrong (``missing_ranks``, ``errors``,
``size_mismatch``, ``missing_dumps``), ``key`` = the ranks it names (``3,4,5``; for ``errors`` the culprit
ranks), ``seq``, ``pg``, ``op``, ``nranks`` (world size), ``detail`` = the stack frames, one a line.

NCCL RAS (``ncclras``, 2.24+) reports a communicator whose ranks launched different numbers of operations::

    #0-0 (fa93daea854b060b) MISMATCH
      Communicator ranks have different AllGather operation counts
      30 ranks have launched up to operation 640
      2 ranks have launched up to operation 641
      Rank 12 -- GPU 4 managed by process 323032 on node 10.137.190.124

→ one ``nccl.ras_mismatch`` event: ``op`` = the operation, ``detail`` = ``30:640 2:641``, ``key`` = the ranks
listed (those of the smaller groups), ``peer`` = their nodes.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from nccllens import lazy_regex
from nccllens.parse.base import FileContext, Line, event_for

FAMILY = "frtrace"
PREFILTER = (
    r"Not all ranks joining collective|Collective sequence number: \d+ has errors|Input/output mismatch in the "
    r"collective sequence number|missed FR dumps from ranks|Missing dump files from ranks"
    r"|Communicator ranks have different \w+ operation counts"
)

_HEAD = lazy_regex.compile(
    r"Not all ranks joining collective(?:[,:]? sequence number: (?P<seq1>\d+)| (?P<seq2>\d+) at entry \d+"
    r"| for group (?P<pg>\S+) collective (?P<op>\S+))"
    r"|Collective sequence number: (?P<seq3>\d+) has errors"
    r"|Input/output mismatch in the collective sequence number: (?P<seq4>\d+)"
    r"|missed FR dumps from ranks \(?(?P<dumps>\{[\d, ]*\}|[\d, ]+)"
    r"|Missing dump files from ranks (?P<dumps2>\{[\d, ]*\})"
)
_FIELD = lazy_regex.compile(r"^\s*(?P<k>internal record id|group info|collective|missing ranks|input sizes|output sizes|"
                    r"world size|expected ranks|collective state|error msg|collective stack trace)\s*:\s*(?P<v>.*)$")
_MISSING_INLINE = lazy_regex.compile(r"Missing ranks are (?P<r>\{[\d, ]*\})")
_FRAME = lazy_regex.compile(r"^\s*(?P<name>[\w<>.]+) at (?P<where>\S+:\d+)\s*$")
_CULPRIT = lazy_regex.compile(r"Culprit rank (?P<r>\d+)")
_FOLLOW = 40

_RAS_COUNT = lazy_regex.compile(r"^\s*(?P<n>\d+) ranks? ha(?:ve|s) launched up to operation (?P<op>\d+)")
_RAS_RANK = lazy_regex.compile(r"^\s*Rank (?P<r>\d+) -- GPU \d+ managed by process \d+ on node (?P<node>\S+)")
_RAS_OP = lazy_regex.compile(r"different (?P<op>\w+) operation counts")


def _ranks(text: str) -> list[int]:
    return sorted({int(n) for n in re.findall(r"\d+", text or "")})


def _op(name: str) -> str:
    return name.split(":", 1)[-1].strip().split(" ", 1)[0]


def _fr_block(line: Line, m: re.Match, ctx: FileContext) -> dict:
    seq = m["seq1"] or m["seq2"] or m["seq3"] or m["seq4"]
    fields: dict[str, str] = {}
    frames: list[str] = []
    last = line.line
    in_frames = False
    for nxt in ctx.lines_after(line, _FOLLOW):
        text = nxt.message
        if _HEAD.search(text) or _RAS_OP.search(text):
            break
        f = _FIELD.match(text)
        if f:
            fields.setdefault(f["k"], f["v"].strip())
            in_frames = f["k"] == "collective stack trace"
            if in_frames and f["v"].strip():
                frames.append(f["v"].strip())
            last = nxt.line
            continue
        if in_frames and _FRAME.match(text):
            frames.append(text.strip())
            last = nxt.line
            continue
        if not text.strip() and not fields:
            continue
        break
    if m["dumps"] or m["dumps2"]:
        what, ranks = "missing_dumps", _ranks(m["dumps"] or m["dumps2"])
    elif m["seq3"]:
        what, ranks = "errors", _ranks(" ".join(c for c in _CULPRIT.findall(fields.get("error msg", ""))))
    elif m["seq4"]:
        what, ranks = "size_mismatch", []
    else:
        inline = _MISSING_INLINE.search(line.message)
        what, ranks = "missing_ranks", _ranks(fields.get("missing ranks") or (inline["r"] if inline else ""))
    pg = m["pg"] or fields.get("group info")
    op = m["op"] or fields.get("collective")
    expected = fields.get("expected ranks", "")
    world = fields.get("world size") or (expected if re.fullmatch(r"\d+", expected) else None)
    if world is None and expected.startswith("{"):
        world = str(len(_ranks(expected)))
    sizes = " ".join(f"{k}={fields[k]}" for k in ("input sizes", "output sizes") if k in fields)
    message = line.message.strip()
    if ranks:
        message += f" (ranks {', '.join(map(str, ranks))})"
    if fields.get("collective state"):
        message += f" [state {fields['collective state']}]"
    return event_for(
        line, "flight.analysis", family="flight", level="error", message=message, seq=int(seq) if seq else None,
        pg=pg, op=_op(op) if op else None, value=what, key=",".join(map(str, ranks)) or None,
        nranks=int(world) if world else None, detail="\n".join(filter(None, [sizes, *frames])) or None,
        _last_line=last if last > line.line else None)


def _ras_block(line: Line, m: re.Match, ctx: FileContext) -> dict:
    counts: list[tuple[int, int]] = []
    listed: dict[int, str] = {}
    last = line.line
    for nxt in ctx.lines_after(line, _FOLLOW):
        c = _RAS_COUNT.match(nxt.message)
        r = _RAS_RANK.match(nxt.message)
        if c:
            counts.append((int(c["n"]), int(c["op"])))
        elif r:
            listed[int(r["r"])] = r["node"]
        else:
            break
        last = nxt.line
    nodes = sorted(set(listed.values()))
    return event_for(
        line, "nccl.ras_mismatch", family="nccl", level="error", message=line.message.strip(), op=m["op"],
        detail=" ".join(f"{n}:{op}" for n, op in counts) or None, key=",".join(map(str, sorted(listed))) or None,
        nranks=sum(n for n, _ in counts) or None, peer=" ".join(nodes) or None,
        _last_line=last if last > line.line else None)


def parse(lines: list[Line], ctx: FileContext) -> Iterator[dict]:
    for line in lines:
        m = _HEAD.search(line.message)
        if m:
            yield _fr_block(line, m, ctx)
            continue
        m = _RAS_OP.search(line.message)
        if m:
            yield _ras_block(line, m, ctx)
