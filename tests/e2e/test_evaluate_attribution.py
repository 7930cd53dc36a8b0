"""``vericite evaluate --task kalma|alce --attribution-judge <four-class judge>`` end to end (issue 13 part 6): every
(sentence, citation) pair classified, the shares per answer (samples.jsonl) and per run (results.json, with n
and CIs), the HTML report showing both, and bad input answered in one line with a non-zero exit."""

from __future__ import annotations

import json

from click.testing import CliRunner

from vericite.cli.main import cli

KNOWLEDGE = [{"subject": "Q1", "subject_label": "Ann", "property": "place of birth", "value": "Rome"},
             {"subject": "Q1", "subject_label": "Ann", "property": "occupation", "value": "painter"}]  # fmt: skip
KALMA = [
    {"id": "a", "question": "Who is Ann?", "knowledge": KNOWLEDGE,
     "answer": "Ann's place of birth is Rome [Q1, place of birth: Rome]. Ann's occupation is not painter [Q1, occupation: painter]."},
    {"id": "b", "question": "Who is Ann?", "knowledge": KNOWLEDGE, "answer": "Bob likes tea [Q1, place of birth: Rome]."},
]  # fmt: skip
DOCS = [{"title": "Rome", "text": "Rome is the capital of Italy."}, {"title": "Paris", "text": "Paris is in France."}]
ALCE = {"args": {"dataset_name": "eli5"}, "data": [
    {"sample_id": "x1", "question": "What is Rome?", "docs": DOCS, "claims": ["Rome is a capital."],
     "output": "Rome is the capital of Italy [1]. Paris is not in France [2]."},
    {"sample_id": "x2", "question": "What is Paris?", "docs": DOCS, "claims": ["Paris is in France."], "output": "Paris is in France [1][2]."},
]}  # fmt: skip


def evaluate(*args):
    return CliRunner().invoke(cli, ["evaluate", "-q", "--no-cache", "--resamples", "50", *map(str, args)])


def read(out):
    res = json.loads((out / "results.json").read_text())
    return res, [json.loads(x) for x in (out / "samples.jsonl").read_text().splitlines()]


def test_kalma_answers_diagnosed_per_answer_and_per_run_and_reported(tmp_path):
    f = tmp_path / "in.jsonl"
    f.write_text("".join(json.dumps(x) + "\n" for x in KALMA), encoding="utf-8")
    r = evaluate("-i", f, "-o", tmp_path / "ev", "--attribution-judge", "fake-4class")
    assert r.exit_code == 0, r.output
    res, samples = read(tmp_path / "ev")
    m = res["metrics"]
    assert m["attribution_supportive"]["value"] == m["attribution_contradictory"]["value"] == m["attribution_irrelevant"]["value"] == 1 / 3
    assert m["attribution_insufficient"]["value"] == 0.0 and m["attribution_unparseable"]["value"] == 0.0
    assert m["attribution_supportive"]["n"] == 2 and m["attribution_supportive"]["ci"][0] is not None and m["attribution_supportive"]["judge"] == "fake-4class@1"
    assert res["metric_versions"]["attribution"] == "attribution@1" and res["judges"]["attribution"]["id"] == "fake-4class@1"
    assert res["counts"]["attribution_pairs"] == 3 and res["counts"]["attribution_unparseable"] == 0
    assert res["evaluation"]["attribution"]["pairs"] == 3 and res["config"]["attribution_judge"] == "fake-4class"
    assert m["alignment_micro"]["value"] is not None  # the task's own metrics still there, with their own judge
    assert samples[0]["scores"]["attribution"]["counts"]["supportive"] == 1 and samples[1]["scores"]["attribution"]["shares"]["irrelevant"] == 1.0
    four = [j for j in samples[0]["judgements"] if j["purpose"] == "attribution"]
    assert [j["label"] for j in four] == ["supportive", "contradictory"] and four[0]["evidence"] == "Ann's place of birth is Rome."
    assert four[1]["scores"] == {"supportive": 0.05, "insufficient": 0.05, "contradictory": 0.85, "irrelevant": 0.05}
    assert any(j["purpose"] == "alignment" for j in samples[0]["judgements"])
    r = CliRunner().invoke(cli, ["report", str(tmp_path / "ev")])
    assert r.exit_code == 0, r.output
    page = (tmp_path / "ev" / "report.html").read_text()
    assert "Attribution classes (four-class judge)" in page and "attribution_contradictory" in page  # per run
    assert page.count('class="share-bar"') == 2 and "contradictory: 50% (1)" in page and "irrelevant: 100% (1)" in page  # per answer


def test_alce_answers_diagnosed_through_the_cli(tmp_path):
    f = tmp_path / "result.json"
    f.write_text(json.dumps(ALCE), encoding="utf-8")
    r = evaluate("--task", "alce", "-i", f, "-o", tmp_path / "ev", "--attribution-judge", "fake-4class", "--json")
    assert r.exit_code == 0, r.output
    res, samples = read(tmp_path / "ev")
    m = res["metrics"]
    # x1: [1] supportive, [2] contradictory; x2: "Paris is in France." vs Rome's document (shares "is"): insufficient,
    # vs Paris's: supportive
    assert m["attribution_supportive"]["value"] == 0.5 and m["attribution_contradictory"]["value"] == 0.25 and m["attribution_insufficient"]["value"] == 0.25
    assert m["alce_citation_recall"]["value"] is None  # ALCE's own judge was not given: its metrics say so
    assert samples[1]["scores"]["attribution"]["pairs"] == 2
    doc = json.loads(r.output)
    assert doc["judges"]["attribution"]["id"] == "fake-4class@1" and doc["counts"]["attribution_pairs"] == 4
    # --metrics may ask for the diagnosis alone
    r = evaluate("--task", "alce", "-i", f, "-o", tmp_path / "only", "--attribution-judge", "fake-4class", "--metrics", "attribution_supportive")
    assert r.exit_code == 0, r.output
    assert list(read(tmp_path / "only")[0]["metrics"]) == ["attribution_supportive"]


def test_without_the_option_the_shares_are_not_computed_and_say_why(tmp_path):
    f = tmp_path / "in.jsonl"
    f.write_text(json.dumps(KALMA[0]) + "\n", encoding="utf-8")
    assert evaluate("-i", f, "-o", tmp_path / "ev").exit_code == 0
    res, samples = read(tmp_path / "ev")
    assert res["metrics"]["attribution_supportive"]["value"] is None and "--attribution-judge" in res["metrics"]["attribution_supportive"]["reason"]
    assert "attribution" not in res["metric_versions"] and "attribution" not in samples[0]["scores"]


def one_line(r):
    assert r.exit_code != 0, r.output
    assert r.exception is None or isinstance(r.exception, SystemExit), r.exception
    lines = [x for x in r.output.splitlines() if x.strip()]
    assert len(lines) == 1 and "Traceback" not in r.output, r.output
    return lines[0]


def test_bad_judges_and_a_task_without_the_diagnosis_get_one_clear_line(tmp_path):
    f = tmp_path / "in.jsonl"
    f.write_text(json.dumps(KALMA[0]) + "\n", encoding="utf-8")
    assert "llm5" in one_line(evaluate("-i", f, "-o", tmp_path / "a", "--attribution-judge", "llm5:x"))
    line = one_line(evaluate("-i", f, "-o", tmp_path / "b", "--attribution-judge", "fake"))
    assert "needs a four-class judge" in line and "fake@1" in line
    line = one_line(evaluate("-i", f, "-o", tmp_path / "c", "--attribution-judge", "triple"))
    assert "needs a four-class judge" in line and "triple@1" in line
    c = tmp_path / "c.jsonl"
    c.write_text(json.dumps({"id": "k", "query": "q", "knowledge": "Ann was born in Rome."}) + "\n", encoding="utf-8")
    line = one_line(evaluate("--task", "conner", "-i", c, "-o", tmp_path / "d", "--attribution-judge", "fake-4class"))
    assert "task conner has no four-class diagnosis" in line


def test_two_four_class_judges_on_the_same_answers_compare_pair_by_answer(tmp_path):
    f = tmp_path / "in.jsonl"
    f.write_text("".join(json.dumps(x) + "\n" for x in KALMA), encoding="utf-8")
    for name, judge in (("a", "fake-4class"), ("b", "autois:fake")):
        assert evaluate("-i", f, "-o", tmp_path / name, "--attribution-judge", judge).exit_code == 0
    r = CliRunner().invoke(cli, ["compare", str(tmp_path / "a"), str(tmp_path / "b"), "--json"])
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    assert doc["differences"] == [{"what": "four-class judge", "a": "fake-4class@1", "b": "autois:fake@1"}]
    rows = doc["metrics"]
    # autois reads every pair as supportive or irrelevant: the keyword judge supports the first pair only, so the
    # contradictory pair becomes irrelevant
    assert rows["attribution_irrelevant"]["b"] == 2 / 3 and rows["attribution_supportive"]["b"] == 1 / 3
    assert rows["attribution_contradictory"]["a"] == 1 / 3 and rows["attribution_contradictory"]["b"] == 0.0
