"""Interface and net-plugin facts per host, compared across hosts (issue 16 §3.14)."""

from __future__ import annotations

import nccllens
from nccllens.analyses.net_facts import first_interface_kind

# source: https://github.com/NVIDIA/nccl/issues/941 (NGC container, the RDMA net plugin loaded)
PLUGIN_LOADED = "05-06-76-200:7839:7839 [0] NCCL INFO NET/Plugin: Loaded net plugin NCCL RDMA Plugin (v5)\n"
# source: https://github.com/pytorch/pytorch/issues/52916 (node rank 1 of two, NCCL on the loopback)
ON_LO = ("GPU9:10330:10330 [0] NCCL INFO NET/Plugin : No plugin found (libnccl-net.so), using internal implementation\n"
         "GPU9:10330:10330 [0] NCCL INFO NET/Socket : Using [0]lo:127.0.0.1<0>\n")
# source: https://github.com/NVIDIA/nccl/issues/257 (nccl-tests on a real NIC)
ON_ETH = "jupyter-vmarkovtsev:15833:15833 [0] NCCL INFO NET/Socket : Using [0]eth0:10.2.3.32<0>\n"


def test_first_interface_kind():
    assert first_interface_kind("lo:127.0.0.1<0>") == "virtual"
    assert first_interface_kind("docker0:172.17.0.1<0>") == "virtual"
    assert first_interface_kind("ens5f0np0:10.220.178.201<0> virbr0:192.168.122.1<0>") == "nic"
    assert first_interface_kind("eth0:169.254.3.1<0>") == "virtual"  # link-local address


def test_loopback_interface_on_one_host_is_named(tmp_path):
    # synthetic pairing: two real lines from different threads, as the two hosts of one job
    (tmp_path / "a.log").write_text(ON_ETH)
    (tmp_path / "b.log").write_text(ON_LO)
    report = nccllens.analyze(str(tmp_path))
    odd = [f for f in report.findings if f.rule == "AN-NET-IFACE-MISMATCH"]
    assert odd and odd[0].category == "network_interface" and odd[0].hosts == ["GPU9"]


def test_net_plugin_loaded_on_one_host_only_is_a_config_mismatch(tmp_path):
    # synthetic pairing: one host loaded the RDMA plugin, the other fell back to the internal transports
    # (one folder per node: the loaded line's host starts with digits, so the folder names it)
    for node, text in (("node-a", PLUGIN_LOADED), ("node-b", ON_LO)):
        (tmp_path / node).mkdir()
        (tmp_path / node / "rank0.log").write_text(text)
    report = nccllens.analyze(str(tmp_path))
    plugin = [f for f in report.findings if f.rule == "AN-CONFIG-MISMATCH" and "plugin" in f.title]
    assert plugin and plugin[0].category == "config_mismatch"
    assert "=loaded" in plugin[0].summary and "GPU9=internal" in plugin[0].summary


def test_differently_named_real_nics_are_not_reported(tmp_path):
    (tmp_path / "a.log").write_text(ON_ETH)
    # source: https://github.com/NVIDIA/nccl-tests/issues/136 (a bonded NIC), synthetic host pairing
    (tmp_path / "b.log").write_text("nlp-gpu-05:524323:524323 [0] NCCL INFO NET/Socket : Using [0]bond0:10.25.193.57<0>\n")
    report = nccllens.analyze(str(tmp_path))
    assert not [f for f in report.findings if f.rule == "AN-NET-IFACE-MISMATCH"]


# source: https://github.com/horovod/horovod/issues/148 (two servers both named node1, NCCL 2.1)
SHARED_NAME = """\
node1:18226:18240 [1] INFO NET : Using interface eth1:100.102.32.176<0>
node1:18225:18239 [0] INFO NET : Using interface eth1:100.102.32.176<0>
node1:22671:22795 [1] INFO NET : Using interface eth1:100.102.32.175<0>
node1:18226:18240 [1] INFO NET : Using interface eth1:100.102.32.176<0>
node1:22671:22795 [1] INFO 1 -> 0 via P2P/IPC
"""


def test_two_machines_under_one_host_name_are_named(tmp_path):
    (tmp_path / "console.log").write_text(SHARED_NAME)
    report = nccllens.analyze(str(tmp_path))
    assert report.verdict.category == "config_mismatch"
    found = next(f for f in report.findings if f.rule == "AN-SHARED-HOSTNAME")
    assert found.hosts == ["node1"] and "100.102.32.175, 100.102.32.176" in found.title


def test_a_host_that_came_back_on_a_new_address_is_not_two_machines(tmp_path):
    # the same lines, one address after the other: a pod restarted on a new address, not two at once
    lines = SHARED_NAME.splitlines()
    (tmp_path / "console.log").write_text("\n".join([lines[0], lines[1], lines[3], lines[2]]) + "\n")
    report = nccllens.analyze(str(tmp_path))
    assert not [f for f in report.findings if f.rule == "AN-SHARED-HOSTNAME"]
