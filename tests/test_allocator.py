"""The command's own process asks polars' allocator to return freed memory sooner (nccllens.allocator)."""

import os
import subprocess
import sys

import pytest

from nccllens import allocator

SHOW = ("import os; from nccllens import allocator; allocator.for_main_process(); "
        "print(os.environ.get(allocator.VARIABLE))\n"
        "with allocator.for_workers(): print(os.environ.get(allocator.VARIABLE))\n"
        "print(os.environ.get(allocator.VARIABLE))")


def _run(env_value: str | None, **extra: str) -> list[str]:
    env = {k: v for k, v in os.environ.items() if k not in (allocator.VARIABLE, allocator.ROLE)}
    if env_value is not None:
        env[allocator.VARIABLE] = env_value
    env.update(extra)
    out = subprocess.run([sys.executable, "-c", SHOW], env=env, capture_output=True, text=True, check=True)
    return out.stdout.split()


@pytest.mark.parametrize("inherited", [None, allocator.WORKERS])
def test_main_process_setting_when_unset_or_polars_own(inherited):
    # polars writes its own setting into the environment: a parent that imported polars passes it on
    main, workers, after = _run(inherited)
    assert main == allocator.MAIN
    assert workers == allocator.WORKERS  # worker processes get polars' setting back
    assert after == allocator.MAIN  # workers forked before polars loads: the main process keeps its own


def test_a_worker_keeps_polars_setting():
    # a spawned worker imports the command's module again before polars: it must not take the main setting
    env = {allocator.ROLE: "worker"}
    assert _run(allocator.WORKERS, **env) == [allocator.WORKERS] * 3


def test_a_user_setting_is_left_alone():
    assert _run("dirty_decay_ms:1000") == ["dirty_decay_ms:1000"] * 3


def test_nothing_changes_once_polars_is_imported():
    import polars  # noqa: F401 - already imported by the test session; the point is that it is

    before = os.environ.get(allocator.VARIABLE)
    allocator.for_main_process()
    assert os.environ.get(allocator.VARIABLE) == before
