"""torchrun family: elastic-agent lines of every header generation, the launch config block, rendezvous.

Lines are real: shared/reference/samples/torch2.13_cpu_logs (2.13, ``W1122 … file.py:N]`` header) or the
public issue cited next to them; synthetic lines say which format string they were built from.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import polars as pl
from hypothesis import given, settings
from hypothesis import strategies as st

from nccllens.parse import torchrun
from nccllens.parse.base import FileContext, Line

PROJECT = str(Path(__file__).resolve().parents[2])  # the checkout, wherever it was cloned
SHARED = str(Path(__file__).resolve().parents[3] / "shared")  # ../shared beside it

SAMPLES = f"{SHARED}/reference/samples/torch2.13_cpu_logs"


def make_lines(text: str) -> list[Line]:
    return [Line(file="x.log", line=i + 1, raw=s, message=s, row=i) for i, s in enumerate(text.split("\n"))]


def run(text: str) -> list[dict]:
    lines = make_lines(text)

    def following(line: Line, n: int) -> list[Line]:
        return lines[line.row + 1: line.row + 1 + n]

    keep = pl.Series([ln.message for ln in lines]).str.contains(torchrun.PREFILTER).to_list()
    survivors = [ln for ln, k in zip(lines, keep, strict=True) if k]
    events = list(torchrun.parse(survivors, FileContext(path="x.log", year=2026, _following=following)))
    assert all(e["kind"].startswith("torchrun.") and e["family"] == "torchrun" for e in events)
    return events


def kinds(events: list[dict]) -> list[str]:
    return [e["kind"] for e in events]


# --- worker failed: all three header generations, plus 2.13 --------------------------------------------

def test_worker_failed_pylog_2_0_header():
    # real: https://github.com/Facico/Chinese-Vicuna/issues/113
    (e,) = run("ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: 1) local_rank: 0 "
               "(pid: 1622990) of binary: /home/changquan/anaconda3/envs/lang/bin/python")
    assert e["kind"] == "torchrun.worker_failed"
    assert (e["exit_code"], e["local_rank"], e["pid"], e["level"]) == (1, 0, 1622990, "error")
    assert e["signal"] is None
    assert e["message"].startswith("failed (exitcode: 1)")


def test_worker_failed_sigkill_derives_signal_torch1x_fixture():
    text = open(f"{PROJECT}/fixtures/public/torchrun/torch1.x_elastic_exitcode_minus9.log").read().strip()
    (e,) = run(text)
    assert (e["exit_code"], e["signal"], e["local_rank"], e["pid"]) == (-9, "SIGKILL", 0, 178)


def test_deepspeed_launcher_exit_names_the_local_rank_of_its_command_line():
    # real: https://github.com/deepspeedai/DeepSpeed/issues/3232 (fixtures/public/dschat_colab_opt125m_launcher_rank0_return_code_minus9)
    line = open(f"{PROJECT}/fixtures/public/dschat_colab_opt125m_launcher_rank0_return_code_minus9/launcher.log").read()
    line = next(t for t in line.splitlines() if "exits with return code = -9" in t)
    (e,) = run(line)
    assert (e["kind"], e["exit_code"], e["signal"], e["local_rank"]) == ("torchrun.worker_failed", -9, "SIGKILL", 0)


def test_worker_failed_pylog_2_1_header_has_absolute_time():
    # real: https://github.com/xiuqhou/Salience-DETR/issues/4
    text = ("[2024-05-08 08:47:31,261] torch.distributed.elastic.multiprocessing.api: [WARNING] Sending process "
            "5938 closing signal SIGTERM\n"
            "[2024-05-08 08:47:31,877] torch.distributed.elastic.multiprocessing.api: [ERROR] failed (exitcode: 1) "
            "local_rank: 2 (pid: 5939) of binary: /home/ubuntu/anaconda3/envs/salience_detr/bin/python")
    sent, failed = run(text)
    assert sent["kind"] == "torchrun.sigterm_sent" and sent["pid"] == 5938 and sent["signal"] == "SIGTERM"
    assert sent["level"] == "warning"
    assert failed["kind"] == "torchrun.worker_failed" and failed["local_rank"] == 2 and failed["pid"] == 5939
    assert failed["ts"] == datetime(2024, 5, 8, 8, 47, 31, 877000) and failed["ts_kind"] == "absolute"


def test_worker_failed_pylog_2_3_header_with_site_packages_path():
    # real: https://github.com/lmzpai/roboMamba/issues/10
    (e,) = run("E0325 20:57:27.620000 2606 site-packages/torch/distributed/elastic/multiprocessing/api.py:869] "
               "failed (exitcode: -9) local_rank: 5 (pid: 2630) of binary: /root/miniconda3/bin/python")
    assert (e["exit_code"], e["signal"], e["local_rank"], e["pid"]) == (-9, "SIGKILL", 5, 2630)
    assert e["ts"] == datetime(2026, 3, 25, 20, 57, 27, 620000) and e["ts_kind"] == "no_year"


def test_2_13_sigkill_run_agent_lines():
    events = run(open(f"{SAMPLES}/torchrun_worker_sigkill_loglevel_info.log").read())
    by_kind: dict[str, list[dict]] = {}
    for e in events:
        by_kind.setdefault(e["kind"], []).append(e)
    (sent,) = by_kind["torchrun.sigterm_sent"]
    assert (sent["pid"], sent["signal"]) == (21164, "SIGTERM")
    (failed,) = by_kind["torchrun.worker_failed"]
    assert (failed["exit_code"], failed["signal"], failed["local_rank"], failed["pid"]) == (-9, "SIGKILL", 1, 21165)
    assert failed["value"] == "/opt/venv/bin/python"
    assert [e["value"] for e in by_kind["torchrun.rendezvous"]] == ["waiting", "complete"]
    assert [e["value"] for e in by_kind["torchrun.state"]] == ["Starting worker group"]
    (root,) = by_kind["torchrun.root_cause"]
    assert root["rank"] == 1


# --- launch config block and Using nproc_per_node ------------------------------------------------------

def test_launch_config_block_2_13_one_event_per_key_on_its_own_line():
    events = run(open(f"{SAMPLES}/torchrun_worker_sigkill_loglevel_info.log").read())
    config = {e["key"]: e for e in events if e["kind"] == "torchrun.config"}
    assert config["nproc_per_node"]["value"] == "2"
    assert config["entrypoint"]["value"] == "crash.py"
    assert config["rdzv_backend"]["value"] == "static"
    assert config["rdzv_endpoint"]["value"] == "127.0.0.1:29631"
    assert config["max_restarts"]["value"] == "0"
    assert config["log_dir"]["value"] == "/tmp/torchelastic_yz4nskpm"
    assert (config["min_nodes"]["value"], config["max_nodes"]["value"], config["run_id"]["value"]) == ("1", "1", "none")
    assert config["entrypoint"]["line"] == 7 and config["log_dir"]["line"] == 17
    assert config["entrypoint"]["pid"] == 21161


def test_launch_config_block_pylog_2_0_continuation_lines_without_header():
    # synthetic: built from "Starting elastic_operator with launch configs:\n  entrypoint       : %(entrypoint)s\n
    # ..." (torch/distributed/launcher/api.py) under the ≤2.0 "LEVEL:logger:msg" header
    text = "\n".join([
        "INFO:torch.distributed.launcher.api:Starting elastic_operator with launch configs:",
        "  entrypoint       : train.py",
        "  min_nodes        : 2",
        "  max_nodes        : 2",
        "  nproc_per_node   : 8",
        "  run_id           : job42",
        "  rdzv_backend     : c10d",
        "  rdzv_endpoint    : node01:29400",
        "  rdzv_configs     : {'timeout': 900}",
        "  max_restarts     : 3",
        "  monitor_interval : 5",
        "  log_dir          : None",
        "  metrics_cfg      : {}",
        "",
        "INFO:torch.distributed.elastic.agent.server.local_elastic_agent:log directory set to: /tmp/x",
    ])
    config = {e["key"]: e["value"] for e in run(text)}
    assert config["rdzv_backend"] == "c10d" and config["rdzv_endpoint"] == "node01:29400"
    assert config["max_restarts"] == "3" and config["nproc_per_node"] == "8" and config["run_id"] == "job42"
    assert "log directory set to" not in " ".join(config)


def test_using_nproc_per_node():
    (e,) = run(open(f"{SAMPLES}/torchrun_worker_sigkill_loglevel_info.log").read().split("\n")[0])
    assert (e["kind"], e["key"], e["value"], e["level"]) == ("torchrun.config", "nproc_per_node", "2", "info")


# --- rendezvous, restarts, signals -----------------------------------------------------------------------

def test_rendezvous_result_gives_restart_count_world_and_master():
    events = run(open(f"{SAMPLES}/torchrun_worker_sigkill_loglevel_info.log").read())
    (done,) = [e for e in events if e["kind"] == "torchrun.rendezvous" and e["value"] == "complete"]
    assert (done["attempt"], done["nranks"], done["peer"]) == (0, 2, "127.0.0.1:29631")
    assert "global_ranks=[0, 1]" in done["detail"]


def test_restart_attempt_number():
    # synthetic: built from '[%s] Worker group %s. %s/%s attempts left; will restart worker group'
    # (torch/distributed/elastic/agent/server/api.py), 2.13 header
    text = ("I1122 02:50:01.100000 21161 torch/distributed/elastic/agent/server/api.py:931] [default] Worker group "
            "FAILED. 3/3 attempts left; will restart worker group\n"
            "I1122 02:50:09.100000 21161 torch/distributed/elastic/agent/server/api.py:931] [default] Worker group "
            "FAILED. 2/3 attempts left; will restart worker group")
    first, second = run(text)
    assert first["kind"] == "torchrun.restart" and (first["attempt"], first["value"]) == (1, "FAILED")
    assert second["attempt"] == 2


def test_agent_receives_death_signal_and_signal_exception():
    # synthetic: built from "Received %s death signal, shutting down workers" (agent/server/api.py) with
    # sig = Signals.SIGTERM, ≈2.1 header; and f"Process {os.getpid()} got signal: {sigval}" (SignalException)
    text = ("[2024-07-25 06:40:02,101] torch.distributed.elastic.agent.server.api: [INFO] Received Signals.SIGTERM "
            "death signal, shutting down workers\n"
            "torch.distributed.elastic.multiprocessing.api.SignalException: Process 4242 got signal: 15")
    got, exc = run(text)
    assert got["kind"] == "torchrun.signal_received" and got["signal"] == "SIGTERM"
    assert exc["kind"] == "torchrun.signal_received" and (exc["pid"], exc["signal"]) == (4242, "SIGTERM")
    assert exc["exc_type"] == "SignalException"


def test_rendezvous_timeout_error_is_a_rendezvous_error():
    events = run(open(f"{SAMPLES}/rdzv_c10d_join_timeout.log").read())
    (e,) = events
    assert e["kind"] == "torchrun.rendezvous_error" and e["value"] == "RendezvousTimeoutError"
    assert e["exc_type"] == "torch.distributed.elastic.rendezvous.api.RendezvousTimeoutError"


def test_rendezvous_closed_and_node_failures():
    # synthetic: built from "RendezvousClosedError" (rendezvous/api.py), "The node '%s' has failed to send a
    # keep-alive heartbeat to the rendezvous '%s' due to an error of type %s." and "The node '%s' has joined
    # round %s of the rendezvous '%s' as rank %s in a world of size %s." (dynamic_rendezvous.py), 2.3+ header
    text = "\n".join([
        "torch.distributed.elastic.rendezvous.api.RendezvousClosedError",
        "W0410 13:32:53.256000 139839630783488 torch/distributed/elastic/rendezvous/dynamic_rendezvous.py:1150] "
        "The node 'node03_1234_0' has failed to send a keep-alive heartbeat to the rendezvous 'job42' due to an "
        "error of type RendezvousConnectionError.",
        "I0410 13:30:01.000000 1234 torch/distributed/elastic/rendezvous/dynamic_rendezvous.py:1201] The node "
        "'node01_1234_0' has joined round 2 of the rendezvous 'job42' as rank 0 in a world of size 4.",
        "    raise RendezvousClosedError",
    ])
    closed, failed, joined = run(text)
    assert closed["kind"] == "torchrun.rendezvous_error" and closed["value"] == "RendezvousClosedError"
    assert failed["kind"] == "torchrun.rendezvous_error" and failed["key"] == "node03_1234_0"
    assert failed["level"] == "warning"
    assert joined["kind"] == "torchrun.rendezvous" and joined["nranks"] == 4 and "rank" not in joined


def test_unrelated_lines_give_nothing():
    # real lines that must not become torchrun events (samples, 2.13)
    text = open(f"{SAMPLES}/torchrun_worker_exception_with_record.log").read().split("\n")[:4]
    assert run("\n".join(text)) == []


# --- prefilter keeps what parse reads; parse never raises -----------------------------------------------

def parse_everything(text: str) -> list[dict]:
    """parse() offered every line, as if the PREFILTER kept all of them."""
    lines = make_lines(text)

    def following(line: Line, n: int) -> list[Line]:
        return lines[line.row + 1: line.row + 1 + n]

    return list(torchrun.parse(lines, FileContext(path="x.log", year=2026, _following=following)))


def test_prefilter_keeps_every_line_that_yields_an_event():
    for name in ("torchrun_worker_sigkill_loglevel_info.log", "torchrun_worker_exception_with_record.log",
                 "gloo_size_mismatch_no_debug.log", "rdzv_c10d_join_timeout.log", "rdzv_static_master_waits.log"):
        text = open(f"{SAMPLES}/{name}").read()
        assert run(text) == parse_everything(text)
        # the static-rendezvous DistStoreError is the torch family's (torch.store_timeout)
        assert run(text) or name == "rdzv_static_master_waits.log"


FRAGMENTS = [
    "failed (exitcode: ", ") local_rank: ", " (pid: ", ") of binary: ", "Sending process ", " closing signal ",
    "Root Cause (first observed failure):", "Failures:", "[0]:", "  rank      : ", "  exitcode  : ",
    "Starting elastic_operator with launch configs:", "  entrypoint : ", "Worker group FAILED. ",
    " attempts left; will restart worker group", "RendezvousTimeoutError", "The node '", "-9", "12", "\n", " ",
    "W1122 02:46:53.164000 21161 torch/distributed/elastic/multiprocessing/api.py:1028] ", "SIG", "Signals.",
]


@settings(max_examples=300, deadline=None)
@given(st.one_of(st.text(), st.lists(st.sampled_from(FRAGMENTS), max_size=30).map("".join)))
def test_parse_never_raises(text):
    for e in run(text):
        assert e["kind"].startswith("torchrun.")


def test_a_spawned_child_that_died_is_a_failed_worker_with_its_local_rank():
    # https://github.com/shenyunhang/DRN-WSOD-pytorch/issues/11: detectron2's launch uses torch.multiprocessing.spawn
    import nccllens

    case = Path(__file__).resolve().parents[2] / "fixtures" / "public" / "detectron2_mpspawn_4gpu_process3_sigkill_weights_load_ram"
    report = nccllens.analyze(str(case))
    top = report.findings[0]
    assert (report.verdict.category, top.ranks) == ("host_oom", [3])


def test_a_failed_worker_line_whose_binary_wrapped_to_the_next_line_is_still_read():
    # https://github.com/lm-sys/FastChat/issues/1294: the paste ends the line at "of binary:" (the binary
    # wrapped to the next line) and the blank after the colon is gone
    import nccllens

    case = Path(__file__).resolve().parents[2] / "fixtures" / "public" / "fastchat_vicuna13b_fsdp_offload_8proc_local_rank6_sigkill_at_save"
    report = nccllens.analyze(str(case))
    assert (report.verdict.category, report.findings[0].ranks) == ("host_oom", [6])
