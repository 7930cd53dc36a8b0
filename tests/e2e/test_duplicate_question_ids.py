"""A dataset that repeats a question id, given to ``vericite generate`` and ``vericite run``: the rule of ``vericite
evaluate`` for answers (only the first line of an id is kept, the others said with where the first is), one warning
line on stderr, and a resumed run that neither asks nor counts a question twice."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from vericite import registry
from vericite.cli.main import cli
from vericite.fakes.pipeline import FakeDataset
from vericite.types import Sample


def questions(tmp_path):
    rows = [{"id": f"q{i}", "question": f"What did P{i} do?", "knowledge": [{"subject": f"Q{i}", "subject_label": f"P{i}", "property": "occupation", "value": f"job{i}"}]} for i in range(3)]
    rows.insert(2, {**rows[0], "question": "Asked again?"})  # line 3 repeats q0 (line 1)
    rows.append({**rows[1], "question": "And once more?"})  # line 5 repeats q1 (line 2)
    p = tmp_path / "q.jsonl"
    p.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return p


def invoke(*args):
    return CliRunner().invoke(cli, [str(a) for a in args])


def lines(path):
    return [json.loads(x) for x in path.read_text().splitlines() if x.strip()]


WARNING = "warning: 2 questions of dataset {p} left out (2 duplicate ids: only the first question of an id is asked): {p}:3: duplicate id q0 (first at line 1); 1 more"


def test_generate_asks_the_first_question_of_a_repeated_id_once_and_says_so(tmp_path):
    data = questions(tmp_path)
    r = invoke("generate", "--dataset", data, "--model", "fake", "--out", tmp_path / "g", "-q")
    assert r.exit_code == 0, r.output
    assert WARNING.format(p=data) in r.stderr.splitlines() and "Traceback" not in r.output
    got = lines(tmp_path / "g" / "samples.jsonl")
    assert [(x["id"], x["question"]) for x in got] == [("q0", "What did P0 do?"), ("q1", "What did P1 do?"), ("q2", "What did P2 do?")]

    again = invoke("generate", "--dataset", data, "--model", "fake", "--out", tmp_path / "g", "-q", "--resume")
    assert again.exit_code == 0, again.output  # the first question of q0 is the one answered: nothing changed
    assert lines(tmp_path / "g" / "samples.jsonl") == got
    summary = json.loads((tmp_path / "g" / "manifest.json").read_text())["summary"]
    assert (summary["n_samples"], summary["n_done"], summary["unanswered"]) == (3, 3, 0)


def test_run_evaluates_each_question_once_and_counts_the_ids_left_out(tmp_path):
    data = questions(tmp_path)
    cfg = tmp_path / "c.yaml"
    cfg.write_text(f"name: t\ndataset: {data}\nmodel: fake\njudge: fake\n", encoding="utf-8")
    r = invoke("run", cfg, "--out", tmp_path / "r", "-q", "--format", "json")
    assert r.exit_code == 0, r.output
    assert WARNING.format(p=data) in r.stderr.splitlines()
    res = json.loads((tmp_path / "r" / "results.json").read_text())
    assert res["counts"]["samples"] == 3 and res["counts"]["duplicate_ids"] == 2
    assert [x["id"] for x in lines(tmp_path / "r" / "samples.jsonl")] == ["q0", "q1", "q2"]

    # a level folder holding an id twice (an older vericite answered a repeated id twice): evaluated once
    level = tmp_path / "r" / "level-base" / "samples.jsonl"
    first = lines(level)[0]
    with level.open("a", encoding="utf-8") as f:
        f.write(json.dumps({**first, "output": "Something else entirely."}) + "\n")
    again = invoke("run", cfg, "--out", tmp_path / "r", "-q", "--resume", "--format", "json")
    assert again.exit_code == 0, again.output
    res = json.loads((tmp_path / "r" / "results.json").read_text())
    assert res["counts"]["samples"] == 3 and [x["id"] for x in lines(tmp_path / "r" / "samples.jsonl")] == ["q0", "q1", "q2"]
    assert lines(tmp_path / "r" / "samples.jsonl")[0]["output"] == first["output"]  # the first line of q0 is the one kept


class Repeating(FakeDataset):
    name = "repeating"

    def load(self, **options):
        return [Sample(id="a", question="First?"), Sample(id="b", question="Second?"), Sample(id="a", question="Again?")]


@pytest.fixture
def repeating():
    registry.datasets.register("repeating", lambda arg, *, ctx, **o: Repeating(), replace=True)
    yield
    registry.datasets.unregister("repeating")


def test_a_plugin_dataset_that_repeats_an_id_is_held_to_the_same_rule(tmp_path, repeating):
    r = invoke("generate", "--method", "fake", "--model", "fake", "--dataset", "repeating", "--out", tmp_path / "g", "-q", "--no-cache")
    assert r.exit_code == 0, r.output
    assert (
        "warning: 1 question of dataset repeating left out (1 duplicate id: only the first question of an id is asked): "
        "question 3: duplicate id a (first at question 1)"
    ) in r.stderr.splitlines()
    assert [(x["id"], x["question"]) for x in lines(tmp_path / "g" / "samples.jsonl")] == [("a", "First?"), ("b", "Second?")]
