"""A scan expression without the end that only lengthens its matches.

Hyperscan reports every end offset at which an expression matches: ``Connected all \\w+`` on ``Connected all
rings`` reports five matches, ``NET/IB : Using [0]mlx5_0:1/IB [^;]*`` one per character of the device list. Each
report is a Python callback and a line to number (``engine.scan``, ``engine.line_bits``). Wherever a branch
matches, the branch without its trailing repeats beyond their minimum (``\\w+`` → ``\\w``), its trailing optional
items and a final ``$`` matches too, on the same line: a superset, as everything the scan looks for (the exact
patterns run on the survivors afterwards). It is used only where what is left still holds a literal as
selective as the branch's (else it would stop at many more lines than before).
"""

from __future__ import annotations

import re

from nccllens.extract.superset import atom_end
from nccllens.parse.dense import EVERY_LINE
from nccllens.prefilter import FLAGS, keyed, selective, top_branches

_QUANTIFIER = re.compile(r"(?:[*+?]|\{(\d*)(?:,\d*)?\})[?+]?")


def trimmed(branch: str) -> str:
    """``branch`` (Python syntax, one top-level branch) without the end that only lengthens its matches, where
    what is left is keyed as well as the branch."""
    if FLAGS.match(branch):
        return branch
    out = _trim(branch)
    if out == branch or not keyed(out) or (selective(branch, EVERY_LINE) and not selective(out, EVERY_LINE)):
        return branch
    return out


def _trim(branch: str) -> str:
    items: list[tuple[int, int, int]] = []  # (start, end before its quantifier, end)
    i, n = 0, len(branch)
    while i < n:
        end = atom_end(branch, i)
        if end is None:
            return branch  # a top-level alternation, or what does not parse: left as it is
        q = _QUANTIFIER.match(branch, end)
        items.append((i, end, q.end() if q else end))
        i = items[-1][2]
    cut, tail = n, ""
    while items:
        start, end, stop = items.pop()
        item, quantifier = branch[start:end], branch[end:stop]
        if not quantifier:
            if item == "$":
                cut = start
                continue
            if item.startswith("(?:"):  # a final group: each of its alternatives trimmed in turn
                alternatives = [_trim(alt) for alt in top_branches(item[3:-1])]
                cut = start
                if "" in alternatives:  # it may match nothing: it goes, and what comes before it is trimmed too
                    continue
                tail = "(?:" + "|".join(alternatives) + ")"
            break
        least = 1 if quantifier[0] == "+" else 0 if quantifier[0] in "*?" else int(re.match(r"\{(\d*)", quantifier)[1] or 0)
        cut = start
        if least:
            tail = item + ("" if least == 1 else f"{{{least}}}")
            break
    return branch[:cut] + tail
