import json

import pytest

from vericite.errors import VericiteError
from vericite.jsonl import read_appended as read_jsonl
from vericite.runs.rundir import RunDir


def test_append_and_resume(tmp_path):
    out = tmp_path / "r"
    run = RunDir.open(out, {"config": {"model": "fake", "limit": 2}})
    run.append({"id": "a", "x": 1})
    run.append({"id": "b", "x": 2})
    run.close()  # a folder has one writer at a time (tests/e2e/test_run_safety.py)
    again = RunDir.open(out, {"config": {"model": "fake", "limit": 5}}, resume=True)
    assert again.done_ids == {"a", "b"}
    assert json.loads((out / "manifest.json").read_text())["resumed"]


def test_partial_last_line_is_cut_on_resume(tmp_path):
    out = tmp_path / "r"
    run = RunDir.open(out, {"config": {}})
    run.append({"id": "a"})
    with open(out / "samples.jsonl", "a") as f:
        f.write('{"id": "b", "half')  # a crash mid-write
    run.close()
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
    run.close()
    assert "x" not in RunDir.open(tmp_path / "r", {"config": {}}, resume=True).done_ids
    assert list(read_jsonl(tmp_path / "r" / "errors.jsonl"))[0]["error"] == "server down"


def test_progress_without_a_terminal_prints_throttled_plain_lines(capsys):
    from vericite.progress import progress_bar

    with progress_bar(4, "answering", completed=1, interval=0.0) as advance:  # every step is past the interval
        advance()
        advance(2)
    lines = capsys.readouterr().err.strip().splitlines()
    assert lines[0].startswith("answering: 2/4 after 0:00, about")
    assert lines[1].startswith("answering: 4/4 after")
    assert lines[-1].startswith("answering: 4/4")  # the closing line
    with progress_bar(3, "quick", interval=3600.0) as advance:  # short work: nothing
        advance(3)
    with progress_bar(3, "off", enabled=False, interval=0.0) as advance:
        advance(3)
    assert capsys.readouterr().err == ""


def test_resume_compares_what_the_method_recorded(tmp_path):
    """Besides the config, what the method records (its versioned id, prompt files...) must be the same; only the
    keys both manifests hold are compared, a tuple is the list the manifest holds, and the bookkeeping may differ."""
    made = {"config": {"model": "a"}, "method": "summ@1", "prompt_files": {"asqa": {"sha256": "x"}}, "params": {"stop": ("\n",)}, "n_samples": 3}
    RunDir.open(tmp_path / "r", made).close()
    with pytest.raises(VericiteError, match=r"made otherwise \(method: 'summ@1' -> 'summ@2'\)"):
        RunDir.open(tmp_path / "r", {**made, "method": "summ@2"}, resume=True)
    with pytest.raises(VericiteError, match=r"prompt_files\.asqa\.sha256: 'x' -> 'y'"):
        RunDir.open(tmp_path / "r", {**made, "prompt_files": {"asqa": {"sha256": "y"}}}, resume=True)
    with pytest.raises(VericiteError, match=r"params\.stop\.0"):
        RunDir.open(tmp_path / "r", {**made, "params": {"stop": ("\n\n",)}}, resume=True)
    # a prompt file of a sub-task not met before, a key the folder's vericite did not record, another n_samples
    RunDir.open(tmp_path / "r", {**made, "prompt_files": {"asqa": {"sha256": "x"}, "eli5": {"sha256": "z"}}, "retriever": None, "n_samples": 9}, resume=True).close()


def test_a_config_key_the_folder_lacks_is_no_difference_at_its_default(tmp_path):
    RunDir.open(tmp_path / "r", {"config": {"model": "a"}}).close()
    with pytest.raises(VericiteError, match="batch"):
        RunDir.open(tmp_path / "r", {"config": {"model": "a", "batch": True}}, resume=True, defaults={"batch": False})
    with pytest.raises(VericiteError, match="batch"):  # without its default, a new key differs
        RunDir.open(tmp_path / "r", {"config": {"model": "a", "batch": False}}, resume=True)
    RunDir.open(tmp_path / "r", {"config": {"model": "a", "batch": False}}, resume=True, defaults={"batch": False}).close()


def test_a_refusal_says_not_given_for_an_option_a_config_does_not_hold(tmp_path):
    # an option recorded only when given: not given, not None (with what the folder ran, from its manifest)
    RunDir.open(tmp_path / "r", {"config": {"model": "a"}, "draw": "all"})
    defaults = {"model": None, "draw": None}
    with pytest.raises(VericiteError, match=r"\(draw: not given \(the folder ran with 'all'\) -> 'some'\)"):
        RunDir.open(tmp_path / "r", {"config": {"model": "a", "draw": "some"}, "draw": "some"}, resume=True, defaults=defaults)
    RunDir.open(tmp_path / "s", {"config": {"model": "a", "draw": "some"}})
    with pytest.raises(VericiteError, match=r"\(draw: 'some' -> not given\)"):
        RunDir.open(tmp_path / "s", {"config": {"model": "a"}}, resume=True, defaults=defaults)
