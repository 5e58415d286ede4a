"""Each injected fault of the cluster-log synthesiser is the top finding, with its culprit, at 8, 512
and 4,096 ranks (small corpora; bench/run.py repeats the check at 1 GiB and 10 GiB), and in every
format generation the synthesiser writes (PyTorch 2.1-2.13, NCCL 2.17-2.25, with and without torchrun
--log-dir trees)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import nccllens
from nccllens.rank_ranges import compact_ranks

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
import synth  # noqa: E402

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

CASES = [(fault, 8, 2) for fault in synth.FAULTS] + [
    ("xid79", 512, 64), ("exception", 512, 64), ("host_oom", 512, 64), ("ib", 512, 64),
    ("divergence", 512, 64), ("missing_node", 512, 64), ("straggler", 512, 64), ("xid79", 4096, 512),
]
# format generations (synth_formats.TORCH / NCCL) and torchrun --log-dir trees: every fault in the oldest
# formats with one console per node, every fault in the newest with per-rank stderr files, and each
# generation with the faults whose lines it changes
FORMATS = ([(fault, "2.1", "2.17", False) for fault in synth.FAULTS]
           + [(fault, "2.7", "2.23", True) for fault in synth.FAULTS]
           + [(fault, torch, "2.21", False) for torch in ("2.3", "2.7") for fault in ("exception", "divergence")]
           + [("ib", "2.4", nccl, False) for nccl in ("2.17", "2.23")]
           + [("gpu_oom", "2.4", "2.21", True)])


def _check(out, report):
    expected = tomllib.loads((out / "expected.toml").read_text())
    if expected["category"] == "none":
        # healthy: nothing alarming, and no failure named (a synthetic job prints no finish line, so the
        # verdict is unknown rather than none: nothing shows the job finished)
        assert report.verdict.category in ("none", "unknown") and report.verdict.finding is None, report.verdict.summary
        assert not [f for f in report.findings if f.severity in ("critical", "error")]
        return
    assert report.verdict.category == expected["category"], report.verdict.summary
    if expected["category"] == "unknown":  # the missing node: say whose logs are missing, blame nobody
        assert compact_ranks(expected["culprit_ranks"]) in report.verdict.summary
        return
    top = report.findings[0]
    assert top.role == "cause"
    assert sorted(top.hosts) == sorted(expected["culprit_hosts"]), top.title
    if expected["culprit_ranks"]:
        assert sorted(top.ranks) == sorted(expected["culprit_ranks"]), top.title


@pytest.mark.parametrize(("fault", "torch", "nccl", "log_dir"), FORMATS,
                         ids=[f"{f}-torch{t}-nccl{n}{'-logdir' if d else ''}" for f, t, n, d in FORMATS])
def test_injected_fault_is_the_top_finding_in_every_format_generation(tmp_path, fault, torch, nccl, log_dir):
    out = synth.write_job(tmp_path / "job", 16, 2, fault, total_bytes=16 * 400, torch=torch, nccl=nccl,
                          log_dir=log_dir)
    _check(out, nccllens.analyze([str(out)]))


def test_tee_shows_the_workers_lines_on_the_console_after_their_local_rank(tmp_path):
    out = synth.write_job(tmp_path / "job", 16, 2, "exception", total_bytes=16 * 400, log_dir=True, tee=True)
    console = (out / "gpu-node-001" / "console.log").read_text()
    assert "[default2]:[rank10]: KeyError: 'input_ids'" in console.splitlines()
    assert "KeyError: 'input_ids'" in next(out.glob("gpu-node-001/torchrun/*/attempt_0/2/stderr.log")).read_text()
    _check(out, nccllens.analyze([str(out)]))


def test_log_dir_trees_hold_the_workers_output_where_torchrun_puts_it(tmp_path):
    out = synth.write_job(tmp_path / "job", 16, 2, "exception", total_bytes=16 * 400, log_dir=True)
    stderr = sorted(out.glob("gpu-node-001/torchrun/none_*/attempt_0/*/stderr.log"))
    assert [p.parent.name for p in stderr] == [str(i) for i in range(8)]
    assert all(p.read_text().startswith("# synthetic") for p in stderr)
    assert "Traceback" not in (out / "gpu-node-001" / "console.log").read_text()
    assert "KeyError: 'input_ids'" in (stderr[2]).read_text()  # rank 10 = local rank 2 of the second node


@pytest.mark.parametrize(("fault", "ranks", "hosts"), CASES, ids=[f"{f}-{r}r" for f, r, _ in CASES])
def test_injected_fault_is_the_top_finding(tmp_path, fault, ranks, hosts):
    out = synth.write_job(tmp_path / "job", ranks, hosts, fault, total_bytes=ranks * 400)
    _check(out, nccllens.analyze([str(out)]))


# odd layouts: one host, one rank per host, three hosts, two ranks in all (no majority to tell which
# of two diverging ranks is the odd one: both are named)
LAYOUTS = [("exception", 8, 1, "2.1", "2.17", False), ("xid79", 3, 3, "2.3", "2.23", True),
           ("divergence", 2, 1, "2.7", "2.21", False), ("divergence", 2, 2, "2.4", "2.17", True),
           ("missing_node", 6, 3, "2.4", "2.17", True), ("missing_node", 4, 2, "2.1", "2.23", False),
           ("host_oom", 6, 3, "2.1", "2.21", True), ("ib", 4, 2, "2.7", "2.17", False)]


@pytest.mark.parametrize(("fault", "ranks", "hosts", "torch", "nccl", "log_dir"), LAYOUTS,
                         ids=[f"{f}-{r}r{h}h-torch{t}-nccl{n}{'-logdir' if d else ''}" for f, r, h, t, n, d in LAYOUTS])
def test_injected_fault_is_the_top_finding_in_odd_layouts(tmp_path, fault, ranks, hosts, torch, nccl, log_dir):
    out = synth.write_job(tmp_path / "job", ranks, hosts, fault, total_bytes=ranks * 400, torch=torch, nccl=nccl,
                          log_dir=log_dir)
    _check(out, nccllens.analyze([str(out)]))


@pytest.mark.parametrize(("ranks", "hosts", "fault", "says"), [
    (1, 1, "divergence", "needs at least 2 ranks"), (8, 1, "missing_node", "on 2 host(s)"),
    (6, 4, "xid79", "cannot be spread evenly"), (8, 2, "meteor", "unknown fault")])
def test_the_synthesiser_refuses_jobs_its_fault_cannot_happen_in(tmp_path, ranks, hosts, fault, says):
    assert says in synth.check_job(ranks, hosts, fault)
    with pytest.raises(ValueError, match="needs|spread|unknown"):
        synth.write_job(tmp_path / "job", ranks, hosts, fault, total_bytes=1000)


@st.composite
def _jobs(draw):
    hosts = draw(st.sampled_from([1, 2, 3, 4, 8]))
    ranks = hosts * draw(st.sampled_from([1, 2, 4, 8]))
    fault = draw(st.sampled_from([f for f in synth.FAULTS if synth.check_job(ranks, hosts, f) is None]))
    return (ranks, hosts, fault, draw(st.sampled_from(synth.f.TORCH)), draw(st.sampled_from(synth.f.NCCL)),
            draw(st.booleans()), draw(st.booleans()), draw(st.integers(0, 999)))


@settings(max_examples=12, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(_jobs())
def test_any_small_synthetic_job_gets_its_fault_as_the_top_finding(tmp_path_factory, job):
    ranks, hosts, fault, torch, nccl, log_dir, tee, seed = job
    out = synth.write_job(tmp_path_factory.mktemp("job") / "job", ranks, hosts, fault, total_bytes=ranks * 400,
                          seed=seed, torch=torch, nccl=nccl, log_dir=log_dir, tee=tee)
    _check(out, nccllens.analyze([str(out)]))


def test_an_untimed_line_far_from_any_timed_one_shows_no_borrowed_time(tmp_path):
    """torch 2.1 C++ lines carry no time: the watchdog timeout sits between the rendezvous (01:00:01)
    and the agent's exit report (01:40:03); showing the rendezvous's time would put it 40 minutes early."""
    out = synth.write_job(tmp_path / "job", 16, 2, "exception", total_bytes=16 * 400, torch="2.1")
    report = nccllens.analyze([str(out)])
    timeouts = [f for f in report.findings if f.rule == "NL-TORCH-001"]
    assert timeouts and all(f.first_seen is None for f in timeouts)
    agent = [f for f in report.findings if f.rule == "NL-JOB-006"]  # the agent's own, timed lines
    assert agent and agent[0].first_seen.startswith("2026-11-22T01:40:03")
