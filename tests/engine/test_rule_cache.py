"""The rule set kept between runs: the same rules as a full load, and never a stale or broken one."""

from __future__ import annotations

import json
import shutil

import pytest
from engine_helpers import GOOD

from nccllens.engine import rule_cache
from nccllens.engine.loader import RuleError, load_dirs, load_rules


def _kept(where):
    return sorted(where.glob("rules-*.json"))


def test_a_kept_rule_set_gives_the_same_rules_as_a_full_load(cache_dir, tmp_path, monkeypatch):
    mine = tmp_path / "mine"
    shutil.copytree(GOOD, mine)
    first = load_rules([mine])
    assert len(_kept(cache_dir)) == 1
    again = load_rules([mine])  # from the cache
    monkeypatch.setenv("NCCLLENS_NO_CACHE", "1")
    assert again == first == load_rules([mine])
    assert any(r.id == "TEST-TORCH-001" for r in again)


def test_a_changed_rule_file_is_read_again(cache_dir, tmp_path):
    mine = tmp_path / "mine"
    shutil.copytree(GOOD, mine)
    rule_file = mine / "TEST-TORCH-001.toml"
    before = {r.id: r for r in load_rules([mine])}["TEST-TORCH-001"]
    rule_file.write_text(rule_file.read_text().replace(before.match.pattern, before.match.pattern + "|zz-new"))
    after = {r.id: r for r in load_rules([mine])}["TEST-TORCH-001"]
    assert after.match.pattern.endswith("|zz-new")


def test_a_rule_set_with_a_problem_is_never_kept_and_fails_every_time(cache_dir, tmp_path):
    mine = tmp_path / "mine"
    shutil.copytree(GOOD, mine)
    (mine / "broken.toml").write_text('id = "TEST-BAD-001"\ncategory = "no_such_category"\n')
    for _ in range(2):
        with pytest.raises(RuleError, match="broken.toml"):
            load_rules([mine])
    assert _kept(cache_dir) == []


@pytest.mark.parametrize("damage", ["not json {", '{"x": 1}', "[1, 2]", None])
def test_a_damaged_cache_is_ignored(cache_dir, tmp_path, damage):
    mine = tmp_path / "mine"
    shutil.copytree(GOOD, mine)
    expected = load_rules([mine])
    (path,) = _kept(cache_dir)
    if damage is None:  # the right layout and name, with documents that are not rules and a forged digest
        held = path.read_text()
        path.write_text(held[:held.index(',"docs":')] + ',"docs":' + json.dumps([["x.toml", {"match": 3}]]) + "}")
    else:
        path.write_text(damage)
    assert load_rules([mine]) == expected


def test_no_cache_writes_nothing(cache_dir, monkeypatch):
    monkeypatch.setenv("NCCLLENS_NO_CACHE", "1")
    assert load_dirs([]).rules
    assert not cache_dir.exists()


def test_a_second_load_in_one_process_does_not_parse_the_kept_sets_again(cache_dir, tmp_path, monkeypatch):
    mine = tmp_path / "mine"
    shutil.copytree(GOOD, mine)
    first = load_rules([mine])
    reads = []
    real = rule_cache.cache_files.read_signed
    monkeypatch.setattr(rule_cache.cache_files, "read_signed", lambda path, name: reads.append(path) or real(path, name))
    assert load_rules([mine]) == first
    assert reads == []  # held in memory under the same key: no JSON parsed, no rule rebuilt
    rule_file = mine / "TEST-TORCH-001.toml"
    rule_file.write_text(rule_file.read_text() + "\n# one more byte\n")
    assert load_rules([mine]) == first  # a new key: loaded again (same rules, from the changed file)
    assert reads  # the new key was looked up in the cache folder
