"""python family: one ``python.traceback`` per traceback (chains folded), ``python.exception`` for bare lines.

Real lines from shared/reference/samples/torch2.13_cpu_logs or the public source cited next to them.
``[rankN]:`` prefixes are removed the way the pipeline does (the rank goes to ``Line.rank``; the blank
after the colon stays in the message, so the parser must cope with it).
"""

from __future__ import annotations

import re
from pathlib import Path

import polars as pl
from hypothesis import given, settings
from hypothesis import strategies as st

from nccllens.parse import python
from nccllens.parse.base import FileContext, Line

PROJECT = str(Path(__file__).resolve().parents[2])  # the checkout, wherever it was cloned
SHARED = str(Path(__file__).resolve().parents[3] / "shared")  # ../shared beside it

SAMPLES = f"{SHARED}/reference/samples/torch2.13_cpu_logs"


def make_lines(text: str) -> list[Line]:
    lines = []
    for i, raw in enumerate(text.split("\n")):
        m = re.match(r"\[rank(\d+)\]:", raw)
        rank = int(m[1]) if m else None
        message = raw[m.end():] if m else raw
        lines.append(Line(file="x.log", line=i + 1, raw=raw, message=message, rank=rank, row=i,
                          stream=f"rank{rank}" if m else ""))
    return lines


def run(text: str) -> list[dict]:
    lines = make_lines(text)

    def following(line: Line, n: int) -> list[Line]:
        return [c for c in lines[line.row + 1:] if c.stream == line.stream][:n]

    keep = pl.Series([ln.message for ln in lines]).str.contains(python.PREFILTER).to_list()
    survivors = [ln for ln, k in zip(lines, keep, strict=True) if k]
    events = list(python.parse(survivors, FileContext(path="x.log", year=2026, _following=following)))
    assert all(e["kind"].startswith("python.") and e["family"] == "python" for e in events)
    return events


def test_rank_prefixed_keyerror_traceback_2_13():
    text = open(f"{SAMPLES}/torchrun_worker_exception_with_record.log").read()
    tracebacks = [e for e in run(text) if e["kind"] == "python.traceback"]
    worker = tracebacks[0]
    assert worker["exc_type"] == "KeyError"
    assert worker["message"] == "KeyError: 'missing_batch_key'"
    assert worker["detail"].split("\n") == [
        "/workspace/job/crash.py:12 in <module>",
        "torch/distributed/elastic/multiprocessing/errors/__init__.py:367 in wrapper",
        "/workspace/job/crash.py:10 in main",
    ]
    agent = tracebacks[1]
    assert agent["exc_type"] == "torch.distributed.elastic.multiprocessing.errors.ChildFailedError"
    assert agent["message"] == "torch.distributed.elastic.multiprocessing.errors.ChildFailedError"
    assert "torch/distributed/launcher/api.py:383 in launch_agent" in agent["detail"]
    # the copy of the child's traceback inside the failure table is the torchrun family's
    assert len(tracebacks) == 2


def test_bare_exception_name_ends_the_traceback():
    (e,) = run(open(f"{SAMPLES}/rdzv_c10d_join_timeout.log").read())
    assert e["exc_type"] == "torch.distributed.elastic.rendezvous.api.RendezvousTimeoutError"
    assert e["detail"].endswith("torch/distributed/elastic/rendezvous/dynamic_rendezvous.py:680 in run")


def test_exception_text_is_the_first_line_only():
    (e,) = run(open(f"{SAMPLES}/rdzv_static_master_waits.log").read())
    assert e["message"] == ("torch.distributed.DistStoreError: Timed out after 13 seconds waiting for clients. "
                            "1/2 clients joined.")


# real: https://github.com/vllm-project/vllm/issues/10453 (two ranks; rank2's traceback cut where the issue
# excerpt ends)
VLLM = "\n".join([
    "h100-2:412:412 [0] NCCL INFO init.cc:1929 -> 3",
    "[rank1]: Traceback (most recent call last):",
    '[rank1]:   File "/vllm-workspace/test.py", line 8, in <module>',
    "[rank1]:     dist.all_reduce(data, op=dist.ReduceOp.SUM)",
    '[rank1]:   File "/usr/local/lib/python3.12/dist-packages/torch/distributed/c10d_logger.py", line 83, in wrapper',
    "[rank1]:     return func(*args, **kwargs)",
    "[rank1]:            ^^^^^^^^^^^^^^^^^^^^^",
    '[rank1]:   File "/usr/local/lib/python3.12/dist-packages/torch/distributed/distributed_c10d.py", line 2501, '
    "in all_reduce",
    "[rank1]:     work = group.allreduce([tensor], opts)",
    "[rank1]:            ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^",
    "[rank1]: torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/NCCLUtils.hpp:317, "
    "internal error - please report this issue to the NCCL developers, NCCL version 2.21.5",
    "[rank1]: ncclInternalError: Internal check failed.",
    "[rank1]: Last error:",
    "",
    "[rank2]: Traceback (most recent call last):",
])


def test_multiline_exception_text_stays_out_of_message_and_ranks_stay_apart():
    events = run(VLLM)
    first = events[0]
    assert first["exc_type"] == "torch.distributed.DistBackendError"
    assert first["message"].endswith("NCCL version 2.21.5")
    assert "ncclInternalError" not in first["message"]
    assert first["detail"].split("\n")[-1] == "torch/distributed/distributed_c10d.py:2501 in all_reduce"
    assert len(events) == 2  # rank2's (cut) traceback is its own event
    assert events[1]["exc_type"] is None


# real: a user's notes file holding a complete torch traceback (public code index, find_string id 18196547550;
# the index does not name the repository); same chain as https://github.com/pytorch/pytorch/issues/8976
CHAINED = "\n".join([
    "Traceback (most recent call last):",
    '  File "/home/rosen/anaconda3/envs/gradtts/lib/python3.8/site-packages/torch/utils/data/dataloader.py", '
    "line 1163, in _try_get_data",
    "    data = self._data_queue.get(timeout=timeout)",
    '  File "/home/rosen/anaconda3/envs/gradtts/lib/python3.8/selectors.py", line 415, in select',
    "    fd_event_list = self._selector.poll(timeout)",
    '  File "/home/rosen/anaconda3/envs/gradtts/lib/python3.8/site-packages/torch/utils/data/_utils/'
    'signal_handling.py", line 66, in handler',
    "    _error_if_any_worker_fails()",
    "RuntimeError: DataLoader worker (pid 6303) is killed by signal: Aborted. ",
    "",
    "The above exception was the direct cause of the following exception:",
    "",
    "Traceback (most recent call last):",
    '  File "/home/rosen/Project/Speech-Backbones/GradTTS/train_multi_speaker_lm.py", line 356, in <module>',
    "    train_process_cond(configs)",
    '  File "/home/rosen/anaconda3/envs/gradtts/lib/python3.8/site-packages/torch/utils/data/dataloader.py", '
    "line 1325, in _get_data",
    "    success, data = self._try_get_data()",
    '  File "/home/rosen/anaconda3/envs/gradtts/lib/python3.8/site-packages/torch/utils/data/dataloader.py", '
    "line 1176, in _try_get_data",
    "    raise RuntimeError('DataLoader worker (pid(s) {}) exited unexpectedly'.format(pids_str)) from e",
    "RuntimeError: DataLoader worker (pid(s) 6303) exited unexpectedly",
])


def test_chained_dataloader_traceback_is_one_event_with_pid_and_signal():
    (e,) = run(CHAINED)
    assert e["kind"] == "python.traceback"
    assert e["exc_type"] == "RuntimeError"
    assert e["message"] == "RuntimeError: DataLoader worker (pid(s) 6303) exited unexpectedly"
    assert (e["pid"], e["signal"], e["key"]) == (6303, "SIGABRT", "dataloader_worker")
    assert "first: RuntimeError: DataLoader worker (pid 6303) is killed by signal: Aborted." in e["detail"]
    assert "torch/utils/data/dataloader.py:1176 in _try_get_data" in e["detail"]
    assert "selectors.py" not in e["detail"]  # frames of the first exception are not the last 3


# real: https://github.com/xuebinqin/BASNet/issues/32 (Windows paths, first frame kept)
BASNET = "\n".join([
    "Traceback (most recent call last):",
    '  File "C:/CP/DL_REPOSITORIES/BASNet/basnet_test.py", line 76, in <module>',
    "    for i_test, data_test in enumerate(test_salobj_dataloader):",
    '  File "C:\\ProgramData\\Anaconda3\\lib\\site-packages\\torch\\utils\\data\\dataloader.py", line 774, '
    "in _try_get_data",
    "    raise RuntimeError('DataLoader worker (pid(s) {}) exited unexpectedly'.format(pids_str))",
    "RuntimeError: DataLoader worker (pid(s) 16732) exited unexpectedly",
])


def test_exited_unexpectedly_fills_pid():
    (e,) = run(BASNET)
    assert (e["exc_type"], e["pid"], e.get("signal")) == ("RuntimeError", 16732, None)


def test_dataloader_killed_without_traceback_is_an_exception_event():
    # real: https://github.com/hezhangsprinter/DCPDN/issues/12
    (e,) = run("RuntimeError: DataLoader worker (pid 19597) is killed by signal: Killed.")
    assert e["kind"] == "python.exception"
    assert (e["exc_type"], e["pid"], e["signal"]) == ("RuntimeError", 19597, "SIGKILL")


def test_dataloader_bus_error_line_names_sigbus():
    # real: quoted verbatim in a user's public notes next to a DataLoader SIGKILL (public code index,
    # find_string id 71390183054; the index does not name the repository)
    (e,) = run("ERROR: Unexpected bus error encountered in worker. This might be caused by insufficient shared "
               "memory (shm).")
    assert e["kind"] == "python.exception" and e["signal"] == "SIGBUS" and e["key"] == "dataloader_worker"


def test_caught_builtins_runtime_error_line_gives_rank_and_type():
    text = open(f"{SAMPLES}/gloo_size_mismatch_no_debug.log").read()
    (e,) = [e for e in run(text) if e["kind"] == "python.exception"]
    assert e["rank"] == 1 and e["exc_type"] == "RuntimeError"
    assert e["message"].startswith("RuntimeError: [/__w/pytorch/pytorch/third_party/gloo/gloo/transport/tcp/"
                                   "pair.cc:537] Read error [127.0.0.1]:41882: Connection reset by peer.")


# synthetic: built from the c10::Error what() layout "{msg}\nException raised from {func} at {file}:{line}
# (most recent call first):\nframe #{i}: {symbol} + 0x{offset} (0x{address} in {library})", torch 2.x; the
# frame lines are real, from https://github.com/scverse/scvi-tools/issues/2635
CPP = "\n".join([
    "Traceback (most recent call last):",
    '  File "/usr/local/lib/python3.10/dist-packages/torch/distributed/distributed_c10d.py", line 2501, in barrier',
    "    work = group.barrier(opts=opts)",
    "torch.distributed.DistStoreError: wait timeout after 600000ms, keys: /default_pg/0//cuda//0",
    "Exception raised from doWait at ../torch/csrc/distributed/c10d/TCPStore.cpp:550 (most recent call first):",
    "frame #0: c10::Error::Error(c10::SourceLocation, std::string) + 0x57 (0x787d33d50d87 in /usr/local/lib/"
    "python3.10/dist-packages/torch/lib/libc10.so)",
    "frame #1: <unknown function> + 0x589525c (0x787d2041425c in /usr/local/lib/python3.10/dist-packages/torch/"
    "lib/libtorch_cpu.so)",
    "frame #2: c10d::TCPStore::doWait(c10::ArrayRef<std::string>, std::chrono::duration<long, std::ratio<1l, "
    "1000l> >) + 0x2ee (0x787d2040e92e in /usr/local/lib/python3.10/dist-packages/torch/lib/libtorch_cpu.so)",
    "frame #3: c10d::TCPStore::doGet(std::string const&) + 0x32 (0x787d2040ece2 in /usr/local/lib/python3.10/"
    "dist-packages/torch/lib/libtorch_cpu.so)",
])


def test_cpp_frames_are_folded_to_function_names():
    (e,) = run(CPP)
    assert e["exc_type"] == "torch.distributed.DistStoreError"
    assert "C++: doWait < c10d::TCPStore::doWait < c10d::TCPStore::doGet" in e["detail"]
    assert "<unknown" not in e["detail"] and "0x787d" not in e["detail"]


def test_ordinary_log_lines_are_not_exceptions():
    # real 2.13 launcher lines (samples) and a progress line: none is an exception
    text = open(f"{SAMPLES}/torchrun_worker_sigkill_loglevel_info.log").read().split("\n")[:45]
    assert run("\n".join(text)) == []


def test_prefilter_keeps_every_parsed_line():
    for text in (CHAINED, BASNET, CPP, VLLM, open(f"{SAMPLES}/gloo_size_mismatch_no_debug.log").read()):
        lines = make_lines(text)

        def following(line: Line, n: int, lines=lines) -> list[Line]:
            return [c for c in lines[line.row + 1:] if c.stream == line.stream][:n]

        everything = list(python.parse(lines, FileContext(path="x.log", year=2026, _following=following)))
        assert run(text) == everything


FRAGMENTS = [
    "Traceback (most recent call last):", '  File "a.py", line 3, in f', "    x()", "KeyError: 'k'",
    "RuntimeError", ": ", "During handling of the above exception, another exception occurred:",
    "The above exception was the direct cause of the following exception:", "frame #0: f + 0x1 (0x2 in l)",
    "Exception raised from g at a.cpp:1 (most recent call first):", "DataLoader worker (pid 1) is killed by signal: ",
    "exited unexpectedly", "caught builtins.", "\n", "", " ", "[rank1]:",
]


@settings(max_examples=300, deadline=None)
@given(st.one_of(st.text(), st.lists(st.sampled_from(FRAGMENTS), max_size=40).map("\n".join),
                 st.lists(st.sampled_from(FRAGMENTS), max_size=40).map("".join)))
def test_parse_never_raises(text):
    for e in run(text):
        assert e["kind"] in ("python.traceback", "python.exception")


def test_an_old_launchers_called_process_error_names_the_workers_signal_not_the_last_spawned_rank():
    # real: https://github.com/open-mmlab/mmsegmentation/issues/189 (torch.distributed.launch, torch 1.x, 2 GPUs):
    # the command is the last one the launcher spawned, so --local_rank=1 does not say which worker died
    from nccllens.parse.python import launched_process_facts

    line = ("subprocess.CalledProcessError: Command '['/opt/conda/bin/python', '-u', './tools/train.py', "
            "'--local_rank=1', 'configs/deeplabv3plus/deeplabv3plus_r50-d8_512x512_40k_deepfashon2.py', '--launcher', "
            "'pytorch']' died with <Signals.SIGKILL: 9>.")
    assert launched_process_facts(line) == {"signal": "SIGKILL"}
    assert launched_process_facts("KeyError: 'labels'") == {}


def test_a_deepspeed_launcher_exit_names_local_rank_0_only_when_it_ran_one_worker():
    from nccllens.parse.torchrun_agent import match_agent_line

    # real: https://github.com/EleutherAI/gpt-neox/issues/940 (2 workers; the command shown is the second's)
    case = Path(__file__).resolve().parents[2] / "fixtures" / "public" / "gptneox_docker_2gpu_deepspeed_launcher_rc_minus7_sigbus"
    line = (case / "deepspeed_launcher.log").read_text().splitlines()[3]
    body = line.split("] ", 1)[1]  # after the launcher's own log header
    event = match_agent_line(body)
    assert (event["kind"], event["signal"], event.get("local_rank")) == ("torchrun.worker_failed", "SIGBUS", None)


def test_a_bare_exception_line_is_an_exception_event():
    # real: https://github.com/ray-project/ray/issues/15300 (raise Exception(...) in horovod's runner, Ray prefix)
    import nccllens
    from nccllens.parse.python import PREFILTER

    line = ("Exception: Timed out waiting for tasks to start. Please check connectivity between servers. "
            "You may need to increase the --start-timeout parameter if")
    assert re.search(PREFILTER, line)
    report = nccllens.analyze(str(ROOT_FIXTURES / "ray_tune_horovod_start_timeout_30s"))
    assert report.verdict.category == "rendezvous_timeout"


ROOT_FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "public"


def test_ray_names_the_tasks_own_exception_in_brackets():
    # real: https://github.com/ray-project/ray/issues/31828 via
    # fixtures/public/ray_train_torchtrainer_worker_sigkill_oom_after_train_func_returns (colour codes that lost their ESC)
    line = ("ray.exceptions.RayTaskError(RuntimeError): [36mray::TrainTrainable.train()[39m "
            "(pid=1876, ip=100.97.252.234, repr=TorchTrainer)")
    (event,) = run(line)
    assert event["exc_type"] == "RuntimeError" and event["kind"] == "python.exception"


def test_an_exception_python_reports_as_ignored_is_context_not_a_failure():
    # https://github.com/pytorch/pytorch/issues/95724: a finaliser's exception after a run that finished; CPython
    # prints it and goes on
    (e,) = run("Exception ignored in: <Finalize object, dead>\nFileNotFoundError: [Errno 2] No such file or directory")
    assert e["kind"] == "python.ignored_exception" and e["level"] == "info"
    assert e["exc_type"] == "FileNotFoundError"


def test_an_ignored_exception_with_its_traceback_takes_the_whole_traceback():
    # https://github.com/mlbench/mlbench-core/issues/26: tqdm's __del__ at exit (the frames between are synthetic,
    # CPython's traceback format)
    (e,) = run("Exception ignored in: <bound method tqdm.__del__ \nTraceback (most recent call last):\n"
               '  File "/usr/lib/python3/site-packages/tqdm/_tqdm.py", line 931, in __del__\n'
               "    self.close()\nRuntimeError: cannot join current thread")
    assert e["kind"] == "python.ignored_exception" and e["exc_type"] == "RuntimeError"


def test_a_traceback_cut_inside_a_with_blocks_enter_names_the_context_being_entered():
    # https://github.com/huggingface/trl/issues/1902 (cut where the paste stops): a waiting rank inside
    # accelerate's local_main_process_first; a whole traceback that raises in a with-block's body names none
    cut = "\n".join([
        "[rank1]: Traceback (most recent call last):",
        '[rank1]:   File "/home/djl/.conda/envs/dpo/lib/python3.11/site-packages/trl/trainer/dpo_trainer.py",'
        " line 527, in __init__",
        "[rank1]:     with PartialState().local_main_process_first():",
        '[rank1]:   File "/home/djl/.conda/envs/dpo/lib/python3.11/contextlib.py", line 137, in __enter__',
        "[rank1]:     return next(self.gen)",
    ])
    (event,) = run(cut)
    assert event["exc_type"] is None
    assert event["detail"].split("\n")[-1] == "entering: local_main_process_first"
    body = "\n".join([
        "[rank0]: Traceback (most recent call last):",
        '[rank0]:   File "/job/train.py", line 10, in main',
        "[rank0]:     with torch.no_grad():",
        '[rank0]:   File "/job/train.py", line 11, in main',
        "[rank0]:     loss = model(batch)",
        "[rank0]: KeyError: 'labels'",
    ])
    (event,) = run(body)
    assert "entering: " not in event["detail"]
