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


# source: https://github.com/modelscope/ms-swift/issues/4340 (fixtures/public/ms_swift_packing_rank0_broadcast_timeout):
# a paste that starts mid-traceback: rank 6's frames inside broadcast_object_list, then its EOFError
SWIFT = Path(__file__).resolve().parents[2] / "fixtures/public/ms_swift_packing_rank0_broadcast_timeout"


def test_the_frames_above_a_headless_exception_say_where_it_was_raised(tmp_path):
    rank6 = [ln for ln in (SWIFT / "part2_rank6_eoferror_rank7_watchdog.log").read_text(encoding="utf-8").splitlines()
             if ln.startswith("[rank6]")]
    assert not any("Traceback (most recent" in ln for ln in rank6)
    (tmp_path / "rank6.log").write_text("\n".join(rank6) + "\n", encoding="utf-8")
    report = nccllens.analyze(str(tmp_path))
    # unpickling what broadcast_object_list received: the collective failed, not the program
    assert not [f for f in report.findings if f.category == "application_error" and f.role == "cause"]
    unread = [f for f in report.findings if f.rule == "AN-UNCLAIMED"]
    assert unread and unread[0].category == "collective_timeout" and unread[0].ranks == [6]


def test_a_headless_exception_with_no_frames_above_is_read_as_before(tmp_path):
    rank6 = [ln for ln in (SWIFT / "part2_rank6_eoferror_rank7_watchdog.log").read_text(encoding="utf-8").splitlines()
             if ln.startswith("[rank6]: EOFError")]
    (tmp_path / "rank6.log").write_text("\n".join(rank6) + "\n", encoding="utf-8")
    top = nccllens.analyze(str(tmp_path)).findings[0]
    assert (top.rule, top.category, top.ranks) == ("NL-APP-014", "application_error", [6])
