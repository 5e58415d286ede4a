"""torchrun error.json (``@record``) -> one ``torchrun.error_file`` event; never raises on bad input.

Real files: fixtures/exception_one_rank (torch 2.13.0+cpu run, see its expected.toml).
"""

from __future__ import annotations

import glob
import json
from datetime import datetime, timezone
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from nccllens.parse.error_json import parse_error_json

PROJECT = str(Path(__file__).resolve().parents[2])  # the checkout, wherever it was cloned
SHARED = str(Path(__file__).resolve().parents[3] / "shared")  # ../shared beside it

ROOT = f"{PROJECT}/fixtures/exception_one_rank"


def error_file(node: str, local_rank: int) -> str:
    """The run id in the path changes when the fixture is regenerated."""
    (path,) = glob.glob(f"{ROOT}/{node}/logs/*/attempt_0/{local_rank}/error.json")
    return path


def read(path: str) -> bytes:
    with open(path, "rb") as fh:
        return fh.read()


def test_keyerror_error_file():
    path = error_file("node-b", 1)
    (e,) = parse_error_json(read(path), path)
    stamp = json.loads(read(path))["message"]["extraInfo"]["timestamp"]
    assert (e["kind"], e["family"], e["level"]) == ("torchrun.error_file", "torchrun", "error")
    assert e["exc_type"] == "KeyError" and e["message"] == "KeyError: 'labels'"
    assert e["detail"].split("\n")[-1].startswith("/work/main/fixtures/generate/jobs/train.py:")
    assert e["detail"].split("\n")[-1].endswith(" in main")
    utc = datetime.fromtimestamp(int(stamp), tz=timezone.utc).replace(tzinfo=None)
    assert e["ts"] == utc and e["ts_kind"] == "absolute" and e["value"] == stamp
    # the node-b failure table printed the same instant (that agent ran on UTC)
    console = open(f"{ROOT}/node-b/console.log").read()
    assert utc.strftime("time      : %Y-%m-%d_%H:%M:%S") in console
    assert (e["attempt"], e["local_rank"], e["file"], e["line"]) == (0, 1, path, 1)


def test_gloo_peer_closed_error_file_keeps_first_line_of_message():
    path = error_file("node-a", 0)
    (e,) = parse_error_json(read(path), path)
    assert e["exc_type"] == "RuntimeError"
    assert e["message"].startswith("RuntimeError: [/__w/pytorch/pytorch/third_party/gloo/gloo/transport/tcp/pair.cc")
    assert "Connection closed by peer" in e["message"]
    assert e["local_rank"] == 0


def test_error_code_and_string_message_shapes():
    # synthetic: built from ErrorHandler.record_exception's layout {"message": {"message": f"{type(e).__name__}:
    # {e}", "extraInfo": {...}}} plus "errorCode" as dump_error_file() adds it, torch 2.13
    data = json.dumps({"message": {"message": "SignalException: Process 17 got signal: 15",
                                   "extraInfo": {"py_callstack": "", "timestamp": "0"}, "errorCode": -15}})
    (e,) = parse_error_json(data.encode(), "x/error.json")
    assert (e["exc_type"], e["exit_code"]) == ("SignalException", -15)
    # the handler also tolerates a plain-string "message"
    (s,) = parse_error_json(b'{"message": "RuntimeError: boom"}', "error.json")
    assert s["exc_type"] == "RuntimeError" and s["message"] == "RuntimeError: boom"


def test_bad_files_give_nothing():
    for data in (b"", b"{", b"[]", b"null", b'{"other": 1}', b"\xff\xfe\x00", b'{"message": {"extraInfo": 3}}'):
        out = parse_error_json(data, "error.json")
        assert out == [] or out[0]["kind"] == "torchrun.error_file"
    assert parse_error_json(b"not json", "error.json") == []


@settings(max_examples=300, deadline=None)
@given(st.one_of(
    st.binary(),
    st.recursive(st.none() | st.booleans() | st.integers() | st.text(),
                 lambda c: st.lists(c) | st.dictionaries(st.sampled_from(
                     ["message", "extraInfo", "py_callstack", "timestamp", "errorCode", "x"]), c),
                 max_leaves=12).map(lambda v: json.dumps(v).encode()),
))
def test_never_raises(data):
    for e in parse_error_json(data, "a/attempt_0/0/error.json"):
        assert e["kind"] == "torchrun.error_file"
