"""``run --resume``'s level evaluation (runs/runner.py ``finished_evaluation``): a level evaluated with the same task
options is read back; with other ones (``alce-asqa:at_most_citations=1`` over the default) it is evaluated again,
its results.json removed first, nothing of the old checkpoint reused."""

from __future__ import annotations

import json
from types import SimpleNamespace

from vericite.evaluate.checkpoint import AnswerCheckpoint
from vericite.registry import create
from vericite.runs.runner import finished_evaluation


def test_other_task_options_evaluate_a_finished_level_again(tmp_path):
    level = tmp_path / "level-0"
    (level / "eval").mkdir(parents=True)
    (level / "samples.jsonl").write_text(json.dumps({"id": "q0", "question": "?", "output": "a"}) + "\n", encoding="utf-8")
    cfg = SimpleNamespace(judge="fake", threads=None, resamples=10, seed=0)
    default = create("tasks", "alce-asqa")
    ck = finished_evaluation(level, cfg, default, None, resume=False)
    assert isinstance(ck, AnswerCheckpoint)
    ck.add(0, "q0", {"x": 1}, [])
    (level / "eval" / "results.json").write_text(json.dumps({"config": {"resamples": 10, "seed": 0}}), encoding="utf-8")
    (level / "eval" / "samples.jsonl").write_text("{}\n", encoding="utf-8")

    again = finished_evaluation(level, cfg, create("tasks", "alce-asqa:at_most_citations=3"), None, resume=True)  # the default spelled out
    assert isinstance(again, tuple)  # read back: (results, records)

    other = finished_evaluation(level, cfg, create("tasks", "alce-asqa:at_most_citations=1"), None, resume=True)
    assert isinstance(other, AnswerCheckpoint) and other.done == {}  # evaluated again from scratch
    assert not (level / "eval" / "results.json").exists()
    assert json.loads((level / "eval" / ".evaluate-answers.jsonl").read_text().splitlines()[0])["config"]["task_options"] == {"at_most_citations": 1}


def test_a_damaged_level_checkpoint_is_one_line_not_a_level_evaluated_again(tmp_path):
    import pytest

    from vericite.errors import VericiteError

    level = tmp_path / "level-0"
    (level / "eval").mkdir(parents=True)
    (level / "samples.jsonl").write_text(json.dumps({"id": "q0", "question": "?", "output": "a"}) + "\n", encoding="utf-8")
    cfg = SimpleNamespace(judge="fake", threads=None, resamples=10, seed=0)
    ck = finished_evaluation(level, cfg, create("tasks", "kalma"), None, resume=False)
    ck.add(0, "q0", {"x": 1}, [])
    path = level / "eval" / ".evaluate-answers.jsonl"
    path.write_text("{torn header\n" + path.read_text().split("\n", 1)[1], encoding="utf-8")
    before = path.read_text()
    with pytest.raises(VericiteError, match=r"not valid JSON.*delete it to evaluate this level's answers again \(the rest of the run resumes\)$"):
        finished_evaluation(level, cfg, create("tasks", "kalma"), None, resume=True)
    assert path.read_text() == before


def test_a_level_checkpoint_of_the_previous_header_is_read_back_when_it_is_the_same_evaluation(tmp_path, capsys):
    """A level evaluated before the header recorded the resolved task and the options (``alce``, no options) is
    read back for ``alce-asqa`` over the same (ASQA) answers, with the note that it is taken at the defaults; with
    other options it is evaluated again."""
    level = tmp_path / "level-0"
    (level / "eval").mkdir(parents=True)
    (level / "samples.jsonl").write_text(json.dumps({"id": "q0", "question": "?", "output": "a", "qa_pairs": [{"question": "q", "short_answers": ["a"]}]}) + "\n", encoding="utf-8")
    cfg = SimpleNamespace(judge="fake", threads=None, resamples=10, seed=0)
    ck = finished_evaluation(level, cfg, create("tasks", "alce-asqa"), None, resume=False)
    ck.add(0, "q0", {"x": 1}, [])
    path = level / "eval" / ".evaluate-answers.jsonl"
    head, rest = path.read_text().split("\n", 1)
    old = json.loads(head)
    old["checkpoint"], old["config"]["task"] = "evaluate-answers@1", "alce"
    del old["config"]["task_options"]
    path.write_text(json.dumps(old) + "\n" + rest, encoding="utf-8")
    (level / "eval" / "results.json").write_text(json.dumps({"config": {"resamples": 10, "seed": 0}}), encoding="utf-8")
    (level / "eval" / "samples.jsonl").write_text("{}\n", encoding="utf-8")

    assert isinstance(finished_evaluation(level, cfg, create("tasks", "alce-asqa"), None, resume=True), tuple)
    assert "resumed as made with alce-asqa's defaults" in capsys.readouterr().err
    other = finished_evaluation(level, cfg, create("tasks", "alce-asqa:at_most_citations=1"), None, resume=True)
    assert isinstance(other, AnswerCheckpoint) and other.done == {}


def test_a_level_whose_answers_grew_continues_and_one_whose_answers_changed_is_evaluated_again(tmp_path):
    """``run --resume`` over a level with more answers than it evaluated (a larger ``--limit``): its checkpoint is
    continued (the answers scored kept, the results.json of fewer answers removed); over a level whose answers
    scored changed (generated again), the level is evaluated again, as before."""
    from vericite.evaluate import item_from_record

    level = tmp_path / "level-0"
    (level / "eval").mkdir(parents=True)
    task = create("tasks", "kalma")
    cfg = SimpleNamespace(judge="fake", threads=None, resamples=10, seed=0)

    def answers(*outputs):
        records = [{"id": f"q{i}", "question": "?", "knowledge": [], "output": o} for i, o in enumerate(outputs)]
        (level / "samples.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
        return [item_from_record(r, n, task) for n, r in enumerate(records, 1)]

    items = answers("a")
    ck = finished_evaluation(level, cfg, task, None, resume=False, items=items)
    ck.add(0, "q0", {"x": 1}, [])
    (level / "eval" / "results.json").write_text(json.dumps({"config": {"resamples": 10, "seed": 0}}), encoding="utf-8")
    (level / "eval" / "samples.jsonl").write_text("{}\n", encoding="utf-8")
    assert isinstance(finished_evaluation(level, cfg, task, None, resume=True, items=items), tuple)  # the same answers: read back

    items = answers("a", "b")
    grown = finished_evaluation(level, cfg, task, None, resume=True, items=items)
    assert isinstance(grown, AnswerCheckpoint) and grown.done == {0: "q0"} and not (level / "eval" / "results.json").exists()

    items = answers("a, again", "b")
    changed = finished_evaluation(level, cfg, task, None, resume=True, items=items)
    assert isinstance(changed, AnswerCheckpoint) and changed.done == {}
