"""Regular NCCL INFO lines parsed as a frame (``parse.nccl_frame``) give the events the line-by-line parsers
give them (with ``REGULAR`` empty every line goes that way), read alone or in a batch of small files, on
every fixture log that holds NCCL lines and on lines shaped to stay on the line-by-line path."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from nccllens import events as ev
from nccllens.analysis import Options, load_rules
from nccllens.extract.batch import extract_small
from nccllens.extract.plan import combined_prefilter
from nccllens.extract.source import extract_source_tables, year_for
from nccllens.ingest.sources import Source
from nccllens.parse import nccl_frame
from nccllens.regex_groups import pattern_groups
from nccllens.report.outcome import FINISHED_PATTERNS

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
NCCL_LOGS = sorted(p for p in FIXTURES.rglob("*") if p.is_file() and "holdout" not in p.parts
                   and "generate" not in p.parts and p.stat().st_size < (1 << 20)
                   and b" NCCL INFO " in p.read_bytes())
# a real line (fixtures/public/nccl_init_lines: NCCL 2.21.5), the shapes below built from it
INIT = ("kolyoz2:25146:25827 [0] NCCL INFO ncclCommInitRank comm 0x559d5aa8ca00 rank 4 nranks 8 cudaDev 0 "
        "nvmlDev 0 busId 42000 commId 0x996ee6f117cb8e1e - Init START")


def _plan():
    patterns = [r.match.pattern for r in load_rules(Options()) if r.match.pattern] + list(FINISHED_PATTERNS)
    return combined_prefilter(patterns), pattern_groups(patterns)


def _source(name: str, data: bytes) -> Source:
    return Source(name, lambda: iter([data]), len(data))


def _tables(name: str, data: bytes) -> list[list[dict]]:
    """The events of ``data`` read alone and read in a batch with another file."""
    pattern, rules = _plan()
    alone, _, _ = extract_source_tables(_source(name, data), pattern, rules)
    other = _source("other/console.log", b"step 1 loss 2.0\n")
    batch = extract_small([_source(name, data), other], pattern, rules, year_for)
    table = ev.concat(t for t, _, _ in batch)
    return [ev.sort(alone).to_dicts(), ev.sort(table.filter(pl.col("file") == name)).to_dicts()]


def _both(name: str, data: bytes, monkeypatch) -> tuple[list, list]:
    """(events with the regular lines parsed as a frame, events with every line parsed line by line)."""
    with monkeypatch.context() as m:
        m.setattr(nccl_frame, "MIN_ROWS", 0)  # the frame however few the lines
        framed = _tables(name, data)
    with monkeypatch.context() as m:
        m.setattr(nccl_frame, "REGULAR", ())
        lined = _tables(name, data)
    return framed, lined


@pytest.mark.parametrize("path", NCCL_LOGS, ids=lambda p: str(p.relative_to(FIXTURES)))
def test_the_frame_path_gives_the_line_parsers_events(path: Path, monkeypatch):
    framed, lined = _both(f"logs/{path.parent.name}/{path.name}", path.read_bytes(), monkeypatch)
    assert framed == lined


def test_shapes_the_frame_does_not_take_give_the_same_events(monkeypatch):
    head, body = INIT.split(" NCCL INFO ")
    lines = [
        INIT,
        INIT.replace("Init START", "Init COMPLETE"),
        f"[rank4]:{INIT}",  # a launcher prefix gives the line a rank
        f"{head} NCCL INFO [Rank 4] {body}",  # 2.29.7+ rank tag
        f"{head} NCCL INFO Connected all rings",
        f"{head} NCCL INFO Connected all rings   ",  # trailing blanks are trimmed from the message
        f"{head} NCCL INFO {body.replace('rank 4 ', 'rank 12345678901234567890 ')}",  # out of bounds
        f"{head} NCCL INFO {body} [0] NCCL INFO Connected all trees",  # two records glued
        "\u00e9" + INIT,  # not ASCII
    ]
    framed, lined = _both("node/nccl.kolyoz2.25146.log", ("\n".join(lines) + "\n").encode(), monkeypatch)
    assert framed == lined
    kinds = [e["kind"] for e in framed[0]]
    assert kinds.count("nccl.init_start") >= 4 and "nccl.connected" in kinds
    # and the frame took the plain ones only
    frame = pl.DataFrame({"row": range(len(lines)), "line": range(1, len(lines) + 1), "raw": lines,
                          "owner": [0] * len(lines)}, schema_overrides={"row": pl.UInt32, "line": pl.UInt32})
    monkeypatch.setattr(nccl_frame, "MIN_ROWS", 0)
    rest, regular = nccl_frame.split(frame, "owner", pl.DataFrame(schema={"owner": pl.Int64, "wrap": pl.UInt32}),
                                     frame)
    assert regular["row"].to_list() == [0, 1, 4, 6]
    assert rest.height == len(lines) - 4
