"""Settings from ``nccllens.toml`` or ``pyproject.toml`` ``[tool.nccllens]`` in the working directory
(never its parents, never inside an analysed folder), then the CLI.

Keys: ``rules = [dirs]`` (relative to the config file), ``select = [...]``, ``ignore = [...]``
(rule ids, aliases, id prefixes or categories), ``lang = "en" | "zh"``, ``fail-on`` (a severity).
On the command line ``--rules`` adds directories, ``--select`` replaces the configured selection,
``--ignore`` adds to the configured one, ``--lang`` and ``--fail-on`` replace.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from nccllens.engine.locate import KeyLines
from nccllens.taxonomy import SEVERITIES

CONFIG_NAMES = ("nccllens.toml", "pyproject.toml")
KEYS = ("rules", "select", "ignore", "lang", "fail-on")
LANGS = ("en", "zh")


class ConfigError(ValueError):
    """A bad configuration file; the message is ``path:line: what is wrong``."""


@dataclass
class Settings:
    """The settings a configuration file gives (empty when none was found or read)."""

    rules: list[Path] = field(default_factory=list)
    select: list[str] = field(default_factory=list)
    ignore: list[str] = field(default_factory=list)
    lang: str | None = None
    fail_on: str | None = None
    source: Path | None = None  # the configuration file these came from, if any
    ignored: Path | None = None  # a configuration found but not read: it lies in an analysed folder


def _table(path: Path) -> tuple[dict | None, str]:
    """The nccllens table of ``path`` (None when a pyproject.toml has none) and the file text."""
    if sys.version_info >= (3, 11):  # here: a run that finds no file to parse does not load the parser
        import tomllib
    else:  # pragma: no cover - Python 3.10
        import tomli as tomllib
    text = path.read_text(encoding="utf-8")
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        where = re.search(r"\(at line (\d+), column \d+\)", str(err))
        message = re.sub(r"\s*\(at line \d+, column \d+\)", "", str(err))
        raise ConfigError(f"{path}:{where.group(1) if where else 1}: invalid TOML: {message}") from None
    except RecursionError:
        raise ConfigError(f"{path}:1: invalid TOML: nested too deeply") from None
    if path.name == "pyproject.toml":
        tool = data.get("tool", {})
        return (tool.get("nccllens") if isinstance(tool, dict) else None), text
    return data, text


def find_config(start: Path | None = None) -> Path | None:
    """The configuration in ``start`` (default: the working directory), and only there: a folder's
    parents are not searched, so a ``nccllens.toml`` shipped above the logs of a ticket is never read
    because the user ran from inside it.

    ``nccllens.toml`` wins over ``pyproject.toml``; a pyproject.toml without a ``[tool.nccllens]``
    table does not count.
    """
    directory = (start or Path.cwd()).resolve()
    for name in CONFIG_NAMES:
        candidate = directory / name
        if candidate.is_file():
            try:
                table, _ = _table(candidate)
            except (ConfigError, OSError, UnicodeDecodeError):
                if name == "pyproject.toml" and not _mentions_us(candidate):
                    continue  # somebody else's broken pyproject is not our configuration
                return candidate  # ours, and broken: read_config says where
            if table is not None:
                return candidate
    return None


def _mentions_us(path: Path) -> bool:
    try:
        return "[tool.nccllens" in path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False


def inside_analysed(config: Path, paths: list[str]) -> bool:
    """Whether ``config`` lies in (or is) one of the analysed ``paths``: logs never configure their analysis."""
    where = config.resolve()
    for raw in paths:
        if raw == "-":
            continue
        try:
            root = Path(raw).resolve()
        except (OSError, RuntimeError):
            continue
        if where == root or root in where.parents:
            return True
    return False


def _str_list(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


def read_config(path: Path) -> Settings:
    """Settings from one configuration file; ConfigError (``path:line: message``) when it is wrong."""
    table, text = _table(path)
    table = table or {}
    prefix = ("tool", "nccllens") if path.name == "pyproject.toml" else ()
    lines = KeyLines(text)

    def fail(key: str, message: str) -> ConfigError:
        return ConfigError(f"{path}:{lines.line_of(*prefix, key)}: {message}")

    for key in table:
        if key not in KEYS:
            raise fail(key, f"unknown key '{key}' (known: {', '.join(KEYS)})")
    for key in ("rules", "select", "ignore"):
        if key in table and not _str_list(table[key]):
            raise fail(key, f"'{key}' must be a list of strings")
    lang = table.get("lang")
    if lang is not None and lang not in LANGS:
        raise fail("lang", f"lang must be one of {', '.join(LANGS)}, not {lang!r}")
    fail_on = table.get("fail-on")
    if fail_on is not None and fail_on not in SEVERITIES:
        raise fail("fail-on", f"fail-on must be one of {', '.join(SEVERITIES)}, not {fail_on!r}")
    for d in table.get("rules", []):
        if unreasonable_rule_path(path.parent / d):
            raise fail("rules", f"rule folder {d!r} is outside reason (a file system root or a home folder)")
    return Settings(
        rules=[(path.parent / d) for d in table.get("rules", [])],
        select=list(table.get("select", [])),
        ignore=list(table.get("ignore", [])),
        lang=lang,
        fail_on=fail_on,
        source=path,
    )


def unreasonable_rule_path(path: Path) -> bool:
    """``/``, a home folder or one of its parents: a rule folder there would walk the whole file system."""
    try:
        where = path.resolve()
    except (OSError, RuntimeError):
        return False
    home = Path.home().resolve()
    return where == Path(where.anchor) or where == home or where in home.parents


def load_settings(start: Path | None = None) -> Settings:
    """The settings of the nearest configuration file, or the defaults when there is none."""
    path = find_config(start)
    return read_config(path) if path else Settings()


def resolve(rules: list[str] | None = None, select: list[str] | None = None, ignore: list[str] | None = None,
            lang: str | None = None, fail_on: str | None = None, start: Path | None = None,
            config: Path | None = None, analysed: list[str] | None = None) -> Settings:
    """Configuration file first, command line over it (see the module docstring for how they merge).
    A configuration inside one of the ``analysed`` paths is not read (``Settings.ignored`` names it)."""
    for r in rules or []:
        if unreasonable_rule_path(Path(r)):
            raise ConfigError(f"--rules {r}: a rule folder outside reason (a file system root or a home folder)")
    found = config or find_config(start)
    ignored = found if found is not None and config is None and inside_analysed(found, analysed or []) else None
    base = read_config(found) if found is not None and ignored is None else Settings()
    base.ignored = ignored
    return Settings(
        rules=[*base.rules, *(Path(r) for r in rules or [])],
        select=list(select) if select else base.select,
        ignore=[*base.ignore, *(ignore or [])],
        lang=lang or base.lang,
        fail_on=fail_on or base.fail_on,
        source=base.source,
        ignored=base.ignored,
    )
