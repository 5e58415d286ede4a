"""Settings from the nearest ``nccllens.toml`` or ``pyproject.toml`` ``[tool.nccllens]``, then the CLI.

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

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

CONFIG_NAMES = ("nccllens.toml", "pyproject.toml")
KEYS = ("rules", "select", "ignore", "lang", "fail-on")
LANGS = ("en", "zh")


class ConfigError(ValueError):
    """A bad configuration file; the message is ``path:line: what is wrong``."""


@dataclass
class Settings:
    rules: list[Path] = field(default_factory=list)
    select: list[str] = field(default_factory=list)
    ignore: list[str] = field(default_factory=list)
    lang: str | None = None
    fail_on: str | None = None
    source: Path | None = None  # the configuration file these came from, if any


def _table(path: Path) -> tuple[dict | None, str]:
    """The nccllens table of ``path`` (None when a pyproject.toml has none) and the file text."""
    text = path.read_text(encoding="utf-8")
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        where = re.search(r"\(at line (\d+), column \d+\)", str(err))
        message = re.sub(r"\s*\(at line \d+, column \d+\)", "", str(err))
        raise ConfigError(f"{path}:{where.group(1) if where else 1}: invalid TOML: {message}") from None
    if path.name == "pyproject.toml":
        tool = data.get("tool", {})
        return (tool.get("nccllens") if isinstance(tool, dict) else None), text
    return data, text


def find_config(start: Path | None = None) -> Path | None:
    """The nearest configuration, looking in ``start`` (default: the working directory) and upwards.

    In each directory ``nccllens.toml`` wins over ``pyproject.toml``; a pyproject.toml without a
    ``[tool.nccllens]`` table does not count.
    """
    here = (start or Path.cwd()).resolve()
    for directory in (here, *here.parents):
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
    return Settings(
        rules=[(path.parent / d) for d in table.get("rules", [])],
        select=list(table.get("select", [])),
        ignore=list(table.get("ignore", [])),
        lang=lang,
        fail_on=fail_on,
        source=path,
    )


def load_settings(start: Path | None = None) -> Settings:
    """The settings of the nearest configuration file, or the defaults when there is none."""
    path = find_config(start)
    return read_config(path) if path else Settings()


def start_for(paths: list[str]) -> Path | None:
    """Where to look for the configuration, like ruff: from the first analysed folder (or a file's
    folder) upwards when one holds a configuration, else None (the working directory)."""
    for p in paths:
        if p == "-":
            continue
        folder = Path(p) if Path(p).is_dir() else Path(p).parent
        if folder.exists() and find_config(folder) is not None:
            return folder
    return None


def resolve(rules: list[str] | None = None, select: list[str] | None = None, ignore: list[str] | None = None,
            lang: str | None = None, fail_on: str | None = None, start: Path | None = None,
            config: Path | None = None) -> Settings:
    """Configuration file first, command line over it (see the module docstring for how they merge)."""
    base = read_config(config) if config else load_settings(start)
    return Settings(
        rules=[*base.rules, *(Path(r) for r in rules or [])],
        select=list(select) if select else base.select,
        ignore=[*base.ignore, *(ignore or [])],
        lang=lang or base.lang,
        fail_on=fail_on or base.fail_on,
        source=base.source,
    )
