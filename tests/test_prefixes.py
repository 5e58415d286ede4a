"""Launcher prefixes, stacked as real logs stack them, and what they say about rank and host."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from nccllens.ingest.layout import hints_for
from nccllens.parse.prefixes import split_glued, strip

CASES = [
    # real: shared/reference/samples/torch2.13_cpu_logs/detail_monitored_barrier_tee3.log (torchrun --tee 3)
    ("[default0]:[rank0]:[E1122 02:47:18.374266894 ProcessGroupGloo.cpp:2901] [Rank 0]: Rank 1 failed to pass "
     "monitoredBarrier in 10000 ms", "[E1122 02:47:18.374266894 ProcessGroupGloo.cpp:2901]", None, 0, 0),
    # real: shared/reference/pytorch_c10d.md §1 (Ray actor prefix, NVIDIA-NeMo/RL logs)
    ("(MegatronPolicyWorker[rank=31] pid=3264030, ip=10.1.101.236) [rank31]:[E323 05:14:22.517801495 "
     "ProcessGroupNCCL.cpp:1858] [PG ID 0 PG GUID 0(default_pg) Rank 31] Received a dump signal",
     "[E323 05:14:22.517801495", "10.1.101.236", 31, None),
    # real: shared/reference/samples/torch2.13_cpu_logs/torchrun_worker_exception_with_record.log
    ("[rank1]: KeyError: 'missing_batch_key'", "KeyError:", None, 1, None),
    # synthetic: Open MPI --tag-output format "[jobid,rank]<stream>:" around a real NCCL INFO line
    ("[1,3]<stderr>:gpu-node-07:2211:2211 [0] NCCL INFO Bootstrap : Using eth0:10.0.0.7<0>",
     "gpu-node-07:2211:2211 [0] NCCL INFO", None, 3, None),
    # synthetic: srun --label pads the task id: "%*d: "
    ("  3: Traceback (most recent call last):", "Traceback (most recent call last):", None, 3, None),
    # synthetic: kubectl logs --prefix --timestamps ("<RFC3339Nano> " then "[pod/<name>/<container>] ")
    ("2026-11-22T03:12:05.123456789Z [pod/train-worker-1/pytorch] [rank5]: RuntimeError: boom",
     "RuntimeError: boom", "train-worker-1", 5, None),
    # synthetic: pdsh "host: " prefix
    ("gpu-node-03: [rank2]: Traceback (most recent call last):", "Traceback", "gpu-node-03", 2, None),
]


@pytest.mark.parametrize(("raw", "starts", "host", "rank", "local_rank"), CASES)
def test_prefixes_are_stripped_and_attributed(raw, starts, host, rank, local_rank):
    p = strip(raw)
    assert p.message.startswith(starts)
    assert (p.host, p.rank, p.local_rank) == (host, rank, local_rank)


@pytest.mark.parametrize("raw", [
    "node1:123:456 [0] NCCL INFO Using network Socket",  # NCCL's own prefix is the NCCL parser's
    "time      : 2026-11-22_02:46:57",  # failure-table field, not a host
    "Error: something",
    "iter 1: RuntimeError: Expected to have finished reduction",
    # real: shared/reference/dmesg_xid.md §2.3 (kernel device names are not pdsh host prefixes)
    "nvidia-nvswitch0: SXid (PCI:0000:00:00.0): 20034, Fatal, Link 30 LTSSM Fault Up",
    "ib0: Lost carrier",
])
def test_message_text_is_not_mistaken_for_a_prefix(raw):
    assert strip(raw).message == raw


def test_two_ranks_glued_on_one_line_are_split():
    # real: shared/reference/samples/torch2.13_cpu_logs/detail_fingerprint_shape_mismatch.log
    raw = "Collectives differ in the following aspects:   Tensor Tensor shapes: 32vs 16[rank0] caught builtins.Run"
    assert split_glued(raw) == ["Collectives differ in the following aspects:   Tensor Tensor shapes: 32vs 16",
                                "[rank0] caught builtins.Run"]


@pytest.mark.parametrize(("path", "host", "rank", "local_rank", "attempt"), [
    ("logs/node-a/console.log", "node-a", None, None, None),
    ("run/none_r1xerfgw/attempt_2/3/stderr.log", None, None, 3, 2),
    ("node07/dmesg.txt", "node07", None, None, None),
    ("dmesg-gpu-node-07.txt", "gpu-node-07", None, None, None),
    ("rank12.log", None, 12, None, None),
    ("slurm-48213.out", None, None, None, None),
    ("bundle.tar.gz!gpu-node-02/kern.log", "gpu-node-02", None, None, None),
    ("nccl.gpu-node-05.31337.log", "gpu-node-05", None, None, None),
])
def test_path_layouts_give_hints(path, host, rank, local_rank, attempt):
    h = hints_for(path)
    assert (h.host, h.rank, h.local_rank, h.attempt) == (host, rank, local_rank, attempt)


_PREFIXY = st.sampled_from(["2026-03-18T07:39:53.792795Z ", "[pod/train-0/main] ", "[1,3]<stdout>:", "(pid=7, ip=10.0.0.3) ",
                            "(RayTrainWorker pid=7) ", "[default0]:", "[rank3]: ", "  12: ", "node-a: ", "gpu-node-000:4:5 ",
                            "", " ", "x", "9", "[", "(", ":", "\t"])


@given(st.lists(_PREFIXY, max_size=4), st.text(max_size=30))
def test_the_quick_start_check_changes_nothing(parts, tail):
    # strip() leaves at once a line that no prefix can start; it must give what trying each prefix gives
    import re

    from nccllens.parse import prefixes

    raw = "".join(parts) + tail
    quick = prefixes.strip(raw)
    saved = prefixes._MAY_START
    prefixes._MAY_START = re.compile("")  # every line tried against every prefix
    try:
        assert prefixes.strip(raw) == quick
    finally:
        prefixes._MAY_START = saved


def _host_candidates_part_by_part(path: str) -> list[str]:
    """The path's host-like parts, judged one part at a time (the reference the folder cache must equal)."""
    import re

    from nccllens.ingest.layout import _hostlike

    parts = [p for p in re.split(r"[/!]", path) if p and p not in (".", "..")]
    out = []
    for i, part in enumerate(parts):
        pieces = [part]
        if i == len(parts) - 1:
            stem = re.sub(r"(?:\.(?:log|txt|out|err|gz|json))+$", "", part, flags=re.I)
            bare = re.sub(r"^(?:dmesg|kern|syslog|journal|console|nccl)[-_]|[-_](?:dmesg|kern|syslog|journal|console)$",
                          "", stem, flags=re.I)
            pieces = [bare, stem] + [p for p in re.split(r"[._]", stem) if p]
        out += [next(p for p in pieces if _hostlike(p))] if any(_hostlike(p) for p in pieces) else []
    return out


_PATH_PARTS = st.sampled_from(["logs", "gpu-node-07", "node07", "dmesg", "dmesg-node07.txt", "node07-console.log",
                               "nccl.gpu-node-05.31337.log", "rank3", "attempt_0", "job.tar.gz!node1", "x.zip!dn3",
                               "worker-2.log", "console.log", "ip-10-0-0-7", ".", "..", "trainer_1", "Stdout.LOG"])


@given(st.lists(_PATH_PARTS, min_size=1, max_size=6))
def test_host_candidates_equal_judging_each_part(parts):
    from nccllens.ingest.layout import _host_candidates

    path = "/".join(parts)
    if parts[-1] in (".", ".."):  # a folder, not a file: never a source's name
        return
    assert _host_candidates(path) == _host_candidates_part_by_part(path)
