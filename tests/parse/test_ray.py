"""ray family: worker and actor processes that died, and Ray's memory monitor, on real lines."""

from __future__ import annotations

from nccllens.parse import ray
from nccllens.parse.base import FileContext, Line

# https://github.com/ray-project/ray/issues/31828 (Ray Train TorchTrainer)
DIED = ("2023-01-17 17:21:35,472\tWARNING worker.py:1829 -- A worker died or was killed while executing a task by an "
        "unexpected system error. To troubleshoot the problem, check the logs for the dead worker. RayTask ID: "
        "ffffffffffffffff686c4586a18aa58bf9747eb504000000 Worker ID: 0c62b78d30f3642bc1fc9a6f3cb257202e1230b03d988031722bc993 "
        "Node ID: 38300cefdc3b42caebdba478cc1da1adbba154304cecb24fd8ba1a7e Worker IP address: 100.97.252.234 Worker port: "
        "10016 Worker PID: 1942 Worker exit type: SYSTEM_ERROR Worker exit detail: Worker unexpectedly exits with a "
        "connection error code 2. End of file. There are some potential root causes. (1) The process is killed by "
        "SIGKILL by OOM killer due to high memory usage. (2) ray stop --force is called. (3) The worker is crashed "
        "unexpectedly due to SIGSEGV or other unexpected errors.")
# https://github.com/hiyouga/EasyR1/issues/324 (the owner's node crashed)
OWNER = ("The actor is dead because its owner has died. Owner Id: 01000000ffffffffffffffffffffffffffffffffffffffffffffffff "
         "Owner Ip address: 172.21.160.9 Owner worker exit type: SYSTEM_ERROR Worker exit detail: Owner's node has crashed.")
# https://github.com/verl-project/verl/issues/2950 (Ray's memory monitor names the node)
MEMORY = ("Memory on the node (IP: 10.20.49.141, ID: 4748aa6d1bc114b8bf58822d0b162796a1d36a79dee5c167c9bf91f5) where the "
          "task (actor ID: 9e43ace6a1234e13df7b456b01000000, name=8szhVkWorkerDict_0:3:WorkerDict.__init__, pid=4100606, "
          "memory used=56.57GB) was running was 246.41GB / 251.54GB (0.979583), which exceeds the memory usage threshold of 0.95.")


def _events(*texts):
    lines = [Line(file="x.log", line=i + 1, raw=t, message=t, row=i) for i, t in enumerate(texts)]
    return list(ray.parse(lines, FileContext(path="x.log", year=2026)))


def test_a_vanished_worker_names_its_node_and_pid():
    (e,) = _events(DIED)
    assert (e["kind"], e["value"], e["key"], e["peer"], e["pid"]) == (
        "ray.worker_died", "SYSTEM_ERROR", "process_died", "100.97.252.234", 1942)


def test_a_crashed_owner_node_is_a_node_that_died_not_a_vanished_process():
    (e,) = _events(OWNER)
    assert (e["kind"], e["key"], e["peer"]) == ("ray.node_dead", "node_died", "172.21.160.9")


def test_the_memory_monitor_names_the_node():
    (e,) = _events(MEMORY)
    assert (e["kind"], e["peer"]) == ("ray.memory_kill", "10.20.49.141")


def test_other_lines_are_left_alone():
    assert _events("(TorchTrainer pid=89392) Worker 0 has failed.", "Worker exit type") == []


def test_the_whole_pipeline_blames_the_node_ray_names(tmp_path):
    import nccllens

    (tmp_path / "case-001").mkdir()
    (tmp_path / "case-001" / "driver.log").write_text(DIED + "\n", encoding="utf-8")
    top = nccllens.analyze(str(tmp_path / "case-001")).findings[0]
    assert (top.rule, top.category, list(top.hosts)) == ("NL-JOB-043", "host_oom", ["100.97.252.234"])


# https://github.com/ray-project/ray/issues/22349 (Ray Train fault-tolerance test: the reporter terminated a node)
NODE_DEAD = ("2022-02-15 16:53:52,096\tWARNING worker.py:1462 -- The node with node id: "
             "8f205b12643d25d8c1ce57c45527a6c912f3479765096718ad2bf0d3 and ip: 10.128.0.103 has been marked dead because "
             "the detector has missed too many heartbeats from it. This can happen when a raylet crashes unexpectedly "
             "or has lagging heartbeats.")


def test_a_node_marked_dead_names_its_ip():
    (event,) = _events(NODE_DEAD)
    assert event["kind"] == "ray.node_dead" and event["peer"] == "10.128.0.103"


def test_a_lost_node_is_the_culprit_not_the_driver_that_printed_it(tmp_path):
    import nccllens

    # the driver's console: both workers' progress, then Ray gives up on one node
    (tmp_path / "driver.log").write_text(
        "(BaseWorkerMixin pid=5172, ip=10.128.0.32) loss: 1.813242  [ 6400/30000]\n" + NODE_DEAD + "\n")
    top = nccllens.analyze(str(tmp_path)).findings[0]
    assert (top.rule, top.category, top.hosts) == ("NL-JOB-044", "peer_exited", ["10.128.0.103"])


# https://github.com/ray-project/ray/issues/8251 (Ray 0.8 names the node by its client ID only)
CLIENT_DEAD = ("2020-05-01 17:17:43,584 WARNING worker.py:1072 -- The node with client ID "
               "0cc474dda1d9ddc4c20d6966fefedfcd4dd08efb has been marked dead because the monitor has missed too many "
               "heartbeats from it.")
# https://github.com/ray-project/kuberay/issues/3827 (Ray 2.4x event JSON: address and node name)
ADDRESS_DEAD = ('"message":"The node with node id: ada3a3771fac751bd7c6b674e3b5e2df045b93550e6d31a410cad0be and address: '
                '156.176.0.154 and node name: 156.176.0.154 has been marked dead because the detector has missed too many '
                'heartbeats from it.')


def test_every_generation_of_the_node_marked_dead_report_is_read():
    (old,) = _events(CLIENT_DEAD)
    (new,) = _events(ADDRESS_DEAD)
    assert (old["kind"], old.get("peer")) == ("ray.node_dead", None)
    assert (new["kind"], new["peer"]) == ("ray.node_dead", "156.176.0.154")


def test_an_actor_whose_owner_node_crashed_is_a_peer_that_exited(tmp_path):
    import nccllens

    (tmp_path / "driver.log").write_text(OWNER + "\n", encoding="utf-8")
    report = nccllens.analyze(str(tmp_path))
    top = report.findings[0]
    assert (top.rule, top.category, list(top.hosts)) == ("NL-JOB-044", "peer_exited", ["172.21.160.9"])
    assert report.verdict.category == "peer_exited"
