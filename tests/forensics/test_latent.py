"""A latent condition (``latent = true``) is a cause where the job failed and context where nothing did."""

from __future__ import annotations

import nccllens

# source: https://github.com/NVIDIA/TensorRT-LLM/issues/1034 (TP=4 on a g5.48xlarge: PCIe A10G without peer access)
START = """\
[TensorRT-LLM][WARNING] Device 2 peer access Device 5 is not available.
[TensorRT-LLM][WARNING] Device 2 peer access Device 6 is not available.
[TensorRT-LLM][WARNING] Device 2 peer access Device 7 is not available.
[TensorRT-LLM][INFO] Loaded engine size: 3568 MiB
"""
# the same thread: the custom all-reduce's IPC set-up then failed and mpirun ended the job
FAILED = START + """\
mpirun detected that one or more processes exited with non-zero status, thus causing
the job to be terminated. The first process to do so was:

  Process name: [[34453,1],2]
  Exit code:    1
"""


def test_condition_in_a_failed_job_is_the_cause(tmp_path):
    (tmp_path / "console.log").write_text(FAILED)
    report = nccllens.analyze(str(tmp_path))
    assert report.verdict.category == "p2p_topology"
    assert (report.findings[0].rule, report.findings[0].role) == ("NL-SYS-011", "cause")


def test_condition_alone_is_context_not_a_verdict(tmp_path):
    (tmp_path / "console.log").write_text(START)
    report = nccllens.analyze(str(tmp_path))
    assert report.verdict.category != "p2p_topology"
    assert [f.role for f in report.findings if f.rule == "NL-SYS-011"] == ["context"]


def test_latent_must_be_a_boolean(tmp_path):
    from nccllens.engine.validate import check_document

    doc = {"id": "X-1", "category": "p2p_topology", "severity": "warning", "role": "cause", "latent": "yes",
           "match": {"pattern": "x"}, "en": {"title": "t", "summary": "s", "remediation": "r"}, "examples": []}
    assert any("latent must be true or false" in str(p) for p in check_document(doc, "", "X-1.toml"))
