"""A setting only some tasks read (``--index``, ``--lm``, ``--relevance-model``: conner's; ``--geval-model``:
kalma's), given to a task that does not read it: one warning line on stderr, the evaluation goes on (exit 0) and
results.json records the setting as given; a task that reads it says nothing. ``vericite run`` the same for a
config's ``evidence_index``."""

from __future__ import annotations

import json

from click.testing import CliRunner

from vericite.cli.main import cli

KNOWLEDGE = [{"subject": "Q1", "property": "place of birth", "value": "Rome"}]
KALMA = {"id": "a", "question": "Where was she born?", "answer": "She was born in Rome [Q1, place of birth: Rome].", "knowledge": KNOWLEDGE}
ALCE = {"id": "q1", "question": "Who wrote it?", "docs": [{"title": "S", "text": "Paul Simon wrote it."}], "answers": [["Paul Simon"]],
        "output": "Paul Simon wrote it [1]."}  # fmt: skip
CONNER = {"id": "c", "query": "Who wrote Hamlet?", "knowledge": "Hamlet was written by Shakespeare.", "answer": "Shakespeare",
          "evidence": ["Shakespeare wrote Hamlet."]}  # fmt: skip


def write(tmp_path, line, name="in.jsonl"):
    p = tmp_path / name
    p.write_text(json.dumps(line) + "\n", encoding="utf-8")
    return p


def evaluate(tmp_path, line, *args):
    return CliRunner().invoke(cli, ["evaluate", "-i", str(write(tmp_path, line)), "-o", str(tmp_path / "ev"), "-q", "--resamples", "10", *args])


def warnings(r):
    return [x for x in r.stderr.splitlines() if "does not read" in x]


def test_index_given_to_kalma_is_one_warning_line_and_recorded(tmp_path):
    r = evaluate(tmp_path, KALMA, "--judge", "fake", "--index", str(tmp_path / "idx"))
    assert r.exit_code == 0, r.output
    assert warnings(r) == ["warning: task kalma does not read --index: it is ignored (recorded in results.json as given)"]
    assert "does not read" not in r.stdout  # stderr only: the table (or --format json) stays clean
    res = json.loads((tmp_path / "ev" / "results.json").read_text())
    assert res["config"]["evidence_index"] == str(tmp_path / "idx")


def test_several_ignored_settings_are_one_line_in_json_output_too(tmp_path):
    line = dict(ALCE)
    r = evaluate(tmp_path, line, "--task", "alce-short", "--index", "i", "--lm", "fake", "--geval-model", "fake", "--format", "json")
    assert r.exit_code == 0, r.output
    assert warnings(r) == ["warning: task alce-short does not read --index, --lm, --geval-model: they are ignored (recorded in results.json as given)"]
    json.loads(r.stdout)  # stdout is the JSON document alone


def test_a_task_that_reads_them_says_nothing(tmp_path):
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text(json.dumps({"id": "d1", "title": "Hamlet", "text": "Hamlet was written by Shakespeare."}) + "\n", encoding="utf-8")
    assert CliRunner().invoke(cli, ["docs", "index", str(corpus), "--index", str(tmp_path / "idx"), "-q"]).exit_code == 0
    r = evaluate(tmp_path, CONNER, "--task", "conner", "--judge", "fake-3way", "--lm", "fake", "--relevance-model", "fake", "--index", str(tmp_path / "idx"))
    assert r.exit_code == 0, r.output
    assert warnings(r) == []
    r = CliRunner().invoke(cli, ["evaluate", "-i", str(write(tmp_path, KALMA, "k.jsonl")), "-o", str(tmp_path / "k"), "-q", "--judge", "fake", "--geval-model", "fake", "--resamples", "10"])
    assert r.exit_code == 0 and warnings(r) == [], r.output
    # conner does not read --geval-model
    r = CliRunner().invoke(cli, ["evaluate", "--task", "conner", "-i", str(write(tmp_path, CONNER, "c.jsonl")), "-o", str(tmp_path / "c"), "-q",
                                 "--judge", "fake-3way", "--lm", "fake", "--relevance-model", "fake", "--geval-model", "fake", "--resamples", "10"])  # fmt: skip
    assert r.exit_code == 0 and warnings(r) == ["warning: task conner does not read --geval-model: it is ignored (recorded in results.json as given)"], r.output


def test_run_with_an_evidence_index_for_kalma_warns_once(tmp_path):
    data = tmp_path / "q.jsonl"
    data.write_text(json.dumps({"id": "q0", "question": "Where was she born?", "knowledge": KNOWLEDGE}) + "\n", encoding="utf-8")
    cfg = tmp_path / "c.yaml"
    cfg.write_text(f"name: t\ndataset: {data}\nmodel: fake\njudge: fake\nresamples: 5\nevidence_index: {tmp_path / 'idx'}\n", encoding="utf-8")
    r = CliRunner().invoke(cli, ["run", str(cfg), "-o", str(tmp_path / "run"), "--no-cache", "-q"])
    assert r.exit_code == 0, r.output
    assert warnings(r) == ["warning: task kalma does not read evidence_index: it is ignored (recorded in results.json as given)"]
    assert json.loads((tmp_path / "run" / "results.json").read_text())["config"]["evidence_index"] == str(tmp_path / "idx")
