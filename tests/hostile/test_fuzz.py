"""Property tests: no input crashes a parser or the pipeline.

CI runs a modest budget. The long run (documented in docs/robustness.md):

    NCCLLENS_FUZZ_EXAMPLES=100000 python -m pytest tests/hostile/test_fuzz.py -q
"""

from __future__ import annotations

import os
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nccllens.events import COLUMNS
from nccllens.extract import events_from_text
from nccllens.parse import load_families
from nccllens.parse.base import FileContext, Line

EXAMPLES = int(os.environ.get("NCCLLENS_FUZZ_EXAMPLES", "150"))
FUZZ = settings(max_examples=EXAMPLES, deadline=None, derandomize=EXAMPLES <= 1000,
                suppress_health_check=list(HealthCheck))

ROOT = Path(__file__).resolve().parents[2]


def _real_lines() -> list[str]:
    """Lines of the real fixtures and public excerpts: fuzzing recombines and mutates them."""
    out: list[str] = []
    for path in sorted((ROOT / "fixtures").rglob("*.log"))[:200]:
        try:
            out.extend(path.read_text(errors="replace").splitlines()[:80])
        except OSError:
            continue
    return out or ["[rank0]: Traceback (most recent call last):"]


REAL = _real_lines()
FAMILIES = load_families()

mutated = st.builds(
    lambda line, cut, junk: line[:cut] + junk + line[cut:],
    st.sampled_from(REAL), st.integers(0, 200),
    st.text(alphabet=st.characters(codec="utf-8"), max_size=8),
)
documents = st.lists(st.one_of(st.sampled_from(REAL), mutated, st.text(max_size=120)), max_size=40).map("\n".join)


@FUZZ
@given(st.lists(st.one_of(st.sampled_from(REAL), mutated, st.text(max_size=200)), max_size=20))
def test_every_parser_survives_anything(lines):
    ctx = FileContext(path="fuzz.log", year=2026)
    objs = [Line(file="fuzz.log", line=i + 1, raw=s, message=s, row=i) for i, s in enumerate(lines)]
    for fam in FAMILIES:
        for event in fam.parse(objs, ctx):
            assert isinstance(event, dict)


@FUZZ
@given(documents)
def test_the_whole_pipeline_survives_anything(text):
    assert tuple(events_from_text(text, name="node-a/rank0.log").columns) == COLUMNS


@FUZZ
@given(st.binary(max_size=4096))
def test_the_whole_pipeline_survives_any_bytes(data):
    from nccllens.extract import combined_prefilter, extract_source
    from nccllens.ingest.sources import Source

    events, info = extract_source(Source("node-b/dmesg.txt", lambda: iter([data]), len(data)), combined_prefilter())
    assert info.events == events.height
