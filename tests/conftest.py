"""Test-session settings."""

import os
import tempfile

# the prefilter plan cache (nccllens.plan_cache) goes to a directory of the session's own, not the
# user's ~/.cache; subprocesses started by tests inherit it
os.environ.setdefault("NCCLLENS_CACHE_DIR", tempfile.mkdtemp(prefix="nccllens-test-cache-"))
