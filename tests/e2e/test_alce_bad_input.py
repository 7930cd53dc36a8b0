"""``vericite evaluate --task alce`` on malformed ALCE items found by the bad-input audit (notes/badinput-report.md):
each is a bad line with its reason, never a silent score."""

from __future__ import annotations

import json

from click.testing import CliRunner

from vericite.cli.main import cli

DOCS = [{"title": "Song", "text": "Paul Simon wrote the song."}]


def item(sid, **kw):
    return {"sample_id": sid, "question": "Who wrote it?", "docs": DOCS, "output": "Paul Simon wrote it [1].",
            "qa_pairs": [{"question": "Who?", "short_answers": ["Paul Simon"]}], **kw}  # fmt: skip


def test_a_qa_pair_without_short_answers_is_a_bad_line_not_str_em_zero(tmp_path):
    f = tmp_path / "result.json"
    items = [item("ok"), item("no-short", qa_pairs=[{"question": "Who?"}]), item("null-short", qa_pairs=[{"question": "Who?", "short_answers": None}]),
             item("empty-short", qa_pairs=[{"question": "Who?", "short_answers": []}])]  # fmt: skip
    f.write_text(json.dumps({"args": {"dataset_name": "asqa"}, "data": items}), encoding="utf-8")
    r = CliRunner().invoke(cli, ["evaluate", "-q", "--resamples", "20", "--task", "alce", "--input", str(f), "--metrics", "str_em", "--out", str(tmp_path / "ev")])
    assert r.exit_code == 0 and "Traceback" not in r.output, r.output
    res = json.loads((tmp_path / "ev" / "results.json").read_text())
    assert {b["id"]: b["reason"][:44] for b in res["bad_lines"]} == {"no-short": "a QA pair needs its 'short_answers' (a list ", "null-short": "a QA pair needs its 'short_answers' (a list "}
    # an empty list is ALCE's own case (exact_presence of nothing: 0), kept
    assert res["metrics"]["str_em"]["n"] == 2 and res["metrics"]["str_em"]["value"] == 0.5


def test_an_output_that_is_not_a_string_says_so(tmp_path):
    f = tmp_path / "result.json"
    f.write_text(json.dumps({"args": {}, "data": [item("ok"), item("num", output=42), item("list", output=["a"]), item("null", output=None)]}), encoding="utf-8")
    r = CliRunner().invoke(cli, ["evaluate", "-q", "--resamples", "20", "--task", "alce", "--input", str(f), "--metrics", "str_em", "--out", str(tmp_path / "ev")])
    assert r.exit_code == 0, r.output
    why = {b["id"]: b["reason"] for b in json.loads((tmp_path / "ev" / "results.json").read_text())["bad_lines"]}
    assert why["num"].startswith("field 'answer' is not a string but int 42 (the model output as a string (ALCE's output))")  # was "missing field"
    assert why["list"].startswith("field 'answer' is not a string but list ['a']")
    assert why["null"].startswith("missing field 'answer'")


def test_citation_zero_with_no_document_is_out_of_range_not_a_traceback(tmp_path):
    # [0] is ref -1: ALCE reads the last document (kept); with no document ALCE's eval.py raises IndexError, vericite did too
    f = tmp_path / "result.json"
    items = [item("none", docs=[], output="Paul Simon wrote it [0]."), item("last", output="Paul Simon wrote it [0].")]
    f.write_text(json.dumps({"args": {"dataset_name": "asqa"}, "data": items}), encoding="utf-8")
    table = tmp_path / "t.jsonl"
    table.write_text(json.dumps({"premise": "Title: Song\nPaul Simon wrote the song.", "hypothesis": "Paul Simon wrote it.", "entailed": True}) + "\n", encoding="utf-8")
    r = CliRunner().invoke(cli, ["evaluate", "-q", "--resamples", "20", "--task", "alce", "--input", str(f), "--judge", f"table:{table}",
                                 "--metrics", "alce_citation_recall", "--out", str(tmp_path / "ev")])  # fmt: skip
    assert r.exit_code == 0 and "Traceback" not in r.output, r.output
    recs = {x["id"]: x for x in map(json.loads, (tmp_path / "ev" / "samples.jsonl").read_text().splitlines())}
    assert recs["none"]["scores"]["alce"]["sentences"][0]["rejected"] == "out of range" and recs["none"]["scores"]["alce"]["citation_recall"] == 0.0
    assert recs["last"]["scores"]["alce"]["citation_recall"] == 1.0  # ALCE's quirk kept


def test_a_file_with_no_item_says_so(tmp_path):
    for name, text in (("list.json", "[]"), ("data.json", '{"args": {}, "data": []}'), ("blank.jsonl", "\n\n")):
        f = tmp_path / name
        f.write_text(text, encoding="utf-8")
        r = CliRunner().invoke(cli, ["evaluate", "-q", "--task", "alce", "--input", str(f), "--out", str(tmp_path / "ev")])
        assert r.exit_code == 2 and f"{name}: no answer to evaluate (it holds no item)" in r.output, r.output  # was "... file is empty"


def test_a_short_answer_whose_aliases_are_all_empty_is_a_bad_line(tmp_path):
    f = tmp_path / "short.jsonl"
    lines = [{"id": "ok", "question": "Who?", "docs": DOCS, "output": "Paul Simon [1].", "answers": [["Paul Simon"]]},
             {"id": "empty", "question": "Who?", "docs": DOCS, "output": "Paul Simon [1].", "answers": [[""]]},
             {"id": "some-empty", "question": "Who?", "docs": DOCS, "output": "Paul Simon [1].", "answers": [["", "Paul Simon"]]}]  # fmt: skip
    f.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    r = CliRunner().invoke(cli, ["evaluate", "-q", "--resamples", "20", "--task", "alce-short", "--input", str(f), "--metrics", "answer_em,answer_hit", "--out", str(tmp_path / "ev")])
    assert r.exit_code == 0, r.output
    res = json.loads((tmp_path / "ev" / "results.json").read_text())
    assert [b["id"] for b in res["bad_lines"]] == ["empty"]  # was scored answer_em 0, answer_hit left out
    assert res["metrics"]["answer_hit"]["n"] == 2 and res["metrics"]["answer_hit"]["value"] == 1.0


def test_empty_reference_answers_are_no_reference_not_rouge_zero(tmp_path):
    f = tmp_path / "result.json"
    refs = [{"long_answer": "Paul Simon wrote the song."}, {"long_answer": "Paul Simon did."}]
    items = [item("ok", annotations=refs), item("empty-refs", annotations=[{"long_answer": ""}, {"long_answer": None}]), item("none", annotations=[])]
    f.write_text(json.dumps({"args": {"dataset_name": "asqa"}, "data": items}), encoding="utf-8")
    r = CliRunner().invoke(cli, ["evaluate", "-q", "--resamples", "20", "--task", "alce", "--input", str(f), "--metrics", "rouge_lsum", "--out", str(tmp_path / "ev")])
    assert r.exit_code == 0, r.output
    m = json.loads((tmp_path / "ev" / "results.json").read_text())["metrics"]["rouge_lsum"]
    assert m["n"] == 1 and m["details"]["left_out"] == 2 and m["value"] > 0.5  # "empty-refs" scored 0 against ""


def test_empty_gold_texts_are_bad_lines_not_a_silent_pass(tmp_path):
    # an empty short answer is "found" in every output by ALCE's STR-EM, an empty claim entailed by anything
    f = tmp_path / "result.json"
    items = [item("ok"), item("empty-short", qa_pairs=[{"question": "Who?", "short_answers": ["", "Garfunkel"]}]),
             item("empty-claim", claims=["Paul Simon wrote it.", " "])]  # fmt: skip
    f.write_text(json.dumps({"args": {"dataset_name": "asqa"}, "data": items}), encoding="utf-8")
    r = CliRunner().invoke(cli, ["evaluate", "-q", "--resamples", "20", "--task", "alce-asqa", "--input", str(f), "--metrics", "str_em", "--out", str(tmp_path / "ev")])
    assert r.exit_code == 0, r.output
    res = json.loads((tmp_path / "ev" / "results.json").read_text())
    why = {b["id"]: b["reason"] for b in res["bad_lines"]}
    assert why == {"empty-short": "field 'short_answers' holds an empty text: ['', 'Garfunkel']", "empty-claim": "field 'claims' holds an empty text: ['Paul Simon wrote it.', ' ']"}
    assert res["metrics"]["str_em"]["n"] == 1  # "empty-short" scored STR-EM 1 against "Paul Simon wrote it"


def test_rerank_with_unreadable_judgements_says_so(tmp_path):
    from vericite import registry
    from vericite.models.fake import FakeBackend
    from vericite.types import Judgement

    class Garbage:
        id = "garbage@1"
        labels = ("supported", "not_supported")

        def judge(self, pairs):
            return [Judgement(self.id, p.claim, p.evidence, float("nan"), "maybe") for p in pairs]

    f = tmp_path / "eli5.json"
    f.write_text(json.dumps([{"question": "Who wrote it?", "docs": DOCS, "claims": ["Paul Simon wrote it."]}]), encoding="utf-8")
    registry.judges.register("garbage", lambda arg, *, ctx, **o: Garbage(), replace=True)
    registry.backends.register("cites", lambda arg, *, ctx, **o: FakeBackend("cites", default="Paul Simon wrote it [1]."), replace=True)
    try:
        r = CliRunner().invoke(cli, ["generate", "--method", "rerank", "--dataset", f"alce:{f}", "--model", "cites", "--judge", "garbage",
                                     "--out", str(tmp_path / "g"), "-q", "--no-cache"])  # fmt: skip
    finally:
        registry.judges.unregister("garbage")
        registry.backends.unregister("cites")
    assert r.exit_code == 0, r.output
    assert "warning: rerank: 4 judgements could not be read (samples whose recall could not be computed rank last" in r.output, r.output


def test_judge_for_a_method_that_takes_none_names_the_flag(tmp_path):
    f = tmp_path / "eli5.json"
    f.write_text(json.dumps([{"question": "Who wrote it?", "docs": DOCS, "claims": ["Paul Simon wrote it."]}]), encoding="utf-8")
    for method in ("closedbook", "vanilla"):
        r = CliRunner().invoke(cli, ["generate", "--method", method, "--dataset", f"alce:{f}", "--model", "fake", "--judge", "fake", "--out", str(tmp_path / method), "-q"])
        assert r.exit_code == 2 and f"--judge is an option of --method rerank and vtg (their judge), not of {method}" in r.output, r.output  # was "option rerank_judge"


def test_a_question_file_with_a_blank_question_is_one_line(tmp_path):
    f = tmp_path / "qs.jsonl"
    f.write_text(json.dumps({"id": "a", "question": "Who wrote it?", "passages": DOCS}) + "\n" + json.dumps({"id": "b", "question": "  ", "passages": DOCS}) + "\n", encoding="utf-8")
    r = CliRunner().invoke(cli, ["generate", "--method", "vanilla", "--dataset", str(f), "--model", "fake", "--out", str(tmp_path / "g"), "-q"])
    assert r.exit_code == 2 and f"{f}:2: the question is empty" in r.output, r.output  # was answered


def test_an_empty_judge_table_is_refused_up_front_in_one_line(tmp_path):
    # it used to score every answer with every pair failed ("pair not in the table") before saying anything
    f = tmp_path / "result.json"
    f.write_text(json.dumps({"args": {"dataset_name": "asqa"}, "data": [item("a"), item("b")]}), encoding="utf-8")
    table = tmp_path / "empty.jsonl"
    table.write_text("\n\n", encoding="utf-8")
    r = CliRunner().invoke(cli, ["evaluate", "-q", "--resamples", "20", "--task", "alce", "--input", str(f), "--judge", f"table:{table}",
                                 "--metrics", "alce_citation_recall", "--out", str(tmp_path / "ev")])  # fmt: skip
    assert r.exit_code == 2 and "Traceback" not in r.output, r.output
    lines = [line for line in r.output.splitlines() if line.strip()]
    assert len(lines) == 1 and f"judge table {table}: holds no verdict" in lines[0], r.output
    assert not (tmp_path / "ev" / "samples.jsonl").exists()
