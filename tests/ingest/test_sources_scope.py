"""Which part of an input's path may name the machine that wrote it: the folder the user gave (its last part) and
what lies below it, or for a file given alone, its own folder and name."""

from __future__ import annotations

from nccllens.ingest.layout import hints_for
from nccllens.ingest.sources import iter_sources


def test_a_folder_given_keeps_its_own_name_and_drops_the_folders_above_it(tmp_path):
    (tmp_path / "ci19" / "gpu003" / "logs").mkdir(parents=True)
    (tmp_path / "ci19" / "gpu003" / "logs" / "train.log").write_text("step 1\n")
    (source,) = iter_sources([str(tmp_path / "ci19" / "gpu003")])
    assert source.scoped == "gpu003/logs/train.log"
    assert hints_for(source.scoped).host == "gpu003"
    (source,) = iter_sources([str(tmp_path / "ci19" / "gpu003" / "logs") + "/"])
    assert source.scoped == "logs/train.log" and hints_for(source.scoped).host is None


def test_a_file_given_alone_keeps_its_folder(tmp_path):
    (tmp_path / "node07").mkdir()
    (tmp_path / "node07" / "train.log").write_text("step 1\n")
    (source,) = iter_sources([str(tmp_path / "node07" / "train.log")])
    assert source.scoped == "node07/train.log" and hints_for(source.scoped).host == "node07"
