"""NCCL's NVLink SHARP (NVLS) transport failing to set up multicast memory is the NVSwitch fabric's state."""

from __future__ import annotations

import shutil
from pathlib import Path

import nccllens

PUBLIC = Path(__file__).resolve().parents[2] / "fixtures/public"


def _report(tmp_path: Path, case: str):
    shutil.copytree(PUBLIC / case, tmp_path / "logs", ignore=shutil.ignore_patterns("expected.toml", "SOURCE.md"))
    return nccllens.analyze(str(tmp_path / "logs"))


def test_a_cuda_failure_in_the_nvls_transport_is_the_fabric_not_nccl(tmp_path):
    # source: https://github.com/NVIDIA/nccl-tests/issues/276 (maintainer: Fabric Manager restarted without a GPU
    # reset); the WARN names transport/nvls.cc and CUDA error 999, NCCL's own wrapper reads it as a CUDA failure
    report = _report(tmp_path, "nccltests_h200_2node_nvls_cuda999_fabric_manager_restart_no_gpu_reset")
    top = report.findings[0]
    assert (top.rule, top.category, top.hosts) == ("NL-GPU-023", "gpu_hardware", ["gpu47"])
    assert "NCCL_NVLS_ENABLE=0" in top.remediation
    assert not any(f.rule == "NL-NCCL-003" and not f.explained_by for f in report.findings)


def test_the_nvls_failure_read_from_a_framework_s_last_error(tmp_path):
    # source: https://github.com/pytorch/pytorch/pull/177472: only torch's DistBackendError with NCCL's last error
    top = _report(tmp_path, "pytorch_ci_h100_fabricmanager_nvls_bind").findings[0]
    assert (top.rule, top.category) == ("NL-GPU-024", "gpu_hardware")
