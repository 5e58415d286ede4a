"""A traceback cut before its exception line takes the exception of the same traceback printed whole."""

from __future__ import annotations

from pathlib import Path

import nccllens

# source: https://github.com/Lightning-AI/litData/issues/562 (fixtures/public/litdata_hf_index_race_ranks0_3_filenotfound_ddp):
# rank 0's traceback whole, rank 3's cut after three frames of the same code path
CASE = Path(__file__).resolve().parents[2] / "fixtures/public/litdata_hf_index_race_ranks0_3_filenotfound_ddp"


def _lines() -> list[str]:
    return (CASE / "ddp.log").read_text(encoding="utf-8").splitlines()


def test_the_cut_traceback_of_another_rank_is_the_same_exception(tmp_path):
    (tmp_path / "ddp.log").write_text("\n".join(_lines()) + "\n", encoding="utf-8")
    top = nccllens.analyze(str(tmp_path)).findings[0]
    assert (top.category, top.ranks) == ("application_error", [0, 3])


def test_a_cut_traceback_on_another_code_path_stays_unread(tmp_path):
    # synthetic edit: rank 3's frames moved to another script, so nothing says how its traceback ended
    lines = [ln.replace("stream-hf.py", "other.py").replace("dataset.py", "loader.py") if ln.startswith("[rank3]")
             else ln for ln in _lines()]
    (tmp_path / "ddp.log").write_text("\n".join(lines) + "\n", encoding="utf-8")
    top = nccllens.analyze(str(tmp_path)).findings[0]
    assert top.ranks == [0]


def test_whole_tracebacks_that_disagree_leave_the_cut_one_unread():
    import polars as pl

    from nccllens.cut_tracebacks import complete_cut_tracebacks

    frames = "train.py:10 in <module>\nmodel.py:20 in forward"
    events = pl.DataFrame({"kind": ["python.traceback"] * 3, "exc_type": ["KeyError", "ValueError", None],
                           "message": ["KeyError: 'a'", "ValueError: b", "Traceback (most recent call last):"],
                           "detail": [frames, frames, frames], "file": ["x.log"] * 3, "line": [1, 5, 9]})
    assert complete_cut_tracebacks(events)["exc_type"].to_list() == ["KeyError", "ValueError", None]
