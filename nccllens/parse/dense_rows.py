"""The Python side of the dense families: the first and last row of each summary group, and which
patterns could ever want a dense line.

``describe`` turns ``parse.dense`` partial aggregates (one per group, per file) into summary rows
(``nccllens.summaries``): host, pid, rank and time from the prefixes, and per family the sequence
number (opCount, step), the op and its count, the communicator size. Two rows per group are parsed
here, whatever the number of lines the group stands for.

``watch_patterns`` picks, for each dense family, the pattern branches (family PREFILTERs, rules) whose
required literals occur in the fixed text of that family's lines (``VOCABULARY``, built from the
verbatim formats); a branch without a literal is always watched. A pattern that could match a dense
line only through a literal in one of its variable fields (a host name, a launcher tag) is not tried on
it: that is the price of not searching every literal in every dense line.
"""

from __future__ import annotations

import hashlib

from nccllens import lazy_regex
from nccllens.parse.nccl_prefix import split_prefix
from nccllens.parse.prefixes import strip
from nccllens.prefilter import FLAGS, literals_of, top_branches
from nccllens.regex_groups import pattern_groups

_PREFIXES = ("", "[rank3]:", "[default3]:", "[1,3]<stdout>:", "3: ", "[2026-11-22 01:00:00] ",
             "2026-11-22T01:00:00.123456789Z ", "(RayWorkerWrapper pid=123, ip=10.0.0.1) ")
_NCCL = "gpu-node-001:40000:40012 [3] NCCL INFO "
_SAMPLES = {
    "nccl.transport": [_NCCL + f"Channel 00/0 : 3[3] -> 4[4] {d}via {v}"
                       for d in ("", "[send] ", "[receive] ")
                       for v in ("NET/IB/0/GDRDMA", "NET/IB/1(7)/GDRDMA/Shared", "NET/Socket/0", "NET/IBext_v8/0/GDRDMA",
                                 "NET/AWS Libfabric/0/GDRDMA", "P2P/IPC/read", "P2P/CUMEM/read", "P2P/CUMEM/CE",
                                 "P2P/MNNVL", "P2P/direct pointer", "P2P/indirect/2[2]", "SHM/direct/direct",
                                 "direct shared memory")],
    "nccl.graph": [_NCCL + "Channel 00/02 :    0   1   2   3   4   5   6   7", _NCCL + "Trees [0] 1/-1/-1->0->-1 [1] -1/-1/-1->0->1",
                   _NCCL + "Ring 00 : 7 -> 0 -> 1", _NCCL + "Tree 0 : -1 -> 0 -> 1/8/-1"],
    "nccl.coll": [p + f"{op}: opCount 1f sendbuff 0x7f3a2c000000 recvbuff 0x7f3a2c000000 count 1048576 datatype 7 op 0 "
                  "root 0 comm 0x55d0c8a1b2c0 [nranks=512] stream 0x55d0c9a1b2c0"
                  for p in (_NCCL, "gpu-node-001:40000:40012 [3] 1234.567890 ncclEnqueueCheck:1234 NCCL TRACE ")
                  for op in ("AllReduce", "AllGather", "ReduceScatter", "Broadcast", "Reduce", "Send", "Recv")],
    "progress": ["step 100 loss 2.3456 lr 1e-4", "Step: 100, loss=nan, grad_norm=inf, lr=1e-05, epoch: 0.5",
                 " iteration      100/  500000 | consumed samples:        12800 | elapsed time per iteration (ms): 1234.5 | "
                 "learning rate: 1.000E-04 | global batch size:   128 | lm loss: 2.345678E+00 | loss scale: 1.0 | "
                 "grad norm: 1.234 | number of skipped iterations:   0 | number of nan iterations:   0 |",
                 "Epoch 1:  50%|█████     | 500/1000 [01:40<01:40,  5.00it/s, loss=2.34, v_num=0]",
                 " 10%|█         | 100/1000 [00:20<03:00,  5.00s/it]",
                 "{'loss': 2.1234, 'grad_norm': 1.5, 'learning_rate': 5e-05, 'epoch': 0.1}",
                 "INFO:__main__:step 100 loss 2.3", "I1122 01:00:00.123456  1234 train.py:12] step 100 loss 2.3"],
}
VOCABULARY = {fam: "\n".join(p + s for s in samples for p in _PREFIXES) for fam, samples in _SAMPLES.items()}


def _branches(pattern: str) -> list[str]:
    return [pattern] if FLAGS.match(pattern) else top_branches(pattern)


_WATCH: dict[str, dict[str, str]] = {}  # watch_patterns per pattern list (its digest), kept between runs


def known_watch() -> dict[str, dict[str, str]]:
    return dict(_WATCH)


def learn_watch(known: dict[str, dict[str, str]]) -> None:
    _WATCH.update(known)


def watch_patterns(patterns: list[str]) -> dict[str, str]:
    """Per dense family, one regex of the (unanchored) pattern branches that could match its lines."""
    key = hashlib.sha256("\0".join(patterns).encode()).hexdigest()
    found = _WATCH.get(key)
    if found is None:
        found = _WATCH[key] = _watch(patterns)
    return found


_LOWER = {fam: text.lower() for fam, text in VOCABULARY.items()}


def branches(pattern: str) -> list[str]:
    """The pattern's top-level branches, as ``watch_patterns`` and the engine split them."""
    return _branches(pattern)


def watching(branch: str) -> tuple[str, ...]:
    """The dense families whose lines ``branch`` could match (its required literals occur in their text)."""
    found, nocase = literals_of(branch)
    return tuple(fam for fam, text in VOCABULARY.items()
                 if found is None or any(lit in (_LOWER[fam] if nocase else text) for lit in found))


def _watch(patterns: list[str]) -> dict[str, str]:
    out: dict[str, list[str]] = {fam: [] for fam in VOCABULARY}
    for pattern in patterns:
        for branch in _branches(pattern):
            for fam in watching(branch):
                out[fam].append(branch)
    return {fam: "|".join(pattern_groups(branches)) for fam, branches in out.items() if branches}


_COLL = lazy_regex.compile(r"(?P<op>\w+): opCount (?P<seq>[0-9a-f]+) sendbuff \S+ recvbuff \S+ count (?P<size>\d+) "
                   r"datatype (?P<dtype>\d+) op (?P<redop>\d+) root (?P<root>-?\d+) comm (?P<comm>\S+) "
                   r"\[nranks=(?P<nranks>\d+)\]")
_STEP = lazy_regex.compile(r"(?:[Ss]tep|STEP|iteration)[\s:=\[]+(?P<seq>\d+)|\|\s*(?P<tqdm>\d+)/\d+ \[")
_EPOCH = lazy_regex.compile(r"[Ee]poch(?:\s+is)?[\s:=\[]+(?P<epoch>\d+)")  # a line with no step counts its epoch
_TRANSPORT = lazy_regex.compile(r"Channel \d+(?:/\d+)? : (?P<src>\d+)\[[0-9a-f]+\] -> (?P<dst>\d+)\[[0-9a-f]+\] "
                        r"(?:\[(?P<dir>send|receive)\] )?via")


def _number(text: str | None, base: int = 10) -> int | None:
    """A counter a line states, or None: absent, or longer than any counter (``int()`` refuses 4,300
    digits or more; a step of 10^20 is dropped later, by the table's column range)."""
    return int(text, base) if text and len(text) <= 40 else None


def _one(raw: str, fam: str, hints) -> dict:
    """What one line says: host, pid, rank, ts, and its family's fields. A line whose prefix states a
    number no counter holds (a pid of 5,000 digits) says nothing but what its file's path says."""
    try:
        return _said(raw, fam, hints)
    except (ValueError, OverflowError):
        return {"host": hints.host, "rank": hints.rank, "local_rank": hints.local_rank, "ts": None, "pid": None}


def _said(raw: str, fam: str, hints) -> dict:
    p = strip(raw)
    out = {"host": p.host or hints.host, "rank": p.rank if p.rank is not None else hints.rank,
           "local_rank": p.local_rank if p.local_rank is not None else hints.local_rank, "ts": p.ts, "pid": p.pid}
    if fam.startswith("nccl."):
        pre = split_prefix(p.message)
        if pre is not None:
            out.update(host=pre.host or out["host"], pid=pre.pid, ts=pre.ts or out["ts"])
            if pre.elapsed_ms is not None:
                out["ts_rel"] = pre.elapsed_ms / 1000.0
        m = _COLL.search(p.message) if fam == "nccl.coll" else None
        if m:
            out.update(seq=_number(m["seq"], 16), op=m["op"], size=_number(m["size"]), dtype=_number(m["dtype"]),
                       nranks=_number(m["nranks"]), redop=_number(m["redop"]))
        t = _TRANSPORT.search(p.message) if fam == "nccl.transport" else None
        if t:
            # the process that prints a transport line is its sender, but a ``[receive]`` line is printed by
            # the receiver: ``1[3000] -> 0[3000] [receive]`` comes from rank 0
            out.update(seq=_number(t["dst"] if t["dir"] == "receive" else t["src"]), value=t["dir"])
    elif fam == "progress":
        m = _STEP.search(p.message)
        e = None if m else _EPOCH.search(p.message)
        if m or e:
            out["seq"] = _number(m["seq"] or m["tqdm"]) if m else _number(e["epoch"])
    return out


def describe(partial, path: str, hints, shift: int = 0, files: dict | None = None) -> list[dict]:
    """Summary rows for one file's merged partial aggregate (line numbers minus ``shift``); for a batch of
    files, ``partial`` has an ``owner`` column and ``files`` maps each owner to its (path, hints, shift)."""
    rows = []
    owners = partial["owner"].to_list() if files is not None else [None] * partial.height
    for owner, (fam, key, count, first_line, last_line, first_raw, last_raw) in zip(owners, partial.select(
            "fam", "key", "count", "first_line", "last_line", "first_raw", "last_raw").iter_rows(), strict=True):
        if files is not None:
            path, hints, shift = files[owner]
        first, last = _one(first_raw, fam, hints), _one(last_raw, fam, hints)
        rows.append({
            "file": path, "host": last["host"] or first["host"], "pid": last["pid"] or first["pid"],
            "rank": last["rank"] if last["rank"] is not None else first["rank"], "local_rank": last["local_rank"],
            "attempt": hints.attempt, "family": fam, "key": key, "count": count,
            "first_line": first_line - shift, "last_line": last_line - shift, "first_ts": first["ts"],
            "last_ts": last["ts"], "last_ts_rel": last.get("ts_rel"), "first_seq": first.get("seq"),
            "last_seq": last.get("seq"), "op": last.get("op"), "size": last.get("size"), "dtype": last.get("dtype"),
            "redop": last.get("redop"), "nranks": last.get("nranks"), "value": last.get("value"),
            "raw": last_raw[:2000],
        })
    return rows
