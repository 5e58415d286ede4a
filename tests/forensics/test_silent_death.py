"""A worker that ended without a word: the launcher's teardown is all the logs show (issue 16 §3.8).

Lines are copied from cases of the dev corpus (fixtures/public/<case>/, whose SOURCE.md cites the thread).
"""

from __future__ import annotations

from pathlib import Path

import nccllens

PUBLIC = Path(__file__).resolve().parents[2] / "fixtures" / "public"


def analyze(tmp_path: Path, text: str):
    (tmp_path / "job.log").write_text(text, encoding="utf-8")
    return nccllens.analyze(str(tmp_path))


def test_deepspeed_killing_its_workers_after_a_silent_death_is_a_suspected_oom(tmp_path):
    # https://github.com/deepspeedai/DeepSpeed/issues/3160 via fixtures/public/deepspeed_gptj_optimizer_init_killed_rc9
    text = (PUBLIC / "deepspeed_gptj_optimizer_init_killed_rc9" / "train.log").read_text(encoding="utf-8")
    report = analyze(tmp_path, text)
    top = report.findings[0]
    assert report.verdict.category == "host_oom"
    assert top.rule == "AN-SILENT-WORKER-DEATH" and top.severity == "warning" and top.confidence < 0.5
    assert "dmesg" in top.remediation


def test_torchrun_sigterming_its_workers_with_no_error_anywhere_is_a_suspected_oom(tmp_path):
    # https://github.com/hiyouga/LlamaFactory/issues/8836 via fixtures/public/sigterm_while_loading_shards
    text = (PUBLIC / "sigterm_while_loading_shards" / "train.log").read_text(encoding="utf-8")
    assert analyze(tmp_path, text).verdict.category == "host_oom"


def test_a_teardown_after_a_traceback_is_explained_by_the_traceback(tmp_path):
    # the same teardown, after a worker's own exception (the traceback's last line from
    # https://github.com/YuzheWangPKU/DiffPepBuilder/issues/19 via fixtures/public/diffpep_collate_stack)
    teardown = (PUBLIC / "sigterm_while_loading_shards" / "train.log").read_text(encoding="utf-8")
    error = (PUBLIC / "diffpep_collate_stack").glob("*.log")
    text = "".join(p.read_text(encoding="utf-8") for p in error) + teardown
    report = analyze(tmp_path, text)
    assert all(f.rule != "AN-SILENT-WORKER-DEATH" for f in report.findings)


def test_a_teardown_after_the_agent_lost_its_rendezvous_is_the_lost_rendezvous(tmp_path):
    # https://github.com/pytorch/pytorch/issues/67742 via fixtures/public/elastic_rdzv_host_agent_killed_peer_heartbeat:
    # the agent on the store's node was stopped; this node's agent could no longer send its keep-alive heartbeat
    # and stopped its worker. No worker died silently: the teardown has its reason on the line before
    text = (PUBLIC / "elastic_rdzv_host_agent_killed_peer_heartbeat" / "node_b_agent.log").read_text(encoding="utf-8")
    report = analyze(tmp_path, text)
    assert report.verdict.category == "peer_exited"
    assert report.findings[0].rule == "NL-RDZV-010"
    assert not [f for f in report.findings if f.rule == "AN-SILENT-WORKER-DEATH"]


def test_a_lost_heartbeat_alone_is_no_failure_report(tmp_path):
    # the same line without the teardown after it: a condition the job may have outlived (the rule is latent)
    text = (PUBLIC / "elastic_rdzv_host_agent_killed_peer_heartbeat" / "node_b_agent.log").read_text(encoding="utf-8")
    report = analyze(tmp_path, text.splitlines()[0] + "\n")
    assert report.verdict.finding is None
    assert [f.role for f in report.findings if f.rule == "NL-RDZV-010"] == ["context"]
