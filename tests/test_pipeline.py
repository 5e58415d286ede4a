"""The extraction pipeline end to end on real text: prefixes, survivors, attribution, inventory."""

from __future__ import annotations

from pathlib import Path

import polars as pl
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nccllens.events import COLUMNS
from nccllens.extract import events_from_text, extract

SAMPLES = Path(__file__).resolve().parents[2] / "shared" / "reference" / "samples" / "torch2.13_cpu_logs"

# real: shared/reference/samples/torch2.13_cpu_logs/torchrun_worker_exception_with_record.log
TRACEBACK = """[rank1]: Traceback (most recent call last):
[rank1]:   File "/workspace/job/crash.py", line 12, in <module>
[rank1]:     main()
[rank1]:   File "/workspace/job/crash.py", line 10, in main
[rank1]:     raise KeyError("missing_batch_key")
[rank1]: KeyError: 'missing_batch_key'
"""


def test_a_traceback_is_one_event_with_its_rank_and_line():
    events = events_from_text(TRACEBACK, name="node-b/console.log")
    tb = events.filter(pl.col("kind") == "python.traceback")
    assert tb.height == 1
    row = tb.row(0, named=True)
    assert (row["rank"], row["host"], row["line"], row["exc_type"]) == (1, "node-b", 1, "KeyError")
    assert row["file"] == "node-b/console.log"


def test_schema_is_always_the_same_even_for_nothing():
    assert tuple(events_from_text("").columns) == COLUMNS
    assert tuple(events_from_text("hello world\n").columns) == COLUMNS


def test_non_logs_are_skipped_and_inventoried(tmp_path):
    (tmp_path / "train.py").write_text("import torch\n")
    (tmp_path / "plot.png").write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 4)
    (tmp_path / "rank1.log").write_text(TRACEBACK)
    events, inputs = extract([str(tmp_path)])
    by_path = {Path(i.path).name: i for i in inputs}
    assert by_path["train.py"].skipped == "not a log: Python source"
    assert by_path["plot.png"].skipped == "not a log: image"
    assert by_path["rank1.log"].skipped is None and by_path["rank1.log"].lines == 6
    assert by_path["rank1.log"].events == events.height >= 1


def test_rule_patterns_pull_unknown_lines_into_the_table():
    events = events_from_text("my-launcher: node gpu-node-07 lost heartbeat\n", rule_pattern="lost heartbeat")
    assert sorted(events["kind"].to_list()) == ["other.file_end", "other.text"]


def test_same_input_any_file_order_gives_the_same_table(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    (tmp_path / "a" / "rank1.log").write_text(TRACEBACK)
    (tmp_path / "b" / "rank1.log").write_text(TRACEBACK.replace("rank1", "rank2"))
    one, _ = extract([str(tmp_path / "a"), str(tmp_path / "b")])
    two, _ = extract([str(tmp_path / "b"), str(tmp_path / "a")])
    assert one.equals(two)


def test_one_job_per_file_still_gives_the_canonical_order(tmp_path, monkeypatch):
    """Jobs come back sorted and are only re-sorted when their files are out of order: paths where the
    folder walk and the sort disagree ('a-b' sorts before 'a/'), given in reverse, still end sorted."""
    import nccllens.extract.tables as pipeline
    from nccllens.events import sort

    for sub, rank in (("a", 1), ("a-b", 2), ("c", 3)):
        (tmp_path / sub).mkdir()
        (tmp_path / sub / "rank.log").write_text(TRACEBACK.replace("rank1", f"rank{rank}"))
    monkeypatch.setattr(pipeline, "jobs_of", lambda sources, indices: [[i] for i in indices])
    events, _ = extract([str(tmp_path / "c"), str(tmp_path / "a"), str(tmp_path / "a-b")], workers=1)
    assert events.equals(sort(events))
    assert events["file"].unique(maintain_order=True).to_list() == sorted(set(events["file"].to_list()))


def test_real_samples_are_read_without_loss():
    if not SAMPLES.exists():
        return
    events, inputs = extract([str(SAMPLES)])
    assert all(i.skipped is None or i.skipped.startswith("not a log") for i in inputs)
    assert events.filter(pl.col("kind").cast(pl.String).str.starts_with("other.parser")).height == 0


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(max_size=400))
def test_any_text_goes_through_the_pipeline(text):
    events = events_from_text(text)
    assert tuple(events.columns) == COLUMNS


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(TRACEBACK.splitlines() + ["\x00", "\r", "\x1b[31m", "[rank9]:", "\udcff"]),
                max_size=30).map("\n".join))
def test_fragments_of_real_logs_go_through_the_pipeline(text):
    events = events_from_text(text)
    assert events.filter(pl.col("kind").cast(pl.String).str.starts_with("other.parser")).height == 0


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.binary(max_size=2000), st.sampled_from(["x.log", "error.json", "dmesg.txt", "fr_trace_rank_0"]))
def test_any_bytes_go_through_extraction(data, name):
    from nccllens.extract import combined_prefilter, extract_source
    from nccllens.ingest.sources import Source

    events, info = extract_source(Source(name, lambda: iter([data]), len(data)), combined_prefilter())
    assert tuple(events.columns) == COLUMNS
    assert info.events == events.height


def test_stdin_takes_host_and_rank_hints(monkeypatch):
    import io
    import sys

    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"KeyError: 'missing_batch_key'\n" + TRACEBACK.encode())))
    events, inputs = extract(["-"], host="gpu-node-09", rank=7)
    assert inputs[0].path == "<stdin>"
    tb = events.filter(pl.col("kind") == "python.traceback").row(0, named=True)
    assert (tb["host"], tb["rank"]) == ("gpu-node-09", 1)  # the line's own [rank1]: wins over the hint
    assert events.filter(pl.col("rank") == 7).height >= 1


def test_assembling_job_tables_gives_their_concatenation_in_one_chunk():
    """The final table is built a column at a time (memory): same rows, order and types as concat."""
    from nccllens.events import assemble, concat

    a = events_from_text(TRACEBACK, name="node-a/console.log")
    b = events_from_text(TRACEBACK, name="node-b/console.log")
    empty = events_from_text("")
    frames = [a, empty, b, a]
    whole = assemble(frames)
    assert frames == []  # the parts are released as the whole is built
    assert whole.equals(concat([a, empty, b, a]))
    assert whole.n_chunks("all") == [1] * len(COLUMNS)
    assert whole["file"].to_list()[:1] == ["node-a/console.log"]
    assert assemble([]).columns == list(COLUMNS) and assemble([empty]).height == 0


# real: fixtures/public/sglang_tp2_3090_flashinfer_workspace_oom_tp0 (SGLang's scheduler logs the traceback
# it formats after its message: the "[time TPn]" header on the first line only), its frames cut to two, each line whole
LOGGED_TRACEBACK = """[2026-06-11 05:11:58 TP1] Memory pool end. avail mem=0.49 GB
[2026-06-11 05:11:58 TP0] Scheduler hit an exception: Traceback (most recent call last):
  File "/data/sglang-rebase-v0512/python/sglang/srt/managers/scheduler.py", line 4025, in run_scheduler_process
    scheduler = Scheduler(
                ^^^^^^^^^^
  File "/data/sglang-rebase-v0512/python/sglang/srt/layers/attention/flashinfer_backend.py", line 202, in __init__
    global_workspace_buffer = torch.empty(
                              ^^^^^^^^^^^^
torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 384.00 MiB. GPU 0 has a total capacity of 23.56 GiB of which 338.75 MiB is free. Including non-PyTorch memory, this process has 23.06 GiB memory in use. Of the allocated memory 22.33 GiB is allocated by PyTorch, and 210.78 MiB is reserved by PyTorch but unallocated. If reserved but unallocated memory is large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See documentation for Memory Management  (https://docs.pytorch.org/docs/stable/notes/cuda.html#optimizing-memory-usage-with-pytorch-cuda-alloc-conf)

[2026-06-11 05:11:58] Received sigquit from a child process. It usually means the child failed.
"""


def test_a_traceback_a_logger_prints_after_its_message_is_the_ranks_whose_header_it_carries():
    events = events_from_text(LOGGED_TRACEBACK, name="server.log")
    errors = events.filter(pl.col("level") == "error")
    assert errors.height == 1  # the exception line is the traceback's, not a second failure
    row = errors.row(0, named=True)
    assert (row["kind"], row["line"], row["rank"]) == ("python.traceback", 2, 0)
    assert row["exc_type"] == "torch.OutOfMemoryError"
    assert "scheduler.py" in row["detail"]


# real: fixtures/public/vllm_qwen25_72b_tp4_workerprocess_init_device_nccl_internal_error (vLLM repeats its
# header on every line of the record; the paste stops inside the frames, before the exception line)
LOGGED_TRACEBACK_CUT = """(VllmWorkerProcess pid=1775) ERROR 09-23 10:49:22 multiproc_worker_utils.py:226] Exception in worker VllmWorkerProcess while processing method init_device: NCCL error: internal error - please report this issue to the NCCL developers, Traceback (most recent call last):
(VllmWorkerProcess pid=1775) ERROR 09-23 10:49:22 multiproc_worker_utils.py:226]   File "/opt/conda/lib/python3.11/site-packages/vllm/executor/multiproc_worker_utils.py", line 223, in _run_worker_process
(VllmWorkerProcess pid=1775) ERROR 09-23 10:49:22 multiproc_worker_utils.py:226]     output = executor(*args, **kwargs)
"""


def test_a_logged_traceback_cut_before_its_exception_keeps_the_loggers_message():
    events = events_from_text(LOGGED_TRACEBACK_CUT, name="vllm.log")
    tb = events.filter(pl.col("kind") == "python.traceback")
    assert tb.height == 1
    assert "NCCL error: internal error" in tb["message"][0]


# real: fixtures/public/vllm_tp4_ep_gh200_attention_warmup_cuda_oom_prefill_workspace (vLLM's API server prefixes
# each line of its traceback with its process; the lines after the exception are other writers')
PREFIXED_TRACEBACK_THEN_OTHERS = """(APIServer pid=210804) Traceback (most recent call last):
(APIServer pid=210804)   File "/e/project1/profound/alint77/vllm/.venv/bin/vllm", line 10, in <module>
(APIServer pid=210804)     sys.exit(main())
(APIServer pid=210804)   File "/e/project1/profound/alint77/vllm/vllm/v1/engine/utils.py", line 1272, in wait_for_engine_startup
(APIServer pid=210804)     raise RuntimeError(
(APIServer pid=210804) RuntimeError: Engine core initialization failed. See root cause above. Failed core proc(s): {}
/e/home/jusers/naeimitabiei1/jupiter/.local/share/uv/python/cpython-3.12.13-linux-aarch64-gnu/lib/python3.12/multiprocessing/resource_tracker.py:279: UserWarning: resource_tracker: There appear to be 4 leaked shared_memory objects to clean up at shutdown
  warnings.warn('resource_tracker: There appear to be %d '
srun: error: jpbo-037-04: task 0: Exited with exit code 1
"""


def test_a_prefixed_traceback_ends_where_its_process_prefix_does():
    events = events_from_text(PREFIXED_TRACEBACK_THEN_OTHERS, name="job.err")
    assert events.filter(pl.col("kind") == "python.traceback")["line"].to_list() == [1]
    step = events.filter(pl.col("kind") == "slurm.step_error")
    assert step.select("line", "host").rows() == [(9, "jpbo-037-04")]
