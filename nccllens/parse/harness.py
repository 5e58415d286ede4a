"""A harness or scheduler that stopped the job at its wall-clock limit (family ``harness``).

One ``harness.wallclock`` event per line that says so (level error: a job killed at its limit is never
healthy), ``value`` = what stopped it, ``host`` when the line names one:

- GNU ``timeout --verbose``: ``timeout: sending signal TERM to command ‘torchrun’``;
- a shell's job report of a command it killed: ``./run.sh: line 5:  1234 Killed   timeout 60 torchrun ...``;
- a harness reporting GNU timeout's status: ``Process completed with exit code 124.``, ``exit status 124``;
- PBS: ``=>> PBS: job killed: walltime 3610 exceeded limit 3600``; LSF: ``TERM_RUNLIMIT: job killed after
  reaching LSF run time limit``; Moab/Torque: ``MOAB_INFO:  job exceeded wallclock limit``; GitHub Actions: ``has
  exceeded the maximum execution time of 360 minutes``.

Slurm's ``CANCELLED AT ... DUE TO TIME LIMIT`` and submitit's ``Job has timed out`` are the slurm family's.
"""

from __future__ import annotations

from collections.abc import Iterator

from nccllens import lazy_regex
from nccllens.parse.base import FileContext, Line, event_for

FAMILY = "harness"
PREFILTER = (
    r"timeout: sending signal \w+ to command"
    r"|: line \d+: +\d+ (?:Killed|Terminated)\s+\S*timeout|PBS: job killed: walltime"
    r"|TERM_RUNLIMIT|exceeded the maximum execution time|exit code 124\b|exit status 124\b|exited with code 124\b"
    r"|job exceeded wallclock limit"
)

SHAPES = (
    ("timeout", lazy_regex.compile(r"timeout: sending signal (?P<sig>\w+) to command")),
    ("shell", lazy_regex.compile(r": line \d+: +\d+ (?P<sig>Killed|Terminated)\s+\S*timeout")),
    ("pbs", lazy_regex.compile(r"PBS: job killed: walltime (?P<ran>\d+) exceeded limit (?P<limit>\d+)")),
    ("lsf", lazy_regex.compile(r"TERM_RUNLIMIT")),
    ("moab", lazy_regex.compile(r"job exceeded wallclock limit")),
    ("ci", lazy_regex.compile(r"exceeded the maximum execution time of (?P<limit>\d+ \w+)")),
    # 124 is the status GNU timeout (and the harnesses built on it) give a command it stopped at its limit
    ("timeout", lazy_regex.compile(r"(?:exit code|exit status|exited with code|exitcode) 124\b")),
)


SIGNALS = {"Killed": "SIGKILL", "Terminated": "SIGTERM"}


def parse(lines: list[Line], ctx: FileContext) -> Iterator[dict]:
    for line in lines:
        for what, shape in SHAPES:
            m = shape.search(line.message)
            if not m:
                continue
            fields = m.groupdict()
            extra = {"host": fields["host"]} if fields.get("host") else {}
            sig = fields.get("sig")
            sig = SIGNALS.get(sig, sig if not sig or sig.startswith("SIG") else f"SIG{sig}")
            limit = fields.get("limit")
            if limit and limit.isdigit():
                limit += " s"
            yield event_for(line, "harness.wallclock", level="error", message=line.message.strip()[:500],
                            value=what, signal=sig, detail=limit, **extra)
            break
