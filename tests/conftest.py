"""Test-session settings."""

import os
import tempfile

import pytest

# the prefilter plan cache (nccllens.plan_cache) goes to a directory of the session's own, not the
# user's ~/.cache; subprocesses started by tests inherit it
os.environ.setdefault("NCCLLENS_CACHE_DIR", tempfile.mkdtemp(prefix="nccllens-test-cache-"))


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    """A cache folder of the test's own (not yet created), with caching switched on."""
    where = tmp_path / "cache"
    monkeypatch.setenv("NCCLLENS_CACHE_DIR", str(where))
    monkeypatch.delenv("NCCLLENS_NO_CACHE", raising=False)
    return where
