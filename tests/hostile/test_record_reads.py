"""A file of many short records costs what it holds, not records x their longest shape (issue 19 §3).

Found by the whole-input fuzz: ~1.2 KB zips that unpacked to a few thousand copies of four real lines
(a ``Traceback (most recent call last):`` line, a frame, a Gloo warning with its own log header) took
66-103 s on the loaded machine. Each traceback read the 200 lines a traceback may have, though the
next line already ended it, and claiming each record's lines scanned every line of the file.
(A file under 4 MiB is parsed whole, its repeats not folded first.) Counters, not clocks: lines the parsers read after a record's first one, and lines walked per line.
The lines are real, read from a fixture (a torchrun run made for this project).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from nccllens.extract import batch
from nccllens.parse import following, survivors
from tests.hostile.planted import analyze_planted

FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "dataloader_worker_killed" / "node-a" / "console.log"


def _line(starts: str) -> str:
    return next(ln for ln in FIXTURE.read_text().splitlines() if ln.startswith(starts))


RECORD = "\n".join([_line("Traceback (most recent call last):"), _line("    elastic_launch("),
                    _line("[W1122 "), _line("[rank1]: Traceback (most recent call last):")]) + "\n"


class _Walked(list):
    """A list of survivors that counts the lines walked over in whole passes (slices are not counted)."""

    walked = 0

    def __iter__(self):
        _Walked.walked += len(self)
        return super().__iter__()


@pytest.fixture
def counters(monkeypatch):
    counts = {"lines": 0, "read": 0, "walked": 0}
    real_parse, real_following = survivors.parse_lines, following.Following

    class Counting(real_following):
        def _read(self, upto):
            before = len(self._got)
            super()._read(upto)
            counts["read"] += len(self._got) - before

    def parse_lines(lines, masks, ctx):
        counts["lines"] += len(lines)
        _Walked.walked = 0
        out = real_parse(_Walked(lines), masks, ctx)
        counts["walked"] += _Walked.walked
        return out

    monkeypatch.setattr(following, "Following", Counting)
    for module in (survivors, batch):  # a small file is parsed in a batch, others one by one
        monkeypatch.setattr(module, "parse_lines", parse_lines)
    return counts


def test_many_short_tracebacks_read_each_line_a_bounded_number_of_times(tmp_path, counters):
    per_line = []
    for copies in (100, 400):
        for key in counters:
            counters[key] = 0
        folder = tmp_path / str(copies)
        folder.mkdir()
        (folder / "node1.log").write_text(RECORD * copies)
        analyze_planted(folder)
        # every record reached the parsers: its two traceback heads (the frame line is read as a follower; the
        # warning line reaches them only where a prefilter passes more than its patterns match)
        assert counters["lines"] >= 2 * copies
        assert 0 < counters["read"] <= 4 * counters["lines"]  # was ~200 per traceback: its longest shape
        per_line.append(counters["walked"] / counters["lines"])
    assert per_line[1] <= per_line[0] * 1.25 + 1  # walks per line do not grow with the file (were 4x)
