"""Which files of a rule folder are rules: hidden ones below the folder are not, a hidden folder above it
(an install under ``~/.local`` or a ``.venv``) changes nothing."""

from __future__ import annotations

import shutil
from pathlib import Path

from nccllens.engine.loader import builtin_rules_dir, load_rules


def test_rules_under_a_hidden_folder_are_loaded(tmp_path: Path):
    rules = builtin_rules_dir().resolve()
    folder = tmp_path / ".venv" / "rules"
    shutil.copytree(rules, folder)
    one = next(rules.rglob("*.toml"))
    shutil.copy(one, folder / f".{one.name}")  # a hidden file: left out
    (folder / ".old").mkdir()
    shutil.copy(one, folder / ".old" / one.name)  # a hidden folder: left out (else: a duplicate id)
    expected = sorted(r.id for r in load_rules(builtin=True))
    assert sorted(r.id for r in load_rules([folder], builtin=False)) == expected
