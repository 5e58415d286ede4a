"""The parsers' window over a file's rows: what comes after a line, and what stands right before it."""

from __future__ import annotations

import polars as pl
from hypothesis import given, settings
from hypothesis import strategies as st

from nccllens.ingest.layout import PathHints
from nccllens.parse.following import follower, make_line

# a cut traceback as ranks print it (https://github.com/modelscope/ms-swift/issues/4340: rank 6's frames, then its
# exception), with another rank's line between
ROWS = [
    '[rank6]:   File "/usr/local/lib/python3.12/dist-packages/torch/distributed/distributed_c10d.py", line 2961, in _tensor_to_object',
    "[rank6]:     return _unpickler(io.BytesIO(buf)).load()",
    "[rank7]:[E524 03:42:41.647787481 ProcessGroupNCCL.cpp:629] [Rank 7] Watchdog caught collective operation timeout",
    "[rank6]: EOFError: Ran out of input",
]


def _window(lines: list[int], raws: list[str]):
    df = pl.DataFrame({"row": list(range(len(raws))), "line": lines, "raw": raws},
                      schema={"row": pl.UInt32, "line": pl.UInt32, "raw": pl.String})
    return follower(df, "x.log", PathHints())


def _line(lines: list[int], raws: list[str], row: int):
    return make_line("x.log", lines[row], row, raws[row], PathHints())


def test_the_lines_before_are_the_same_streams_in_file_order():
    lines = [1, 2, 3, 4]
    _, preceding = _window(lines, ROWS)
    above = preceding(_line(lines, ROWS, 3), 10)
    assert [ln.line for ln in above] == [1, 2]
    assert above[0].message.lstrip().startswith('File "')


def test_the_lines_before_stop_where_the_file_was_not_read():
    lines = [1, 2, 9, 10]  # rows 1 and 2 are lines 2 and 9: the lines between were never read
    _, preceding = _window(lines, ROWS)
    assert preceding(_line(lines, ROWS, 3), 10) == []  # line 9 is another rank's; above it, a gap


def test_at_most_n_lines_the_nearest_kept():
    lines = [1, 2, 3, 4]
    _, preceding = _window(lines, ROWS)
    assert [ln.line for ln in preceding(_line(lines, ROWS, 3), 1)] == [2]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.text(alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\n\r"),
                        max_size=60), min_size=1, max_size=40),
       st.integers(min_value=0, max_value=39), st.integers(min_value=0, max_value=50))
def test_the_window_never_fails_and_never_leaves_its_rows(raws, at, n):
    at = min(at, len(raws) - 1)
    lines = list(range(1, len(raws) + 1))
    following, preceding = _window(lines, raws)
    line = _line(lines, raws, at)
    before = preceding(line, n)
    after = list(following(line, n))
    assert len(before) <= n and len(after) <= n
    assert all(ln.line < line.line for ln in before) and all(ln.line > line.line for ln in after)
    assert [ln.line for ln in before] == sorted(ln.line for ln in before)
