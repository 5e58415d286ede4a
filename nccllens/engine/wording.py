"""Templates worded from what is known: a ``{placeholder}`` the logs leave unknown never shows as ``?``.

In prose the clause around an unknown value is reworded or dropped: ``on {host}`` becomes "on the
node that wrote <file>" (or goes), ``(rank {rank})`` goes, ``Rank {rank} hit`` becomes "A rank hit";
in Chinese ``{host} 上`` becomes "写出 <file> 的节点上", ``rank {rank}`` "某个 rank". In a command
(a `code span`) an unknown host is written ``<node>``, which a shell rejects rather than running
with a wrong name, and a note after the text says what it stands for. The wording follows the
template's own language (Chinese when it holds CJK characters).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from nccllens import lazy_regex

CODE_SPAN = lazy_regex.compile(r"(`[^`\n]*`)")
HOSTLIKE = ("host", "hosts", "peer", "node", "nodes", "where")
MISSING = ("?", "")  # what some callers pass for "not known"
SHELL_NAMES = {"host": "node", "hosts": "node", "peer": "peer", "node": "node", "nodes": "node", "where": "node",
               "rank": "rank", "ranks": "rank", "pci": "gpu", "pid": "pid"}
PEER_PHRASE = ("a peer", "对端节点")
# an unknown value that a sentence cannot lose: the words that stand for it
STAND_INS = {"seq": ("the collective that timed out", "超时的 SeqNum")}
_SENTENCE_START = lazy_regex.compile(r"(?:^|[.!?:;。！？：；]\s*|\n\s*(?:\d+[.)]\s+|[-*]\s+)?)$")


def missing(value: Any) -> bool:
    return value is None or (isinstance(value, str) and value.strip() in MISSING)


def _kind(name: str) -> str:
    if name in HOSTLIKE:
        return "host"
    return "rank" if "rank" in name or name in ("missing", "failed") else "other"


def _node_phrase(source: str | None, zh: bool) -> str:
    if zh:
        return f"写出 {source} 的节点" if source else "出问题的节点"
    return f"the node that wrote {source}" if source else "the affected node"


def _clauses(token: str, name: str, source: str | None, zh: bool) -> list[tuple[str, Callable[[re.Match], str] | str]]:
    """(pattern, replacement) pairs, most specific first, for one unknown ``{name}``."""
    t = r"(?<!\{)" + re.escape(token) + r"(?!\})"
    node = _node_phrase(source, zh)
    kind = _kind(name)
    if name == "peer":  # the other end of a connection: never the node that wrote the line
        return [(r"\s*[（(]" + t + r"[）)]", ""), (t, PEER_PHRASE[1 if zh else 0])]
    stand_in = STAND_INS.get(name, ("", ""))[1 if zh else 0]
    if zh:
        rules = [(r"\s*[（(](?:[A-Za-z]+\s*)?" + t + r"[）)]", "")]
        if kind == "host":
            rules += [(r"在\s*" + t + r"\s*上", f"在{node}上"),
                      (t + r"\s*上(的?)", (lambda m: f"{node}上{m.group(1)}") if source else ""), (t, node)]
        elif kind == "rank":
            rules += [(r"rank\s*" + t, "某个 rank"), (t, "某个 rank")]
        else:
            rules += [(r"\s*" + t + r"\s*(?:ms|s|秒|分钟)", ""), (r"(?:第\s*)?" + t + r"\s*(?:个|号)?\s*", stand_in)]
        return rules
    rules = [(r"\s*\((?:[A-Za-z()]+\s+)?" + t + r"\)", "")]
    if kind == "host":
        place = f" on {node}" if source else ""
        rules += [(r"\s+(?:on|from|at|in) (?:the )?(?:node\(s\)|nodes?|hosts?) " + t, place),
                  (r"\s+(?:on|from|at|in) " + t, place), (t, node)]
    elif kind == "rank":
        rules += [(r"\s+(?:on|from|at|in|of) (?:rank\(s\)|ranks?) " + t, ""),
                  (r"\b(?:Rank\(s\)|Ranks?) " + t, "A rank"), (r"\b(?:rank\(s\)|ranks?) " + t, "a rank"), (t, "a rank")]
    else:
        rules += [(r"\b(?:[Cc]ollective|SeqNum|seq) " + t, stand_in)] if name == "seq" else []
        rules += [(r"\s+(?:after|of|for|with) " + t + r"(?:\s*(?:ms|s|seconds|min|minutes)\b)?", ""),
                  (r"\s*" + t, " " + stand_in if stand_in else "")]
    return rules


def _capitalise(before: str, new: str) -> str:
    """``new`` with a capital first letter when it begins a sentence (``before``: the text before it)."""
    if new and new[0].islower() and _SENTENCE_START.search(before):
        return new[0].upper() + new[1:]
    return new


# Characters are compared with these ranges, not matched with a class: Python's ``re`` fills a table entry
# per code point of a range when it compiles one, ~3 ms for each class of these (on every run with findings).
IDEOGRAPHS = ("\u4e00", "\u9fff")  # CJK unified ideographs
CJK_RANGES = (("\u3000", "\u303f"), IDEOGRAPHS, ("\uff00", "\uffef"))  # CJK punctuation, ideographs, full-width


def is_ideograph(ch: str) -> bool:
    return IDEOGRAPHS[0] <= ch <= IDEOGRAPHS[1]


def has_cjk(text: str) -> bool:
    """Whether ``text`` holds a CJK character (the template is Chinese)."""
    return not text.isascii() and any(low <= ch <= high for ch in text for low, high in CJK_RANGES)


def _junction(left: str, right: str) -> str:
    """Chinese spacing where two pieces meet: none between ideographs, one between an ideograph and
    a Latin letter or digit (the templates' own convention: ``rank 2 上``)."""
    a, b = left.rstrip(" "), right.lstrip(" ")
    if not a or not b:
        return left + right
    x, y = a[-1], b[0]
    if is_ideograph(x) and is_ideograph(y):
        return a + b
    latin_x, latin_y = (x.isascii() and x.isalnum()) or x == "}", (y.isascii() and y.isalnum()) or y == "{"
    if (is_ideograph(x) and latin_y) or (latin_x and is_ideograph(y)):  # "}"/"{": a value to come
        return a + " " + b
    return left + right


def _reword(prose: str, token: str, name: str, source: str | None, zh: bool, before: str = "") -> str:
    """``prose`` without ``token``; ``before``: the text before it (a code span ends there)."""
    for pattern, replacement in _clauses(token, name, source, zh):
        regex = re.compile(pattern)
        while (m := regex.search(prose)) is not None:
            new = replacement if isinstance(replacement, str) else replacement(m)
            context = before + prose[:m.start()]
            new = _capitalise(context, new.lstrip() if not context else new)
            left, right = prose[:m.start()], prose[m.end():]
            if not context and not new:  # the text began with what went: it begins with what follows
                right = _capitalise("", right.lstrip())
            prose = _junction(_junction(left, new), right) if zh else left + new + right
    return re.sub(r"(?<=\S) {2,}(?=\S)", " ", prose)


def _note(names: set[str], source: str | None, zh: bool) -> str:
    parts = []
    for shell in sorted(names):
        what = {"node": _node_phrase(source, zh), "peer": "对端节点" if zh else "the peer node"}.get(shell)
        if zh:
            parts.append(f"`<{shell}>` 代指{what or shell}（日志里没有它的名字，请先替换再运行）")
        else:
            parts.append(f"`<{shell}>` stands for {what or 'the ' + shell}: the logs do not name it; "
                         "replace it before running the command")
    return ("；" if zh else "; ").join(parts) + ("。" if zh else ".")


_DURATION = lazy_regex.compile(r"(?<!\{)\{([a-z_][a-z0-9_]*)\}\s*(ms|s|毫秒|秒)(?![A-Za-z])( ?)")
_UNIT_MS = {"ms": 1, "毫秒": 1, "s": 1000, "秒": 1000}


def spoken_duration(ms: float, zh: bool = False) -> str:
    """A duration as people say it: ``30 min``, ``1 h 10 min``, ``45 s``, ``250 ms`` (``30 分钟``...)."""
    units = (("小时", "分钟", "秒", "毫秒") if zh else ("h", "min", "s", "ms"))
    if ms < 1000:
        return f"{round(ms)} {units[3]}"
    seconds = round(ms / 1000)
    if seconds < 120:
        return f"{seconds} {units[2]}"
    minutes = round(seconds / 60)
    if minutes < 120:
        return f"{minutes} {units[1]}"
    hours, rest = divmod(minutes, 60)
    return f"{hours} {units[0]}" + (f" {rest} {units[1]}" if rest else "")


def spoken_durations(text: str, values: Mapping[str, Any]) -> str:
    """``{timeout_ms} ms`` with a known number becomes ``30 min`` (``1800000 ms`` reads as nothing)."""
    zh = has_cjk(text)

    def one(m: re.Match) -> str:
        value = values.get(m.group(1))
        if isinstance(value, bool) or not isinstance(value, int | float) or value < 60_000 / _UNIT_MS[m.group(2)]:
            return m.group(0)  # short or not a number: as the template says it
        glued = m.end() < len(m.string) and is_ideograph(m.string[m.end()])
        after = "" if zh and glued else m.group(3)  # "10 分钟超时", not "10 分钟 超时"
        return spoken_duration(value * _UNIT_MS[m.group(2)], zh) + after

    return _DURATION.sub(one, text)


def reword_unknown(text: str, values: Mapping[str, Any], names: list[str], source: str | None = None) -> str:
    """``text`` (a template) with every ``{name}`` of ``names`` whose value is unknown reworded away."""
    unknown = [n for n in dict.fromkeys(names) if n and missing(values.get(n))]
    if not unknown:
        return text
    zh = has_cjk(text)
    shells: set[str] = set()
    pieces = CODE_SPAN.split(text)
    for i, piece in enumerate(pieces):
        for name in unknown:
            token = "{" + name + "}"
            if token not in piece:
                continue
            if i % 2:  # a code span: a placeholder the shell rejects
                shell = SHELL_NAMES.get(name, name)
                piece = piece.replace(token, f"<{shell}>")
                shells.add(shell)
            else:
                piece = _reword(piece, token, name, source, zh, "".join(pieces[:i]))
        pieces[i] = piece
    out = "".join(pieces)
    if shells:
        out = out.rstrip() + ("\n" if "\n" in out else " ") + _note(shells, source, zh)
    return out
