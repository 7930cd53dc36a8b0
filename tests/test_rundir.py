import json

import pytest

from vericite.errors import VericiteError
from vericite.runs.rundir import RunDir, read_jsonl


def test_append_and_resume(tmp_path):
    out = tmp_path / "r"
    run = RunDir.open(out, {"config": {"model": "fake", "limit": 2}})
    run.append({"id": "a", "x": 1})
    run.append({"id": "b", "x": 2})
    again = RunDir.open(out, {"config": {"model": "fake", "limit": 5}}, resume=True)
    assert again.done_ids == {"a", "b"}
    assert json.loads((out / "manifest.json").read_text())["resumed"]


def test_partial_last_line_is_cut_on_resume(tmp_path):
    out = tmp_path / "r"
    run = RunDir.open(out, {"config": {}})
    run.append({"id": "a"})
    with open(out / "samples.jsonl", "a") as f:
        f.write('{"id": "b", "half')  # a crash mid-write
    again = RunDir.open(out, {"config": {}}, resume=True)
    assert again.done_ids == {"a"}
    again.append({"id": "b"})
    assert [r["id"] for r in read_jsonl(out / "samples.jsonl")] == ["a", "b"]


def test_existing_run_needs_resume(tmp_path):
    RunDir.open(tmp_path / "r", {"config": {}})
    with pytest.raises(VericiteError, match="--resume"):
        RunDir.open(tmp_path / "r", {"config": {}})


def test_resume_refuses_a_different_configuration(tmp_path):
    RunDir.open(tmp_path / "r", {"config": {"model": "a"}})
    with pytest.raises(VericiteError, match="model"):
        RunDir.open(tmp_path / "r", {"config": {"model": "b"}}, resume=True)


def test_resume_of_nothing(tmp_path):
    with pytest.raises(VericiteError, match="nothing to resume"):
        RunDir.open(tmp_path / "missing", {"config": {}}, resume=True)


def test_failures_are_kept_apart_and_retried(tmp_path):
    run = RunDir.open(tmp_path / "r", {"config": {}})
    run.fail("x", "server down")
    assert "x" not in RunDir.open(tmp_path / "r", {"config": {}}, resume=True).done_ids
    assert list(read_jsonl(tmp_path / "r" / "errors.jsonl"))[0]["error"] == "server down"
