"""``vericite compare`` on ALCE evaluations (issue: compare computed nothing for ALCE): every ALCE metric rebuilt
from samples.jsonl equals results.json's on each sub-task, with and without a judge; the settings two runs must
share and the judge they may differ in; ``--same-questions`` for methods that answer from other passages (summ,
snippet); and the report of a comparison of two ALCE runs. Small ALCE files written here, the ``fake`` judge."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from vericite.cli.main import cli
from vericite.errors import VericiteError
from vericite.metrics.alce import SUBTASKS
from vericite.metrics.alce_family import AlceMetric
from vericite.metrics.base import point
from vericite.runs.compare import compare_runs, load_evaluated_run

DOCS = [
    {"title": "The Sound of Silence", "text": "The Sound of Silence is a song by Simon & Garfunkel, written by Paul Simon.", "summary": "A song.", "extraction": ""},
    {"title": "Paul Simon", "text": "Paul Simon is an American musician.", "summary": "", "extraction": ""},
    {"title": "Art Garfunkel", "text": "Art Garfunkel is an American singer.", "summary": "", "extraction": ""},
]
OUTPUTS_A = [
    "Paul Simon is an American musician [2]. The Sound of Silence is a song [1][2].",
    "Art Garfunkel is an American singer [3]. He sang [1].",
    "Paris, Lyon [1].",
    "Paul Simon is an American musician [1][2][3].",
    "Nobody knows.",
    "The Sound of Silence is a song [1].",
]
OUTPUTS_B = [
    "Paul Simon is an American musician [2].",
    "Art Garfunkel is an American singer [2][3].",
    "Paris, Lyon, Nice [2].",
    "Paul Simon is a musician [4].",
    "The Sound of Silence is a song by Simon [1]. Paul Simon is an American musician [2].",
    "Simon.",
]


def item(k: int, output: str, docs=DOCS) -> dict:
    return {
        "id": f"q{k}", "question": f"Question {k}: who wrote the sound of silence?", "docs": docs, "output": output,
        "qa_pairs": [{"question": "Who wrote it?", "short_answers": ["Paul Simon"]}, {"question": "Who sang it?", "short_answers": ["Garfunkel"]}],
        "annotations": [{"long_answer": "Paul Simon wrote The Sound of Silence."}, {"long_answer": "It was written by Paul Simon."}],
        "answer": "Paul Simon wrote it, and Simon & Garfunkel sang it.",
        "claims": ["Paul Simon is an American musician.", "Art Garfunkel is a singer."],
        "answers": [["Paris"], ["Lyon"], ["Nice"]] if k % 2 else [["Paul Simon", "Simon"]],
    }  # fmt: skip


def write(folder: Path, outputs, *, docs=DOCS, subtask: str = "asqa", edit=None) -> Path:
    items = [item(k, o, docs) for k, o in enumerate(outputs)]
    for it in items:
        for key in {"asqa": ("claims", "answers"), "eli5": ("qa_pairs", "answers"), "qampari": ("qa_pairs", "claims"), "short": ("qa_pairs", "claims")}[subtask]:
            it.pop(key)
        if subtask == "short":
            it["answers"] = [["Paul Simon", "Simon"]]
        if subtask == "qampari":
            it["answers"] = [["Paris"], ["Lyon"], ["Nice"]]
    if edit:
        edit(items)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "result.json"
    path.write_text(json.dumps({"data": items}), encoding="utf-8")
    return path


def evaluate(tmp: Path, name: str, outputs, *, task: str = "alce-asqa", judge: str | None = "fake", docs=DOCS, edit=None, metrics=None) -> Path:
    src = write(tmp / f"{name}-in", outputs, docs=docs, subtask=task.split("-")[1].split(":")[0], edit=edit)
    out = tmp / name
    args = ["evaluate", "-q", "--resamples", "50", "--task", task, "--input", str(src), "--out", str(out)]
    if judge:
        args += ["--judge", judge]
    if metrics:
        args += ["--metrics", metrics]
    r = CliRunner().invoke(cli, args)
    assert r.exit_code == 0, r.output
    return out


def records(folder: Path) -> list[dict]:
    return [json.loads(line) for line in (folder / "samples.jsonl").read_text().splitlines()]


def compare(*args) -> object:
    return CliRunner().invoke(cli, ["compare", "--resamples", "200", *map(str, args)])


@pytest.mark.parametrize("task", ["alce-asqa", "alce-eli5", "alce-qampari", "alce-short"])
@pytest.mark.parametrize("judge", ["fake", None])
def test_every_alce_metric_rebuilt_from_samples_is_results_json_exactly(tmp_path, task, judge):
    for name, outputs in (("a", OUTPUTS_A), ("b", OUTPUTS_B)):
        out = evaluate(tmp_path, name, outputs, task=task, judge=judge)
        res = json.loads((out / "results.json").read_text())
        recs = records(out)
        cs = AlceMetric.statistics_from_records(recs)
        subtask = task.split("-")[1]
        assert set(cs.statistics) | set(cs.reasons) >= set(SUBTASKS[subtask])
        computed = 0
        for m in SUBTASKS[subtask]:
            want = res["metrics"][m]["value"]
            got = point(cs.statistics[m], len(recs)) if m in cs.live else None
            assert got == want, (m, got, want)  # exactly, not approximately
            assert cs.ns[m] == res["metrics"][m]["n"], m
            computed += want is not None
            if want is None:
                assert cs.reasons[m] and "not computed" != cs.reasons[m], m
        assert computed >= (4 if judge else 2)
        if judge:
            assert res["metrics"]["alce_citation_f1"]["value"] is not None
        else:
            assert cs.reasons["alce_citation_recall"].startswith("no citation scores in samples.jsonl")


def test_citation_f1_is_the_f1_of_the_corpus_means_and_answers_without_sentences_are_left_out(tmp_path):
    out = evaluate(tmp_path, "a", [*OUTPUTS_A[:5], ""])  # the last answer has no sentence: left out of both means
    recs = records(out)
    cs = AlceMetric.statistics_from_records(recs)
    per = [r["scores"]["alce"] for r in recs]
    rec = [p["citation_recall"] for p in per if p.get("citation_recall") is not None]
    prec = [p["citation_precision"] for p in per if p.get("citation_precision") is not None]
    assert len(rec) == 5 and cs.ns["alce_citation_recall"] == 5
    r, p = sum(rec) / len(rec), sum(prec) / len(prec)
    assert point(cs.statistics["alce_citation_f1"], len(recs)) == pytest.approx(2 * p * r / (p + r))
    assert point(cs.statistics["output_length"], len(recs)) == pytest.approx(sum(x["output_length"] for x in per) / 6)


def test_compare_two_alce_runs_pairs_every_metric(tmp_path):
    a, b = evaluate(tmp_path, "a", OUTPUTS_A), evaluate(tmp_path, "b", OUTPUTS_B)
    r = compare(a, b, "--json")
    assert r.exit_code == 0, r.output
    cmp = json.loads(r.output)
    assert cmp["task"] == "alce-asqa"
    res_a, res_b = (json.loads((x / "results.json").read_text()) for x in (a, b))
    assert list(cmp["metrics"]) == list(res_a["metrics"])  # the sub-task's metrics (and attribution's), no other
    for m in ("alce_citation_recall", "alce_citation_precision", "alce_citation_f1", "str_em", "str_hit", "rouge_lsum", "output_length"):
        e = cmp["metrics"][m]
        assert e["reason"] is None and e["ci"] is not None, m
        assert e["a"] == pytest.approx(res_a["metrics"][m]["value"]) and e["b"] == pytest.approx(res_b["metrics"][m]["value"]), m
    assert cmp["metrics"]["qa_em"]["reason"].startswith("not computed in A and B: no qa_em score in samples.jsonl (ALCE's QA model runs only when asked")
    assert cmp["differences"] == []
    assert cmp["a"]["evaluation"] == {"alce.subtask": "asqa", "alce.at_most_citations": 3, "alce.qa_model": None, "alce.reader": None, "alce.reader_prompt": None}
    # the table says the same
    r = compare(a, b)
    assert r.exit_code == 0 and "alce_citation_recall" in r.output and "its metric family cannot" not in r.output


def test_another_judge_is_allowed_and_listed_but_other_definitions_are_refused(tmp_path):
    a = evaluate(tmp_path, "a", OUTPUTS_A)
    other_judge = evaluate(tmp_path, "j", OUTPUTS_A, judge="fake:other")
    cmp, _ = compare_runs(load_evaluated_run(a), load_evaluated_run(other_judge), resamples=0)
    assert cmp["differences"] == [{"what": "citation / claims judge", "a": "fake@1", "b": "fake:other@1"}]
    assert cmp["a"]["citations_judge"] == "fake@1"
    two = evaluate(tmp_path, "two", OUTPUTS_A, task="alce-asqa:at_most_citations=1")
    r = compare(a, two)
    assert r.exit_code == 2 and "scored differently" in r.output and "alce.at_most_citations 3 vs 1" in r.output


def test_the_qa_model_is_compared_only_when_both_runs_ran_it(tmp_path):
    a, b = evaluate(tmp_path, "a", OUTPUTS_A), evaluate(tmp_path, "b", OUTPUTS_B)

    def with_qa(folder: Path, model: str | None) -> Path:
        res = json.loads((folder / "results.json").read_text())
        res["evaluation"]["alce"]["qa_model"] = model
        (folder / "results.json").write_text(json.dumps(res))
        return folder

    with_qa(a, "gaotianyu1350/roberta-large-squad")
    compare_runs(load_evaluated_run(a), load_evaluated_run(b), resamples=0)  # B did not run it: its QA metrics are n/c
    with_qa(b, "/models/another-squad")
    with pytest.raises(VericiteError, match="alce.qa_model"):
        compare_runs(load_evaluated_run(a), load_evaluated_run(b), resamples=0)


def test_a_changed_per_answer_score_is_caught(tmp_path):
    a = evaluate(tmp_path, "a", OUTPUTS_A)
    recs = records(a)
    recs[0]["scores"]["alce"]["citation_precision"] = 0.5 if recs[0]["scores"]["alce"]["citation_precision"] != 0.5 else 0.25
    (a / "samples.jsonl").write_text("".join(json.dumps(r) + "\n" for r in recs))
    r = compare(a, a)
    assert r.exit_code == 2 and "samples.jsonl gives alce_citation_precision" in r.output


def test_same_questions_pairs_runs_answered_from_other_passages(tmp_path):
    a = evaluate(tmp_path, "vanilla", OUTPUTS_A)
    summ_docs = [DOCS[1], DOCS[2], {"title": "Simon & Garfunkel", "text": "Simon & Garfunkel sang The Sound of Silence."}]
    # like ALCE's summ: other passages for some questions (here the odd ones), the same question
    b = evaluate(tmp_path, "summ", OUTPUTS_B, edit=lambda items: [it.update(docs=summ_docs) for it in items if int(it["id"][1:]) % 2])
    r = compare(a, b)
    assert r.exit_code == 2 and "its passages differs" in r.output and "--same-questions" in r.output  # strict by default
    out = tmp_path / "cmp"
    r = compare(a, b, "--same-questions", "--out", out)
    assert r.exit_code == 0, r.output
    assert "--same-questions: paired by id and question; the passages differ in 3 of them" in r.output
    # the metrics neither run computed, for one reason, are one line under the table (five attribution_* rows said
    # nothing on every ALCE comparison), in the terminal and in markdown; compare.json keeps them as they were
    four = "attribution_supportive, attribution_insufficient, attribution_contradictory, attribution_irrelevant, attribution_unparseable"
    folded = f"not computed in A and B: {four} (no four-class judge (--attribution-judge"
    qa = "not computed in A and B: qa_em, qa_f1, qa_hit (no <metric> score in samples.jsonl (ALCE's QA model runs only when asked"
    assert r.output.count(folded) == 1 and r.output.count(qa) == 1 and "n/c" not in r.output
    assert not [x for x in r.output.splitlines() if x.strip().startswith(("attribution_", "qa_"))]
    md = compare(a, b, "--same-questions", "--format", "markdown")
    assert md.exit_code == 0, md.output
    assert "- 6 paired samples (--same-questions: paired by id and question; the passages differ in 3 of them)" in md.output
    assert f"- {folded}" in md.output and f"- {qa.replace('<metric>', '&lt;metric&gt;')}" in md.output
    assert "| alce_citation_recall |" in md.output and "| attribution_" not in md.output and "| qa_em" not in md.output
    cmp = json.loads((out / "compare.json").read_text())
    assert cmp["samples"]["same_questions"] is True and cmp["samples"]["evidence"] == "passages" and cmp["samples"]["evidence_differs"] == 3
    assert cmp["metrics"]["alce_citation_recall"]["diff"] is not None
    assert cmp["metrics"]["attribution_supportive"]["reason"].startswith("not computed in A and B: no four-class judge")
    assert cmp["metrics"]["qa_f1"]["reason"].startswith("not computed in A and B: no qa_f1 score in samples.jsonl")
    rows = [json.loads(x) for x in (out / "compare_samples.jsonl").read_text().splitlines()]
    assert [row["evidence_differs"] for row in rows] == [False, True, False, True, False, True]
    # each answer's citations were judged against the passages it was given: the values are each run's own
    res_b = json.loads((b / "results.json").read_text())
    assert cmp["metrics"]["alce_citation_recall"]["b"] == pytest.approx(res_b["metrics"]["alce_citation_recall"]["value"])
    # the report of the comparison renders, with the note and the ALCE metrics
    r = CliRunner().invoke(cli, ["report", str(out)])
    assert r.exit_code == 0, r.output
    page = (out / "report.html").read_text()
    assert 'id="same-questions"' in page and "the passages differ in 3 of them" in page
    assert "alce_citation_recall" in page and "rouge_lsum" in page and "Citations (ALCE)" in page
    # a question that differs is still refused
    c = evaluate(tmp_path, "other-q", OUTPUTS_B, edit=lambda items: items[0].update(question="Another question?"))
    r = compare(a, c, "--same-questions")
    assert r.exit_code == 2 and "its question differs" in r.output and "--same-questions pairs" not in r.output


def test_report_of_a_strict_alce_comparison(tmp_path):
    a, b = evaluate(tmp_path, "a", OUTPUTS_A, task="alce-eli5"), evaluate(tmp_path, "b", OUTPUTS_B, task="alce-eli5")
    out = tmp_path / "cmp"
    assert compare(a, b, "--out", out).exit_code == 0
    r = CliRunner().invoke(cli, ["report", str(out)])
    assert r.exit_code == 0, r.output
    page = (out / "report.html").read_text()
    assert "claims_nli" in page and "alce_citation_f1" in page and 'id="same-questions"' not in page
    assert "str_em" not in page  # not an ELI5 metric: not listed


def test_a_named_sub_task_the_fields_would_not_give_is_rebuilt_too(tmp_path):
    """--task alce-qampari on answers of one cluster each (which the fields alone read as a short-answer set)."""
    out = evaluate(tmp_path, "a", OUTPUTS_A, task="alce-qampari", edit=lambda items: [it.update(answers=[["Paris", "Lyon"]]) for it in items])
    res = json.loads((out / "results.json").read_text())
    assert res["metrics"]["qampari_f1"]["value"] is not None
    load_evaluated_run(out)  # the values rebuilt are results.json's (else: refused as changed)
    cs = AlceMetric.statistics_from_records(records(out))
    assert point(cs.statistics["qampari_f1"], 6) == res["metrics"]["qampari_f1"]["value"]


def test_qa_metrics_are_rebuilt_and_the_qa_model_recorded_when_it_ran(monkeypatch):
    """ALCE's QA model replaced by one that answers "Paul Simon" to every sub-question."""
    import vericite.metrics.alce_qa as alce_qa
    from types import SimpleNamespace

    from vericite.types import QAPair, Sample

    class Answers:
        def __init__(self, model):
            self.id = model

        def answer(self, question, context):
            return "Paul Simon" if "Simon" in context else ""

    monkeypatch.setattr(alce_qa, "QAModel", Answers)
    monkeypatch.setattr(alce_qa, "qa_unavailable", lambda model: None)
    qa = [QAPair("Who wrote it?", ("Paul Simon",)), QAPair("Who sang it?", ("Garfunkel",))]
    samples = [Sample(f"q{k}", "Who wrote it?", passages=[], qa_pairs=qa) for k in range(4)]
    answers = [SimpleNamespace(raw=t) for t in ("Paul Simon did.", "Nobody.", "Simon and Garfunkel.", "")]
    metric = AlceMetric(subtask="asqa", metrics=["qa_em", "qa_f1", "qa_hit", "str_em"], qa_model="/models/squad")
    run = metric.score_answers(samples, answers)
    assert run.settings["alce"]["qa_model"] == "/models/squad"
    recs = [{"id": s.id, "qa_pairs": [q.to_dict() for q in qa], "scores": sc} for s, sc in zip(samples, run.scores)]
    cs = AlceMetric.statistics_from_records(json.loads(json.dumps(recs)))
    for m in ("qa_em", "qa_f1", "qa_hit", "str_em"):
        assert point(cs.statistics[m], 4) == run.results[m].value, m
    assert run.results["qa_em"].value == pytest.approx(0.25)  # "Paul Simon" found in two outputs, one sub-question of two
    assert "qa_model" not in AlceMetric(subtask="asqa", metrics=["str_em"]).score_answers(samples, answers).settings["alce"]
