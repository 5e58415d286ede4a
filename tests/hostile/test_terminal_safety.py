"""Text from logs never reaches the terminal raw (issue 19): text report, ranks, events, Markdown."""

from __future__ import annotations

import io
import zipfile

from typer.testing import CliRunner

import nccllens
from nccllens.cli import app
from nccllens.report import render
from nccllens.terminal import shown
from tests.hostile.planted import OOM, assert_oom_on_rank3_first

NASTY = ("\x1b]8;;http://evil.example/\x07click\x1b]8;;\x07 \x1b]52;c;cm0gLXJmIH4=\x07 \x1b]0;pwned title\x07 "
         "\x1b[2J\x1b[H\x9b31m \u202egnp.exe\u202c \u2066x\u2069 \x08\x7f")
UNSAFE = ("\x1b", "\x07", "\x9b", "\u202e", "\u202c", "\u2066", "\u2069", "\x08", "\x7f")


def _ticket(tmp_path):
    oom = OOM.replace(b"1.02 GiB is free.", b"1.02 GiB is free. " + NASTY.encode())
    (tmp_path / "rank3.log").write_bytes(oom)
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("\x1b[2J\x1b[3Jnode1\nFAKE: all good\u202e.log", b"node1:1:2 [0] NCCL WARN " + NASTY.encode() + b"\n")
    (tmp_path / "bundle.zip").write_bytes(buf.getvalue())
    return tmp_path


def test_escape_sequences_and_bidi_are_shown_escaped_in_text_and_markdown(tmp_path):
    report = nccllens.analyze([str(_ticket(tmp_path))])
    assert_oom_on_rank3_first(report)
    for fmt in ("text", "md"):
        out = render(report, fmt, verbose=True)  # the text lists input names only with -v (issue 18)
        assert not any(c in out for c in UNSAFE), fmt
        assert "\\x1b]52;c;" in out or "\\x1b" in out
        # the member name's newline cannot forge a line of the report
        assert "\\x0a" in out and not any(line.lstrip().startswith("FAKE") for line in out.splitlines())


def test_ranks_and_events_are_escaped_too(tmp_path):
    runner = CliRunner()
    for command in ("ranks", "events"):
        result = runner.invoke(app, [command, str(_ticket(tmp_path))])
        assert result.exit_code == 0 and not any(c in result.stdout for c in UNSAFE), command


def test_the_escaping_keeps_ordinary_text_and_tabs():
    text = "NCCL WARN\tconnect refused 中文 é"
    assert shown(text) is text
    assert shown("a\nb", keep_lines=True) == "a\nb" and shown("a\nb") == "a\\x0ab"
