"""Load rule files: the packaged ``rules/`` directory plus any extra directories, validated on load."""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from pathlib import Path

import nccllens
from nccllens import lazy_regex
from nccllens.engine import rule_cache
from nccllens.engine.locate import KeyLines
from nccllens.engine.patterns import check_patterns, nested_quantifiers
from nccllens.engine.rule import Rule, rule_from_dict
from nccllens.engine.validate import Problem, check_document

_TOML_POSITION = lazy_regex.compile(r"\(at line (\d+), column \d+\)|\(at end of document\)")


class RuleError(Exception):
    """Rules that do not pass validation; ``str()`` lists one ``path:line: message`` per line."""

    def __init__(self, problems: list[Problem]) -> None:
        self.problems = problems
        super().__init__("\n".join(str(p) for p in problems))


@dataclass
class RuleSet:
    """The rules that loaded, and the problems of those that did not."""

    rules: list[Rule] = field(default_factory=list)  # the valid rules, sorted by id
    problems: list[Problem] = field(default_factory=list)


def builtin_rules_dir() -> Path:
    """The packaged rules: ``nccllens/rules`` when installed, else the checkout's top-level ``rules/``."""
    packaged = Path(nccllens.__file__).parent / "rules"
    return packaged if packaged.is_dir() else Path(nccllens.__file__).parents[1] / "rules"


def display_path(path: Path) -> str:
    """Relative to the working directory when the file lies under it, else absolute."""
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


@dataclass
class _Loaded:
    """One rule file as read: its text, its TOML document (None: unreadable) and its problems."""

    path: Path
    shown: str
    text: str
    data: dict | None
    problems: list[Problem]
    report: bool  # problems in this file are the caller's to see


def _read(path: Path, report: bool) -> _Loaded:
    if sys.version_info >= (3, 11):  # here: a run that finds no file to parse does not load the parser
        import tomllib
    else:  # pragma: no cover - Python 3.10
        import tomli as tomllib
    shown = display_path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        return _Loaded(path, shown, "", None, [Problem(shown, 1, f"cannot read the rule file: {err}")], report)
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        found = _TOML_POSITION.search(str(err))
        if found and found.group(1):
            line = int(found.group(1))
        else:
            line = max(1, len(text.splitlines()))
        reason = _TOML_POSITION.sub("", str(err)).strip()
        return _Loaded(path, shown, text, None, [Problem(shown, line, f"invalid TOML: {reason}")], report)
    except RecursionError:
        return _Loaded(path, shown, text, None, [Problem(shown, 1, "invalid TOML: nested too deeply")], report)
    problems = check_document(data, text, shown, stem=path.stem)
    return _Loaded(path, shown, text, data, problems, report)


def _rule_files(directory: Path) -> list[str]:
    """``directory`` itself when it is a file, else the ``*.toml`` files under it in path order. Hidden files
    and folders below it are left out, not those above it: an install under ``~/.local`` or a ``.venv``
    keeps its rules. Paths as text: a run that finds the set in the cache makes no ``Path`` of them."""
    if directory.is_file():
        return [str(directory)]
    found = []
    for root, folders, files in os.walk(directory):
        folders[:] = [f for f in folders if not f.startswith(".")]
        found += [os.path.join(root, f) for f in files if f.endswith(".toml") and not f.startswith(".")]
    return sorted(found, key=lambda path: path.split(os.sep))  # as ``Path`` objects sort


def load_dirs(dirs: list[Path], *, builtin: bool = True) -> RuleSet:
    """Load and validate every rule under ``dirs`` (and the packaged rules when ``builtin``).

    Problems of the packaged rules are reported only when its directory is also among ``dirs``;
    its rules still count for duplicate ids and references. Rules with problems are left out.
    """
    wanted: dict[Path, bool] = {}
    if builtin and builtin_rules_dir().is_dir():
        wanted[builtin_rules_dir().resolve()] = False
    for d in dirs:
        wanted[Path(d).resolve()] = True
    loaded: list[_Loaded] = []
    files: list[tuple[str, bool]] = []
    for directory, report in wanted.items():
        if not directory.exists():
            shown = display_path(directory)
            loaded.append(_Loaded(directory, shown, "", None, [Problem(shown, 0, "no such rule directory")], report))
            continue
        files += [(path, report) for path in _rule_files(directory)]
    name = None if loaded else rule_cache.key(files)
    held = rule_cache.recall(name)
    if held is not None:
        return RuleSet(held)
    kept = rule_cache.get(name)
    if kept is not None:
        try:
            rules = sorted((rule_from_dict(doc, path) for path, doc in kept), key=lambda r: r.id)
        except (TypeError, ValueError, KeyError, AttributeError):  # a damaged cache: load as without one
            pass
        else:
            rule_cache.remember(name, rules)
            return RuleSet(rules)
    loaded.extend(_read(Path(path), report) for path, report in files)
    _check_patterns(loaded)
    _check_set(loaded)
    result = RuleSet()
    for item in loaded:
        if item.report:
            result.problems.extend(item.problems)
        if item.data is not None and not item.problems:
            result.rules.append(rule_from_dict(item.data, item.path))
    result.rules.sort(key=lambda r: r.id)
    result.problems.sort(key=lambda p: (p.path, p.line, p.message))
    if all(item.data is not None and not item.problems for item in loaded):
        rule_cache.put(name, [(item.path, item.data) for item in loaded])
        rule_cache.remember(name, result.rules)
    return result


def _check_patterns(loaded: list[_Loaded]) -> None:
    patterns = {}
    for item in loaded:
        match = (item.data or {}).get("match")
        pattern = match.get("pattern") if isinstance(match, dict) else None
        if isinstance(pattern, str) and pattern and item.report:  # the packaged rules are checked by tests
            patterns[id(item)] = pattern
    checks = check_patterns(list(patterns.values()))
    for item in loaded:
        pattern = patterns.get(id(item))
        if pattern is None:
            continue
        check, line = checks[pattern], KeyLines(item.text).line_of("match", "pattern")
        if check.error:
            item.problems.append(Problem(item.shown, line, f"pattern does not compile in polars: {check.error}"))
        elif risk := nested_quantifiers(pattern):
            item.problems.append(Problem(item.shown, line, f"pattern may backtrack without end: {risk}; "
                                         "write the repetition once, e.g. (?:ab)+ instead of (a+b?)+"))
        elif check.seconds is not None:
            item.problems.append(Problem(
                item.shown, line,
                f"pattern too slow: {check.seconds * 1000:.0f} ms to compile and search 64 KiB (limit 200 ms);"
                " bound the repetitions or anchor on a literal"))


def _check_set(loaded: list[_Loaded]) -> None:
    """Unique ids and aliases across all directories; references name a known rule."""
    owners: dict[str, tuple[_Loaded, str]] = {}  # line numbers are looked up only for a duplicate
    for item in loaded:
        data = item.data or {}
        names = [("id", data.get("id"))] + [("aliases", a) for a in data.get("aliases") or []]
        for key, name in names:
            if not isinstance(name, str):
                continue
            if name in owners:
                first, first_key = owners[name]
                where = f"{first.shown}:{KeyLines(first.text).line_of(first_key)}"
                item.problems.append(Problem(item.shown, KeyLines(item.text).line_of(key),
                                             f"duplicate rule id or alias '{name}' (also {where})"))
            else:
                owners[name] = (item, key)
    for item in loaded:
        data = item.data or {}
        match = data.get("match") if isinstance(data.get("match"), dict) else {}
        explains = data.get("explains") if isinstance(data.get("explains"), dict) else {}
        refs = [(("match", k), match.get(k) or []) for k in ("requires", "absent")]
        refs += [(("match", k), [match[k]] if isinstance(match.get(k), str) and match[k] else [])
                 for k in ("before", "after")]
        refs.append((("explains", "rules"), explains.get("rules") or []))
        keys = KeyLines(item.text)
        for where, names in refs:
            for name in names if isinstance(names, list) else []:
                if isinstance(name, str) and name not in owners:
                    item.problems.append(Problem(item.shown, keys.line_of(*where),
                                                 f"{'.'.join(where)}: no rule named '{name}'"))


def load_rules(extra_dirs: list[Path] | tuple = (), *, builtin: bool = True, strict: bool = True) -> list[Rule]:
    """The rules to run. ``strict``: raise RuleError on any problem in ``extra_dirs``."""
    result = load_dirs([Path(d) for d in extra_dirs], builtin=builtin)
    if strict and result.problems:
        raise RuleError(result.problems)
    return result.rules


def check_dirs(dirs: list[Path]) -> list[Problem]:
    """Every problem in ``dirs`` (what ``nccllens rules check`` prints)."""
    return load_dirs([Path(d) for d in dirs]).problems

