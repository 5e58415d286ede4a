"""Inner error over wrapper (issue 16 §3.7): a store / rendezvous wrapper takes its category from the error
it wraps; a connection closed by the other end is a peer that went away, and the culprit is the peer the
wrapper names."""

from __future__ import annotations

import pytest

import nccllens
from nccllens.parse.inner_error import inner_category, inner_class, inner_text


@pytest.mark.parametrize(("line", "cls"), [
    # source: a TCPStore run made for this project (torch 2.13.0+cpu), the store server killed mid-run
    ("torch.distributed.DistNetworkError: Failed to recv, got 0 bytes. Connection was likely closed. "
     "Did the remote server shutdown or crash?", "closed"),
    ("torch.distributed.DistNetworkError: Broken pipe", "closed"),
    # source: a torchrun run made for this project (torch 2.13.0+cpu, gloo): a restarted worker connecting to a
    # peer that never came back
    ("RuntimeError: Gloo connectFullMesh failed with [/__w/pytorch/pytorch/third_party/gloo/gloo/transport/tcp/"
     "pair.h:311] Connect timeout [none]", "timeout"),
    ("[c10d] The client socket has failed to connect to 0.104.99.143:47389 (errno: 110 - Connection timed out).",
     "timeout"),  # source: https://github.com/hpcaitech/Open-Sora/issues/667
    ("[c10d] The client socket has failed to connect to [node-a]:29500 (errno: 111 - Connection refused).",
     "refused"),  # synthetic: socket.cpp's verbatim format (torch 2.x) with errno 111
    ("RuntimeError: CUDA out of memory.", None),
])
def test_inner_class_of_real_errors(line, cls):
    assert inner_class(line) == cls


def test_one_line_wrapper_carries_its_inner_error():
    # source: https://github.com/pytorch/pytorch/issues/82091 (the store's own error appended to the wrapper)
    line = ("RuntimeError: [2] is setting up NCCL communicator and retreiving "
            "ncclUniqueId from [0] via c10d key-value store by key '0', but store->get('0') got error: Socket Timeout")
    assert inner_text(line) == "Socket Timeout"
    assert inner_category(inner_class(inner_text(line)), line) == "rendezvous_timeout"
    gloo = ("RuntimeError: Gloo connectFullMesh failed with [/__w/pytorch/pytorch/third_party/gloo/gloo/transport/"
            "tcp/pair.h:311] Connect timeout [none]")
    assert inner_category(inner_class(inner_text(gloo)), gloo) == "network_unreachable"


def test_unique_id_fetch_reset_by_peer_blames_the_publishing_rank(tmp_path):
    # synthetic: ProcessGroupNCCL's verbatim format ("[%d] is setting up NCCL communicator and retrieving
    # ncclUniqueId from [%d] via c10d key-value store by key '%s', but store->get('%s') got error: ") with the
    # inner error the reporter of https://github.com/hiyouga/LlamaFactory/issues/2470 saw
    (tmp_path / "rank11.log").write_text(
        "RuntimeError: [11] is setting up NCCL communicator and retrieving ncclUniqueId from [0] via c10d "
        "key-value store by key '0', but store->get('0') got error: Connection reset by peer\n")
    report = nccllens.analyze(str(tmp_path))
    top = report.findings[0]
    assert report.verdict.category == "peer_exited"
    assert top.category == "peer_exited" and top.ranks == [0]


def test_rendezvous_wrapper_over_closed_connection_is_peer_exited(tmp_path):
    # synthetic chain: the two exception lines are verbatim (torch 2.13.0+cpu run made for this project;
    # torch/distributed/elastic/rendezvous/c10d_rendezvous_backend.py), the frames are shortened
    (tmp_path / "agent.log").write_text(
        "Traceback (most recent call last):\n"
        '  File "/opt/venv/lib/python3.11/site-packages/torch/distributed/elastic/rendezvous/'
        'c10d_rendezvous_backend.py", line 117, in _call_store\n'
        "    return getattr(self._store, store_op)(*args, **kwargs)\n"
        "torch.distributed.DistNetworkError: Broken pipe\n"
        "\n"
        "The above exception was the direct cause of the following exception:\n"
        "\n"
        "Traceback (most recent call last):\n"
        '  File "/opt/venv/bin/torchrun", line 8, in <module>\n'
        "    sys.exit(main())\n"
        "torch.distributed.elastic.rendezvous.api.RendezvousConnectionError: The connection to the C10d store "
        "has failed. See inner exception for details.\n")
    report = nccllens.analyze(str(tmp_path))
    assert report.verdict.category == "peer_exited"
    assert report.findings[0].rule == "AN-INNER-ERROR"


def test_rendezvous_wrapper_over_timeout_keeps_its_own_category(tmp_path):
    # synthetic chain of two verbatim torch 2.x messages (socket.cpp connect timeout, rendezvous api): the
    # wrapper's own rule already says network_unreachable
    (tmp_path / "agent.log").write_text(
        "torch.distributed.DistNetworkError: The client socket has timed out after 60s while trying to connect "
        "to (10.0.0.1, 29400).\n"
        "\n"
        "The above exception was the direct cause of the following exception:\n"
        "\n"
        "torch.distributed.elastic.rendezvous.api.RendezvousConnectionError: The connection to the C10d store "
        "has failed. See inner exception for details.\n")
    report = nccllens.analyze(str(tmp_path))
    assert report.verdict.category == "network_unreachable"
