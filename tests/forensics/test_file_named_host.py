"""A file that names its own host ("Hostname: cn-251") names it even when none of its lines is an event."""

from __future__ import annotations

import shutil
from pathlib import Path

import nccllens

CASE = Path(__file__).resolve().parents[2] / "fixtures" / "public" / "returnn_4gpu_hang_gpu_device_handle_lost"


def test_the_host_a_log_names_places_a_cause_found_in_another_file(tmp_path: Path):
    # https://github.com/rwth-i6/returnn/issues/1484 via the case above: train.log says "Hostname: cn-251" and
    # holds no failure line; nvidia-smi.log (no host of its own) cannot get a device handle: the GPU's host is cn-251
    for name in ("train.log", "nvidia-smi.log", "ps.log"):
        shutil.copy(CASE / name, tmp_path / name)
    report = nccllens.analyze(str(tmp_path))
    assert report.job.hosts == ["cn-251"]
    assert report.findings[0].category == "gpu_hardware" and report.findings[0].hosts == ["cn-251"]


def test_a_lone_file_without_events_still_names_its_host(tmp_path: Path):
    shutil.copy(CASE / "train.log", tmp_path / "train.log")
    report = nccllens.analyze(str(tmp_path))
    assert report.job.hosts == ["cn-251"]
