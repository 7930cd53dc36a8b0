"""``--dataset biokalma-mini`` (issue 12's ``generate --method vtg --dataset biokalma-mini --store runs/kg``): the
checkout's datasets/biokalma-mini.jsonl by name, with its minimum knowledge sets, from any folder."""

from __future__ import annotations

import json

import pytest

from vericite.datasets import load_samples
from vericite.errors import DataError


def test_biokalma_mini_by_name_from_any_folder(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    samples = load_samples("biokalma-mini")
    assert len(samples) == 100
    assert all(s.gold for s in samples)  # the minimum knowledge sets KaLMA's precision and recall need
    general = load_samples("biokalma-mini", phrasing="general")
    assert [s.id for s in general] == [s.id for s in samples]
    assert general[0].question != samples[0].question


def test_biokalma_mini_with_a_file_and_a_missing_one(tmp_path):
    f = tmp_path / "mini.jsonl"
    f.write_text(json.dumps({"id": "a", "question": "Who?", "knowledge": []}) + "\n")
    assert [s.id for s in load_samples(f"biokalma-mini:{f}")] == ["a"]
    with pytest.raises(DataError, match="not found"):
        load_samples(f"biokalma-mini:{tmp_path / 'none.jsonl'}")


def test_a_registered_name_with_a_jsonl_file_is_the_registered_loader(tmp_path):
    f = tmp_path / "q.jsonl"
    f.write_text(json.dumps({"id": "b", "question": "What?"}) + "\n")
    assert [s.id for s in load_samples(f"jsonl:{f}")] == ["b"]  # was read as a file named "jsonl:..." (not found)
    assert [s.id for s in load_samples(str(f))] == ["b"]
