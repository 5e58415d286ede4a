"""PyTorch Lightning's process-group start (family ``lightning``): each process states its global rank and
the world size.

- ``initializing ddp: GLOBAL_RANK: 1, MEMBER: 2/8`` (Lightning ≤ 1.5),
- ``Initializing distributed: GLOBAL_RANK: 0, MEMBER: 1/8`` (later versions)

→ ``lightning.rank_init`` with ``rank`` and ``nranks`` (the world size the launcher gave this process).

- ``[rank: 0] Received SIGTERM: 15``: Lightning's signal handler, the process told to stop from outside
  (the number in the prefix is the local rank) → ``lightning.signal_received`` with ``signal``.
Two processes stating the same global rank, or a world size whose ranks never all appear, show a launch
that does not match the Trainer's ``num_nodes`` × ``devices`` (see ``analyses.config_diff``).
"""

from __future__ import annotations

from collections.abc import Iterator

from nccllens import lazy_regex
from nccllens.parse.base import FileContext, Line, event_for

FAMILY = "lightning"

PREFILTER = r"[Ii]nitializing (?:ddp|distributed): GLOBAL_RANK: \d+, MEMBER: \d+/\d+|\] Received SIGTERM: \d+"

_INIT = lazy_regex.compile(r"(?i)initializing (?:ddp|distributed): GLOBAL_RANK: (?P<rank>\d{1,7}), MEMBER: (?P<m>\d+)/(?P<w>\d{1,7})")
_SIGTERM = lazy_regex.compile(r"\[rank: (?P<lr>\d{1,5})\] Received SIGTERM: (?P<num>\d+)")


def parse(lines: list[Line], ctx: FileContext) -> Iterator[dict]:
    for line in lines:
        m = _INIT.search(line.message)
        if not m:
            term = _SIGTERM.search(line.message)
            if term:
                yield event_for(line, "lightning.signal_received", family=FAMILY, local_rank=int(term["lr"]),
                                signal="SIGTERM", level="warning", message=line.message.strip()[:300])
            continue
        rank, world = int(m["rank"]), int(m["w"])
        if rank >= world:
            continue  # not a rank of this world: a malformed line
        yield event_for(line, "lightning.rank_init", family=FAMILY, rank=rank, nranks=world, level="debug",
                        message=line.message.strip()[:300])
