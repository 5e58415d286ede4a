"""The failure every hostile input sits beside: a real CUDA OOM on rank 3, which must stay the top finding."""

from __future__ import annotations

from pathlib import Path

import nccllens

OOM = (b"[rank3]: Traceback (most recent call last):\n"
       b"[rank3]:   File \"/workspace/train.py\", line 10, in main\n"
       b"[rank3]:     loss.backward()\n"
       b"[rank3]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 3 has a total "
       b"capacity of 79.15 GiB of which 1.02 GiB is free.\n")


def plant(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "rank3.log").write_bytes(OOM)
    return folder


def assert_oom_on_rank3_first(report) -> None:
    assert report.findings, "no finding at all"
    top = report.findings[0]
    assert top.category == "gpu_oom" and 3 in top.ranks, (top.rule, top.title)


def analyze_planted(folder: Path, **options):
    """Analyze ``folder`` (with the OOM planted in it) and check the OOM still comes first."""
    report = nccllens.analyze([str(plant(folder))], **options)
    assert_oom_on_rank3_first(report)
    return report


def inputs_of(report) -> dict[str, object]:
    return {Path(i.path).name if "!" not in i.path else i.path.split("!", 1)[1]: i for i in report.inputs}
