"""Python regex branches rewritten for Hyperscan, matching a superset of the lines Python matches.

Hyperscan runs here in UTF-8 mode without Unicode properties (with them it refuses ``\\b`` and compiles
~40 times slower), so its ``\\w``, ``\\d`` and ``\\s`` are ASCII where Python's are Unicode. Every
rewrite below only ever widens what a branch matches: a line Python's engine matches is always found,
and the few extra lines are dropped when the exact patterns run on the survivors' messages (as the
literal prefilter's extra candidates always were).

- ``\\b``, ``\\B`` and lookarounds are dropped (an assertion removed can only add matches);
- ``\\w``, ``\\d``, ``\\s`` also accept every non-ASCII character (and ``\\s`` the ASCII separators
  Python counts as space); atomic groups and possessive repeats become plain ones;
- ``{,n}`` is spelt ``{0,n}`` (Hyperscan would read it as literal text);
- so that one line's match does not run into the next, ``\\s``, ``\\W``, ``\\D`` and negated classes
  never match a newline (a line holds none, so Python could not have matched one there).

On text that is all ASCII a Unicode ``\\w``, ``\\d`` or ``\\s`` can only match ASCII characters, so pieces of
pure ASCII (nearly all log bytes) are scanned with a second rewrite that keeps Hyperscan's ASCII classes
(``superset(pattern, ascii=True)``): classes without the whole non-ASCII range let Hyperscan key on
literals again (the glog header ``[EF]\\d{4} \\d\\d:…``, which has no literal, ran an automaton over
every byte).

A branch this cannot rewrite safely (back-references, ``(?x)``, ``\\A``/``\\Z``, a negated class of
``\\W``/``\\S``/``\\D``) gives None: the engine then is not used for that set of patterns.
"""

from __future__ import annotations

import re

from nccllens import lazy_regex
from nccllens.parse.dense import EVERY_LINE
from nccllens.prefilter import FLAGS, closes_at_end, keyed, lettered, selective, structure, top_branches

NON_ASCII = r"\x{80}-\x{10FFFF}"
_OUTSIDE = {
    "w": rf"[\w{NON_ASCII}]",
    "d": rf"[\d{NON_ASCII}]",
    "s": rf"[\t\x0b\x0c\r \x1c-\x1f{NON_ASCII}]",
    "W": r"[^\w\n]",
    "D": r"[^\d\n]",
    "S": r"\S",
}
_IN_CLASS = {  # the same sets as class items (never a newline)
    "w": rf"\w{NON_ASCII}",
    "d": rf"\d{NON_ASCII}",
    "s": rf"\t\x0b\x0c\r \x1c-\x1f{NON_ASCII}",
    "W": r"\x00-\x09\x0b-\x2f\x3a-\x40\x5b-\x5e\x60\x7b-\x{10FFFF}",
    "D": r"\x00-\x09\x0b-\x2f\x3a-\x{10FFFF}",
    "S": r"\x00-\x08\x0e-\x1b\x21-\x{10FFFF}",
}
# the same sets for text that is all ASCII: Python's Unicode classes there are these ASCII ones
_OUTSIDE_ASCII = {**_OUTSIDE, "w": r"\w", "d": r"\d", "s": r"[\t\x0b\x0c\r \x1c-\x1f]"}
_IN_CLASS_ASCII = {**_IN_CLASS, "w": r"\w", "d": r"\d", "s": r"\t\x0b\x0c\r \x1c-\x1f"}
_UNSAFE = set("AZzG") | set("123456789")  # buffer anchors, back-references
_LOOK = ("(?=", "(?!", "(?<=", "(?<!")
_FLAGS = lazy_regex.compile(r"\(\?([a-zA-Z]+)(\)|:)")


class Unsafe(ValueError):
    pass


def _class(pattern: str, i: int, ascii: bool = False) -> tuple[str, int]:
    """The class starting at ``pattern[i] == '['`` rewritten, and the index after it."""
    j = i + 1
    negated = pattern[j:j + 1] == "^"
    j += negated
    items: list[str] = []
    first = True
    while j < len(pattern):
        ch = pattern[j]
        if ch == "]" and not first:
            break
        first = False
        if ch == "\\":
            esc = pattern[j + 1:j + 2]
            if esc in _IN_CLASS:
                if negated and esc in "WSD":
                    raise Unsafe("negated class of a negated set")
                items.append(pattern[j:j + 2] if negated else (_IN_CLASS_ASCII if ascii else _IN_CLASS)[esc])
            elif esc == "b":
                items.append(r"\x08")
            else:
                items.append(pattern[j:j + 2])
            j += 2
            continue
        if ch == "[" and pattern[j + 1:j + 2] in (":", "=", "."):
            raise Unsafe("POSIX class syntax")
        items.append("\\[" if ch == "[" else ch)
        j += 1
    if j >= len(pattern):
        raise Unsafe("unterminated class")
    body = "".join(items)
    return (f"[^{body}\\n]" if negated else f"[{body}]"), j + 1


def _group_end(pattern: str, i: int) -> int:
    """Index after the group opened at ``pattern[i] == '('``."""
    depth, j = 0, i
    while j < len(pattern):
        ch = pattern[j]
        if ch == "\\":
            j += 2
            continue
        if ch == "[":
            j = _class(pattern, j)[1]
            continue
        depth += (ch == "(") - (ch == ")")
        j += 1
        if depth == 0:
            return j
    raise Unsafe("unbalanced group")


def rewrite(pattern: str, ascii: bool = False) -> str:
    """``pattern`` (Python syntax, one branch or a whole pattern) for Hyperscan; raises ``Unsafe``. With
    ``ascii``, for text that is all ASCII."""
    outside = _OUTSIDE_ASCII if ascii else _OUTSIDE
    out: list[str] = []
    i, n = 0, len(pattern)
    while i < n:
        ch = pattern[i]
        if ch == "\\":
            esc = pattern[i + 1:i + 2]
            if esc in _UNSAFE or esc in ("N", "g", "k", "P"):
                raise Unsafe(f"\\{esc}")
            if esc in ("b", "B"):
                pass
            elif esc in outside:
                out.append(outside[esc])
            else:
                out.append(pattern[i:i + 2])
            i += 2
            continue
        if ch == "[":
            text, i = _class(pattern, i, ascii)
            out.append(text)
            continue
        if ch == "(":
            if pattern.startswith(_LOOK, i):
                i = _group_end(pattern, i)  # an assertion dropped: matches more, never fewer
                continue
            if pattern.startswith("(?>", i):
                out.append("(?:")
                i += 3
                continue
            if pattern.startswith("(?P=", i) or pattern.startswith("(?(", i) or pattern.startswith("(?#", i):
                raise Unsafe("group reference or conditional")
            m = _FLAGS.match(pattern, i)
            if m:
                flags = m[1]
                if set(flags) - set("imsu"):
                    raise Unsafe(f"flags {flags}")
                flags = flags.replace("s", "").replace("u", "")  # no newline within a line; UTF-8 always
                out.append(f"(?{flags}{m[2]}" if flags else ("(?:" if m[2] == ":" else ""))
                i = m.end()
                continue
        if ch == "{" and pattern[i + 1:i + 2] == ",":
            out.append("{0")
            i += 1
            continue
        if ch in "*+?}" and pattern[i + 1:i + 2] == "+" and i + 1 < n:
            out.append(ch)  # possessive: the same matches exist without it
            i += 2
            continue
        out.append(ch)
        i += 1
    return "".join(out)


def _caseless_non_ascii(pattern: str) -> bool:
    """Case-insensitive with a non-ASCII cased letter: Hyperscan folds ASCII only without Unicode properties."""
    return "(?" in pattern and any(not c.isascii() and c.lower() != c.upper() for c in pattern) and bool(
        re.search(r"\(\?[a-z]*i", pattern))


def superset(pattern: str, ascii: bool = False) -> str | None:
    """``rewrite`` or None."""
    if _caseless_non_ascii(pattern):
        return None
    try:
        return rewrite(pattern, ascii)
    except (Unsafe, IndexError):
        return None


def _last_group(branch: str) -> int | None:
    """Where the non-capturing group that ends ``branch`` opens (None: it ends otherwise)."""
    opened = [i for i, ch, depth in structure(branch) if ch == "(" and depth == 1]
    if not opened or not branch.startswith("(?:", opened[-1]) or not closes_at_end(branch[opened[-1]:]):
        return None
    return opened[-1]


def atom_end(branch: str, i: int) -> int | None:
    """Index after the item of ``branch`` (Python syntax) that starts at ``i``, before any quantifier: an
    escape, a class, a group or one character. None at a top-level ``|`` or ``)``, or where it does not parse."""
    ch = branch[i]
    try:
        if ch == "\\":
            return i + (4 if branch[i + 1:i + 2] == "x" else 2)
        if ch == "[":
            return _class(branch, i)[1]
        if ch == "(":
            return _group_end(branch, i)
    except (Unsafe, IndexError):
        return None
    return None if ch in "|)" else i + 1


HEAD_MIN = 12  # characters: a shorter head without a literal (``\d%``, ``#0``) is no better a key than its branch


def _unbounded(pattern: str, i: int) -> bool:
    """Is the item that ends before ``pattern[i]`` repeated without bound (``*``, ``+``, ``{m,}``)?"""
    if pattern[i:i + 1] in ("*", "+"):
        return True
    m = re.match(r"\{\d*,\}", pattern[i:])
    return m is not None


def _bounded_end(pattern: str, i: int) -> int:
    """Index after a bounded quantifier (``?``, ``{m}``, ``{m,n}``, lazy or possessive) at ``pattern[i]``, if any."""
    m = re.match(r"(?:\?|\{\d*(?:,\d+)?\})[?+]?", pattern[i:])
    return i + m.end() if m else i


def head(branch: str) -> str | None:
    """The run of ``branch`` before its first unbounded repeat, when that alone is worth looking for instead:
    ``HEAD_MIN`` characters wide at least and holding a letter (a line head such as glog's
    ``[EF]\\d{4} \\d\\d:\\d\\d:\\d\\d\\.\\d{6}``); None otherwise. Wherever the branch matches, its head does (a
    superset). A head of digits and separators only (a time stamp) would match every line of a log that
    prints one."""
    i, n = 0, len(branch)
    while i < n:
        end = atom_end(branch, i)
        if end is None:
            return None
        if _unbounded(branch, end):
            break
        i = _bounded_end(branch, end)
    if i >= n:
        return None  # no unbounded repeat: the branch is its own head
    text = branch[:i]
    return text if lettered(text, HEAD_MIN) else None


def scan_parts(branch: str) -> list[str]:
    """The expressions the scan looks for in place of ``branch`` (Python syntax, before ``superset``).

    A branch that ends in an alternation after a prefix without a selective literal (``NCCL INFO ``
    before twenty NCCL message bodies; an NCCL line head ``host:pid:tid [dev] ``) makes Hyperscan run
    its automaton from every line that holds the prefix: on a log of NCCL lines, every line. Each
    alternative that holds a selective literal of its own is looked for alone, without the prefix
    (wherever prefix and alternative match, the alternative matches: a superset, as everything here);
    the others stay behind the prefix. Where the prefix holds no literal at all (``keyed``: the NCCL line
    head), an alternative with any literal, even a token of every line of some format (``WARN``), is looked
    for alone too: its literal keys the scan, the prefix keys nothing (the NCCL 2.0-2.2 ``file.cu:N WARN``
    branch behind the line head made the scan of a log of NCCL lines 1.4-1.6 times slower). Alternatives
    are split the same way in turn. A branch without any literal (``keyed``) is looked for by its ``head``,
    where it has one: glog's line head, keyed on nothing, was verified back from every ``] `` of every NCCL
    line, a third of the whole scan of a log of NCCL lines."""
    if FLAGS.match(branch):
        return [branch]
    if not keyed(branch):
        found = head(branch)
        if found is not None:
            return [found]
    start = _last_group(branch)
    # a prefix keyed only on literals every line of a dense family holds (``parse.dense.EVERY_LINE``: the
    # SHM rule's ``Channel N : a[b] -> c[d] via `` before ``SHM/``) keys nothing on a log of that family
    if start is None or selective(branch[:start], EVERY_LINE):
        return [branch]
    bare = not keyed(branch[:start])  # the prefix keys nothing: any literal of an alternative does better
    alone, behind = [], []
    for alt in top_branches(branch[start + 3:-1]):
        for part in scan_parts(alt):
            (alone if selective(part) or (bare and keyed(part)) else behind).append(part)
    if not alone:
        return [branch]
    return alone + ([f"{branch[:start]}(?:{'|'.join(behind)})"] if behind else [])
