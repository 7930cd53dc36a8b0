"""``vericite evaluate --task alce`` end to end on small hand-written ALCE files: the commands of issue 11, the table
judge and its failures, run folders and JSONL, bad input, and the report's passage citations."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from vericite.cli.main import cli
from tests.support.alce import verdicts

DOCS = [
    {"title": "The Sound of Silence", "text": "The Sound of Silence is a song by Simon & Garfunkel, written by Paul Simon.", "summary": "A song.", "extraction": ""},
    {"title": "Paul Simon", "text": "Paul Simon is an American musician.", "summary": "", "extraction": ""},
]
ITEMS = [
    {
        "sample_id": "q1", "question": "Who wrote the sound of silence?", "docs": DOCS,
        "qa_pairs": [{"question": "Who wrote it?", "short_answers": ["Paul Simon"]}, {"question": "Who sang it?", "short_answers": ["Garfunkel"]}],
        "annotations": [{"long_answer": "Paul Simon wrote The Sound of Silence."}, {"long_answer": "It was written by Paul Simon."}],
        "answer": "Paul Simon wrote it.",
        "output": "Paul Simon wrote The Sound of Silence [1][2]. It was a hit [3].\nignored",
    },
    {
        "sample_id": "q2", "question": "Who is Paul Simon?", "docs": DOCS,
        "qa_pairs": [{"question": "Who is he?", "short_answers": ["a musician"]}],
        "annotations": [{"long_answer": "An American musician."}, {"long_answer": "A singer."}],
        "output": "Paul Simon is an American musician [2].",
    },
]


VERDICTS = verdicts(DOCS)


def files(tmp_path, items=ITEMS, verdicts=VERDICTS):
    result = tmp_path / "result.json"
    result.write_text(json.dumps({"args": {"dataset_name": "asqa", "ndoc": 2}, "data": items}), encoding="utf-8")
    table = tmp_path / "verdicts.jsonl"
    table.write_text("".join(json.dumps(v) + "\n" for v in verdicts), encoding="utf-8")
    return result, table


def evaluate(*args):
    return CliRunner().invoke(cli, ["evaluate", "-q", "--resamples", "50", *map(str, args)])


def results(out):
    return json.loads((out / "results.json").read_text())


def test_the_judge_free_command_of_the_issue(tmp_path):
    result, _ = files(tmp_path)
    out = tmp_path / "e3"
    r = evaluate("--task", "alce", "--input", result, "--metrics", "str_em,str_hit,output_length,rouge_lsum", "--out", out)
    assert r.exit_code == 0, r.output
    res = results(out)
    assert list(res["metrics"]) == ["output_length", "str_em", "str_hit", "rouge_lsum"]
    m = {k: v["value"] for k, v in res["metrics"].items()}
    # outputs cut at the newline, citations removed: 11 and 6 words; STR-EM: "Paul Simon" found, "Garfunkel" not (1/2),
    # "a musician" normalised to "musician" found (1/1): 0.75; only q2 has all
    assert m["output_length"] == 8.5 and m["str_em"] == 0.75 and m["str_hit"] == 0.5
    assert 0 < m["rouge_lsum"] < 1 and res["metric_versions"] == {"alce": "alce@1"}
    assert res["config"]["task"] == "alce" and res["config"]["metrics"] == ["str_em", "str_hit", "output_length", "rouge_lsum"]
    assert res["evaluation"]["alce"]["subtask"] == "asqa" and res["judges"] == {}
    rec = [json.loads(x) for x in (out / "samples.jsonl").read_text().splitlines()]
    assert rec[0]["id"] == "q1" and rec[0]["output"].endswith("ignored") and rec[0]["answer"]["parser"] == "alce-citation@1"
    assert len(rec[0]["passages"]) == 2 and "docs" not in rec[0] and rec[0]["meta"]["long_answers"][1] == "It was written by Paul Simon."


def test_the_table_judge_command_of_the_issue(tmp_path):
    result, table = files(tmp_path)
    out = tmp_path / "e2"
    r = evaluate("--task", "alce", "--input", result, "--judge", f"table:{table}", "--out", out, "--json")
    assert r.exit_code == 0, r.output
    res = results(out)
    m = {k: v["value"] for k, v in res["metrics"].items()}
    # q1: [1][2] entailed, [1] alone yes, [2] alone no and [1] without it yes -> [2] not needed; [3] out of range:
    # recall 1/2, precision 1/2. q2: [2] entails: 1 and 1
    assert m["alce_citation_recall"] == 0.75 and m["alce_citation_precision"] == 0.75 and m["alce_citation_f1"] == 0.75
    assert res["counts"]["citation_status"] == {"ok": 3, "unknown_source": 1} and res["counts"]["failed_judgements"] == 0
    assert res["judges"]["citations"]["id"].startswith("table:")
    ev = res["evaluation"]["alce"]
    assert ev["judge_calls"] == 4 and ev["alce_judge_calls"] == 5  # ALCE asks [1] alone... and [1] again as "the others"


def test_a_pair_missing_from_the_table_fails_the_command(tmp_path):
    result, table = files(tmp_path, verdicts=VERDICTS[:3])
    r = evaluate("--task", "alce", "--input", result, "--judge", f"table:{table}", "--out", tmp_path / "ev")
    assert r.exit_code == 1 and "FAIL 1 judgements failed" in r.output and "Traceback" not in r.output
    res = results(tmp_path / "ev")
    assert res["counts"]["failed_judgements"] == 1
    assert res["metrics"]["alce_citation_recall"]["n"] == 1 and res["metrics"]["alce_citation_recall"]["details"]["answers_unjudged"] == 1


def test_a_run_folder_and_jsonl_are_read_too(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    lines = [{"id": it["sample_id"], "question": it["question"], "passages": DOCS, "qa_pairs": it["qa_pairs"], "output": it["output"],
              "answer": {"raw": it["output"], "sentences": []}} for it in ITEMS]  # fmt: skip
    (run / "samples.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    r = evaluate("--task", "alce-asqa", "--input", run, "--metrics", "str_em", "--out", tmp_path / "ev")
    assert r.exit_code == 0, r.output
    assert results(tmp_path / "ev")["metrics"]["str_em"]["value"] == 0.75
    # ALCE items as JSONL; one without an output: its "answer" is ALCE's reference, never scored as the output
    jl = tmp_path / "items.jsonl"
    no_output = {k: v for k, v in ITEMS[1].items() if k != "output"} | {"answer": "A musician."}
    jl.write_text(json.dumps(ITEMS[0]) + "\n" + json.dumps(no_output) + "\n", encoding="utf-8")
    r = evaluate("--task", "alce", "--input", jl, "--metrics", "str_em", "--out", tmp_path / "ev2")
    assert r.exit_code == 0, r.output
    res = results(tmp_path / "ev2")
    assert res["counts"]["samples"] == 1 and res["bad_lines"][0]["reason"].startswith("missing field 'answer'")


def test_bad_input_is_counted_or_one_line(tmp_path):
    items = [dict(ITEMS[0], output=["not", "a", "string"]), dict(ITEMS[1], output=""), dict(ITEMS[1], sample_id="q3", output="Simon [7].")]
    result, table = files(tmp_path, items=items)
    r = evaluate("--task", "alce", "--input", result, "--metrics", "str_em,alce_citation_recall", "--judge", f"table:{table}", "--out", tmp_path / "ev")
    assert r.exit_code == 0, r.output
    res = results(tmp_path / "ev")
    assert res["counts"]["bad_lines"] == 1 and res["counts"]["samples"] == 2 and res["counts"]["unparseable_outputs"] == 1
    assert res["counts"]["citation_status"] == {"unknown_source": 1}
    assert res["metrics"]["alce_citation_recall"]["value"] == 0.0 and res["metrics"]["alce_citation_recall"]["details"]["answers_without_sentences"] == 1
    for args, why in [
        (["--metrics", "str_emm"], "--metrics: 'str_emm' is not a metric of task alce; did you mean 'str_em'"),
        (["--judge", "triple"], "the triple judge reads knowledge-graph claims"),
        (["--judge", "table:" + str(tmp_path / "none.jsonl")], "cannot be read"),
    ]:
        r = evaluate("--task", "alce", "--input", result, "--out", tmp_path / "bad", *args)
        assert r.exit_code != 0 and why in r.output and "Traceback" not in r.output, r.output
    (tmp_path / "broken.json").write_text('{"data": [', encoding="utf-8")
    r = evaluate("--task", "alce", "--input", tmp_path / "broken.json", "--out", tmp_path / "bad")
    assert r.exit_code != 0 and "not valid JSON" in r.output and "Traceback" not in r.output  # the one ALCE reader's words


def test_the_report_colours_passage_citations_by_verdict_and_shows_the_documents(tmp_path):
    result, table = files(tmp_path)
    out = tmp_path / "e2"
    assert evaluate("--task", "alce", "--input", result, "--judge", f"table:{table}", "--out", out).exit_code == 0
    r = CliRunner().invoke(cli, ["report", str(out)])
    assert r.exit_code == 0, r.output
    html = (out / "report.html").read_text()
    assert html.count('class="cite cite-correct"') == 3  # q1's [1], q2's [2], and the legend
    assert html.count('class="cite cite-incorrect"') == 2  # q1's [2]: entailed, not needed (and the legend)
    assert "entailed, not needed" in html
    assert 'class="cite cite-bad' in html and "out of range" in html  # q1's [3]
    assert "documents given (2; 2 cited)" in html and "Paul Simon is an American musician." in html


@pytest.mark.parametrize("task, subtask", [("alce-eli5", "eli5"), ("alce-qampari", "qampari"), ("alce-short", "short")])
def test_each_subtask_reports_its_metrics(tmp_path, task, subtask):
    item = {"id": "x", "question": "Which cities?", "docs": DOCS, "output": "Paris [1], Lyon [2]", "answer": "Paris and Lyon.",
            "claims": ["Paris is a city."], "answers": [["Paris"], ["Lyon"], ["Nice"]]}  # fmt: skip
    result, _ = files(tmp_path, items=[item])
    r = evaluate("--task", task, "--input", result, "--out", tmp_path / "ev")
    assert r.exit_code == 0, r.output
    res = results(tmp_path / "ev")
    from vericite.metrics.alce import SUBTASKS
    from vericite.metrics.attribution import METRIC_NAMES

    assert list(res["metrics"]) == list(SUBTASKS[subtask]) + list(METRIC_NAMES) and res["evaluation"]["alce"]["subtask"] == subtask
    if subtask == "qampari":
        assert res["metrics"]["qampari_recall"]["value"] == pytest.approx(2 / 3) and res["metrics"]["qampari_precision"]["value"] == 1.0
