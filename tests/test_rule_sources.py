"""Rule files cite public sources only (issue 16 §4).

Comments (`# source: ...`, `# synthetic: built from ...`) and `references` say where a rule's
knowledge and its example lines come from. A reader of the repository cannot open a path on the
machine that wrote the rule, so a local path there is no citation: comments and references must
name public sources (documentation, public threads, a public repository) or describe the run that
printed the line.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import tomllib

RULES = Path(__file__).resolve().parents[1] / "rules"
RULE_FILES = sorted(RULES.rglob("*.toml"))

URL = re.compile(r"\b[a-z][a-z0-9+.-]*://\S+", re.IGNORECASE)
LOCAL = [
    (re.compile(r"/work/"), "a path under /work/"),
    (re.compile(r"(?<![\w.-])fixtures/"), "a fixtures/ path"),
    (re.compile(r"shared/reference|(?<![\w.-])reference/[\w.-]+\.md"), "a local reference file"),
    (re.compile(r"(?<![\w.-])(?:samples|seeds)/"), "a local samples/ or seeds/ path"),
    (re.compile(r"(?<![\w.-])~/"), "a home-directory path"),
    (re.compile(r"\bfile:/"), "a file: URL"),
]
# An absolute path: a slash that starts a word, with at least two components (`/opt/venv/...`).
# A lone `/name` is not one (a store key such as `/missing_key`), and system paths that a rule's
# subject lives in (`/dev/shm`, `/proc/...`, `/sys/...`) are facts, not citations.
ABSOLUTE = re.compile(r"(?<![\w.:/~-])/(?!(?:dev|proc|sys)/)[\w.-]+/[\w./-]*")


def toml_comments(text: str) -> list[tuple[int, str]]:
    """Every comment of a TOML document as (line number, text after '#').

    A small scanner rather than a line test: `#` inside a string (an example line such as
    `#0 all_reduce from /usr/...` in a multi-line string) is not a comment.
    """
    out: list[tuple[int, str]] = []
    i, n, line = 0, len(text), 1
    while i < n:
        c = text[i]
        if c == "\n":
            line += 1
            i += 1
        elif c == "#":
            end = text.find("\n", i)
            end = n if end < 0 else end
            out.append((line, text[i + 1 : end]))
            i = end
        elif text.startswith('"""', i) or text.startswith("'''", i):
            quote = text[i : i + 3]
            j = i + 3
            while True:
                k = text.find(quote, j)
                if k < 0:
                    raise ValueError(f"line {line}: unterminated multi-line string")
                if quote == '"""' and _escaped(text, k):
                    j = k + 1
                    continue
                break
            while text.startswith(quote[0], k + 3):  # up to two quotes may close the content
                k += 1
            line += text.count("\n", i, k + 3)
            i = k + 3
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != "\n":
                if text[j] == c and not (c == '"' and _escaped(text, j)):
                    break
                j += 1
            i = j + 1
        else:
            i += 1
    return out


def _escaped(text: str, k: int) -> bool:
    backslashes = 0
    while k - 1 - backslashes >= 0 and text[k - 1 - backslashes] == "\\":
        backslashes += 1
    return backslashes % 2 == 1


def local_paths(text: str) -> list[str]:
    """What in `text` (URLs removed) is a local path, as short descriptions."""
    bare = URL.sub(" ", text)
    found = [what for pattern, what in LOCAL if pattern.search(bare)]
    m = ABSOLUTE.search(bare)
    if m:
        found.append(f"an absolute path ({m.group(0)})")
    return found


@pytest.mark.parametrize("path", RULE_FILES, ids=lambda p: p.stem)
def test_comments_cite_no_local_path(path: Path) -> None:
    bad = [
        f"{path.relative_to(RULES.parent)}:{line}: {', '.join(what)}: #{comment}"
        for line, comment in toml_comments(path.read_text(encoding="utf-8"))
        if (what := local_paths(comment))
    ]
    assert not bad, "comments must cite public sources, not local paths:\n" + "\n".join(bad)


@pytest.mark.parametrize("path", RULE_FILES, ids=lambda p: p.stem)
def test_references_are_public_urls(path: Path) -> None:
    rule = tomllib.loads(path.read_text(encoding="utf-8"))
    cited = list(rule.get("references", []))
    cited += [ex["source"] for ex in rule.get("examples", []) if "source" in ex]
    bad = [
        ref
        for ref in cited
        if not isinstance(ref, str)
        or not re.fullmatch(r"https://[^\s/]+\.[^\s/]+(?:/\S*)?", ref)
        or local_paths(ref.split("://", 1)[1].split("/", 1)[0])
    ]
    assert not bad, f"{path.name}: references must be public https URLs: {bad}"


def test_rules_were_found() -> None:
    assert len(RULE_FILES) > 100


@pytest.mark.parametrize(
    "comment",
    [
        " source: /work/shared/reference/samples/torch2.13_cpu_logs/x.log",
        " source: fixtures/public/slurm/x.log (https://github.com/o/r/issues/1)",
        " source: https://github.com/o/r/issues/1 (fixtures/public/kernel_host)",
        " synthetic: built from 'x' (reference/pytorch_c10d.md §7.2)",
        " source: /opt/runs/node-a/console.log",
        " quoted in ~/notes/debug.txt",
    ],
)
def test_local_paths_are_caught(comment: str) -> None:
    assert local_paths(comment)


@pytest.mark.parametrize(
    "comment",
    [
        " source: https://github.com/NVIDIA/nccl/blob/v2.21.5-1/src/misc/socket.cc (WARN text)",
        " source: a torchrun run made for this project (torch 2.13.0+cpu, gloo, 127.0.0.1)",
        " synthetic: built from 'wait timeout after 2000ms, keys: /missing_key' (torch/csrc/x.cpp)",
        " the error is a write into a /dev/shm segment that the tmpfs could not back.",
        " source not public: a user's private notes (near miss: TCP/IP reset)",
    ],
)
def test_public_sources_pass(comment: str) -> None:
    assert not local_paths(comment)


def test_scanner_skips_hashes_in_strings() -> None:
    text = 'a = "x # not a comment"\nb = """\n#0 f from /usr/lib/x.py:1\n"""  # real\n# two\n'
    assert toml_comments(text) == [(4, " real"), (5, " two")]
