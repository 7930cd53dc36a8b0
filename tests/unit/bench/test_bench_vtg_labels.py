"""benchmarks/bench_vtg.py names an experiment's level folder by the method its manifest records."""

from __future__ import annotations

import json

from tests.support.paths import load_script


def bench():
    return load_script("benchmarks/bench_vtg.py")


def test_a_level_folder_is_named_by_its_method_and_any_other_by_its_folder(tmp_path):
    label = bench().label
    level = tmp_path / "level-3"
    level.mkdir()
    (level / "manifest.json").write_text(json.dumps({"config": {"method": "rerank"}, "method": "rerank@1"}))
    assert label(level) == "rerank/level-3"
    bare = tmp_path / "level-0"
    bare.mkdir()  # no manifest (or an unreadable one): the folder's name
    assert label(bare) == "level-0"
    (bare / "manifest.json").write_text("{not json")
    assert label(bare) == "level-0"
    other = tmp_path / "eli5-rerank"
    other.mkdir()
    (other / "manifest.json").write_text(json.dumps({"config": {"method": "rerank"}}))
    assert label(other) == "eli5-rerank"
