"""Where an exception was raised, read from its frames (the Python family's help for what a traceback says).

- An object collective (``broadcast_object_list``, ``all_gather_object``, ``scatter_object_list``...) unpickling what
  its peers sent: an exception there (``EOFError: Ran out of input``, ``UnpicklingError: invalid load key``) says the
  bytes that arrived were not an object, because the collective was aborted or delivered wrong data. The event's
  ``key`` says so (``RECEIVED_OBJECT``), and rules and analyses read it as the collective failing.
- An exception line under frames whose ``Traceback (most recent call last):`` line is not in the log (a paste that
  starts mid-traceback): the frames right above it, in its own stream, are its own.
"""

from __future__ import annotations

from nccllens import lazy_regex
from nccllens.parse.base import FileContext, Line
from nccllens.parse.headers import split_header
from nccllens.parse.tracebacks import fold_traceback

RECEIVED_OBJECT = "received_object"
_UNPICKLES_RECEIVED = lazy_regex.compile(r"distributed_c10d\.py:\d+ in _tensor_to_object$")
CUT_HEAD_LINES = 120  # lines above an exception read for the frames of a traceback whose head was cut off
_FRAME_LINE = lazy_regex.compile(r'^\s+File "[^"]+", line \d+')


def unpickles_received(frames: list[str]) -> bool:
    """Do a traceback's innermost frames (``file:line in func``) unpickle what an object collective received?"""
    return any(_UNPICKLES_RECEIVED.search(frame) for frame in frames[-2:])


def with_frames_above(event: dict, line: Line, body: str, ctx: FileContext) -> None:
    """Give an exception line's ``event`` the frames of its traceback when they stand right above it without
    their head: its ``detail`` names them as a whole traceback's does, and its ``key`` what they say."""
    above = ctx.preceding(line, CUT_HEAD_LINES)
    block: list[str] = []
    for prev in reversed(above):  # the traceback's indented body, up to the first line that is not part of it
        text = split_header(prev.message, ctx.year)[1]
        if not text[:1].isspace() or not text.strip():
            break
        block.append(text)
    if not any(_FRAME_LINE.match(text) for text in block):
        return
    tb = fold_traceback([*reversed(block), body])
    if tb.frames and tb.exc_type:
        event["detail"] = tb.detail()
        if unpickles_received(tb.frames):
            event["key"] = RECEIVED_OBJECT
