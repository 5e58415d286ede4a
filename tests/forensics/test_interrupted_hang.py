"""A Ctrl-C that ends a hung job: the traceback says where each process waited, and the wait is the story."""

from __future__ import annotations

import nccllens

# synthetic: Python's traceback format with torch's own frames (torch 2.x nn/parallel/distributed.py
# DistributedDataParallel.__init__ -> distributed/utils.py _verify_param_shape_across_processes, the first
# collective of every DDP job; distributed_c10d.py barrier -> work.wait(); init_process_group ->
# _store_based_barrier), each ending in the KeyboardInterrupt a terminal's Ctrl-C raises
FIRST_COLLECTIVE = """\
Traceback (most recent call last):
  File "/home/user/project/train.py", line 212, in <module>
    main()
  File "/home/user/project/train.py", line 150, in main
    model = DDP(model, device_ids=[local_rank])
  File "/opt/conda/lib/python3.10/site-packages/torch/nn/parallel/distributed.py", line 795, in __init__
    _verify_param_shape_across_processes(self.process_group, parameters)
  File "/opt/conda/lib/python3.10/site-packages/torch/distributed/utils.py", line 265, in _verify_param_shape_across_processes
    return dist._verify_params_across_processes(process_group, tensors, logger)
KeyboardInterrupt
"""
STORE = """\
Traceback (most recent call last):
  File "/home/user/project/train.py", line 40, in <module>
    dist.init_process_group("nccl")
  File "/opt/conda/lib/python3.10/site-packages/torch/distributed/distributed_c10d.py", line 932, in init_process_group
    _store_based_barrier(rank, store, group_name, world_size, timeout)
  File "/opt/conda/lib/python3.10/site-packages/torch/distributed/distributed_c10d.py", line 469, in _store_based_barrier
    time.sleep(0.01)
KeyboardInterrupt
"""
OWN_CODE = """\
Traceback (most recent call last):
  File "/home/user/project/train.py", line 212, in <module>
    main()
  File "/home/user/project/train.py", line 180, in main
    batch = preprocess(raw)
  File "/home/user/project/data.py", line 33, in preprocess
    return [tokenize(t) for t in raw]
KeyboardInterrupt
"""


def _top(tmp_path, text):
    (tmp_path / "train.log").write_text(text, encoding="utf-8")
    report = nccllens.analyze(str(tmp_path))
    return report, report.findings[0]


def test_ctrl_c_in_the_first_collective_is_a_hang_there_not_a_kill(tmp_path):
    report, top = _top(tmp_path, FIRST_COLLECTIVE)
    assert top.category == "collective_timeout"
    assert "_verify_param_shape_across_processes" in top.summary and "reaction to the hang" in top.summary
    assert "interrupted" in report.verdict.summary


def test_ctrl_c_while_joining_the_job_is_a_rendezvous_that_never_completed(tmp_path):
    _, top = _top(tmp_path, STORE)
    assert top.category == "rendezvous_timeout"


def test_ctrl_c_in_the_job_s_own_code_is_still_someone_stopping_it(tmp_path):
    _, top = _top(tmp_path, OWN_CODE)
    assert top.category == "job_killed"


def test_the_chinese_report_says_why_too(tmp_path):
    (tmp_path / "train.log").write_text(FIRST_COLLECTIVE, encoding="utf-8")
    top = nccllens.analyze(str(tmp_path), lang="zh").findings[0]
    assert "Ctrl-C" in top.summary and "挂住" in top.summary


CASE = "torchrun_ctrl_c_rank1_stuck_in_own_loop_rank0_allreduce_closed"


def test_the_rank_interrupted_in_its_own_code_held_the_collective_up(tmp_path):
    # a real run (fixtures/public/<CASE>: torch 2.13, gloo): rank 1 loops in its own code, rank 0 waits in
    # all_reduce, then Ctrl-C; rank 0's wait first fails with "Connection closed by peer" as rank 1 dies
    import shutil
    from pathlib import Path

    case = Path(__file__).resolve().parents[2] / "fixtures/public" / CASE
    shutil.copy(case / "console.log", tmp_path / "console.log")
    report = nccllens.analyze(str(tmp_path))
    top = report.findings[0]
    assert (top.rule, top.category, top.ranks) == ("AN-INTERRUPT-ELSEWHERE", "straggler", [1])
    assert "job.py:19 in <module>" in top.summary
    assert report.verdict.category == "straggler"


def test_every_rank_interrupted_in_a_collective_names_no_straggler(tmp_path):
    # synthetic: FIRST_COLLECTIVE printed by two ranks ([rankN]: prefixes, as torch >= 2.2 workers print)
    text = "".join(f"[rank{r}]: {line}\n" for r in (0, 1) for line in FIRST_COLLECTIVE.splitlines())
    (tmp_path / "train.log").write_text(text, encoding="utf-8")
    findings = nccllens.analyze(str(tmp_path)).findings
    assert not any(f.rule == "AN-INTERRUPT-ELSEWHERE" for f in findings)
    assert findings[0].category == "collective_timeout"


def test_a_running_job_stopped_inside_a_step_s_all_reduce_was_stopped_not_hung(tmp_path):
    # a real run (fixtures/public/torchrun_ctrl_c_running_job_both_ranks_in_allreduce): a healthy gloo job
    # interrupted while both ranks were in their step's all_reduce, which a running job often is
    import shutil
    from pathlib import Path

    case = Path(__file__).resolve().parents[2] / "fixtures/public/torchrun_ctrl_c_running_job_both_ranks_in_allreduce"
    shutil.copy(case / "console.log", tmp_path / "console.log")
    report = nccllens.analyze(str(tmp_path))
    assert report.verdict.category == "job_killed"
    assert not any(f.rule == "AN-INTERRUPT-ELSEWHERE" for f in report.findings)
