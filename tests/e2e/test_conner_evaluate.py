"""vericite evaluate --task conner: knowledge lines in CONNER's shape, the fakes as judge, LM and scorer; evidence
from the lines or from an --index built here; bad lines and bad knowledge said, never a traceback."""

from __future__ import annotations

import json

from click.testing import CliRunner

from vericite.cli.main import cli

LINES = [
    {"id": "a", "query": "What is the capital of Italy?", "knowledge": "Rome is the capital of Italy. Rome is old.", "answer": "Rome", "topic": "Italy",
     "evidence": ["Rome is the capital of Italy and is old."]},
    {"id": "b", "query": "Who wrote Hamlet?", "knowledge": "Hamlet was written by Shakespeare. It is a play.", "answer": "Shakespeare"},
    {"id": "c", "query": "Who wrote Hamlet?", "knowledge": ""},
]
FAKES = ["--judge", "fake-3way", "--lm", "fake", "--relevance-model", "fake", "-q", "--resamples", "50"]


def write(tmp_path, lines):
    p = tmp_path / "k.jsonl"
    p.write_text("\n".join(json.dumps(x) for x in lines) + "\n", encoding="utf-8")
    return p


def test_evaluate_conner_lines(tmp_path):
    r = CliRunner().invoke(cli, ["evaluate", "--task", "conner", "-i", str(write(tmp_path, LINES)), "-o", str(tmp_path / "out"), *FAKES])
    assert r.exit_code == 0, r.output
    res = json.loads((tmp_path / "out" / "results.json").read_text())
    m = res["metrics"]
    assert res["metric_versions"]["conner"] == "conner@1"
    assert m["factuality"]["n"] == 1 and m["relevance"]["n"] == 2 and m["validity"]["n"] == 2
    assert m["factuality"]["details"]["left_out"] == {"no evidence (the item's passages, or --index)": 1, "empty knowledge": 1}
    assert res["evaluation"]["conner"]["lm"] == "fake" and res["evaluation"]["conner"]["evidence_index"] is None
    recs = [json.loads(x) for x in (tmp_path / "out" / "samples.jsonl").read_text().splitlines()]
    assert recs[0]["scores"]["conner"]["factuality_label"] == "factual_consistent"
    assert recs[2]["scores"]["conner"]["not_computed"]["relevance"] == "empty knowledge"
    assert res["counts"]["empty_knowledge"] == 1


def test_evidence_from_an_index(tmp_path):
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text(json.dumps({"id": "d1", "title": "Hamlet", "text": "Hamlet is a play. Hamlet was written by Shakespeare around 1600."}) + "\n"
                      + json.dumps({"id": "d2", "title": "Rome", "text": "Rome is a city in Italy."}) + "\n", encoding="utf-8")
    r = CliRunner().invoke(cli, ["docs", "index", str(corpus), "--index", str(tmp_path / "idx")])
    assert r.exit_code == 0, r.output
    r = CliRunner().invoke(cli, ["evaluate", "--task", "conner", "-i", str(write(tmp_path, LINES[1:2])), "-o", str(tmp_path / "out"),
                                 "--index", str(tmp_path / "idx"), "--metrics", "factuality,factual_consistent", *FAKES])
    assert r.exit_code == 0, r.output
    res = json.loads((tmp_path / "out" / "results.json").read_text())
    assert res["evaluation"]["conner"]["evidence_index"] == str(tmp_path / "idx")
    assert res["metrics"]["factuality"]["n"] == 1 and set(res["metrics"]) == {"factuality", "factual_consistent"}


def test_mistakes_are_one_line(tmp_path):
    p = write(tmp_path, LINES)
    r = CliRunner().invoke(cli, ["evaluate", "--task", "conner", "-i", str(p), "-o", str(tmp_path / "o1"), "--judge", "fake", "-q"])
    assert r.exit_code != 0 and "three-way judge" in r.output and "Traceback" not in r.output
    r = CliRunner().invoke(cli, ["evaluate", "--task", "conner:aggregation=median", "-i", str(p), "-o", str(tmp_path / "o2"), "-q"])
    assert r.exit_code != 0 and "aggregation" in r.output and "Traceback" not in r.output


def test_malformed_lines_are_bad_lines_with_their_reason_never_a_traceback(tmp_path):
    good = {"id": "g", "query": "Who wrote Hamlet?", "knowledge": "Hamlet was written by Shakespeare. It is a play.", "answer": "Shakespeare",
            "evidence": ["Shakespeare wrote Hamlet."]}  # fmt: skip
    lines = [
        good,
        dict(good, id="ev-num", evidence=[5]),  # was: AttributeError, a traceback for the whole file
        dict(good, id="ev-null-text", evidence=[{"text": None}]),  # was: evidence read as the text "None"
        dict(good, id="ev-dict", evidence={"text": "x"}),
        dict(good, id="k-list", knowledge=["Hamlet was written by Shakespeare."]),
        dict(good, id="q-empty", query="  "),
        {k: v for k, v in good.items() if k != "query"} | {"id": "q-none"},
        dict(good, id="a-num", query="How many acts?", knowledge="Hamlet has 5 acts. It is long.", answer=5),
        dict(good, id="a-bad", answer=[{"x": 1}]),
        dict(good, id="topic-dict", topic={"a": 1}),  # was read as the topic "{'a': 1}"
        dict(good, id="meta-str", topic="Hamlet", meta="x"),  # was the reason "'str' object is not a mapping"
    ]
    r = CliRunner().invoke(cli, ["evaluate", "--task", "conner", "-i", str(write(tmp_path, lines)), "-o", str(tmp_path / "out"), *FAKES])
    assert r.exit_code == 0 and "Traceback" not in r.output, r.output
    res = json.loads((tmp_path / "out" / "results.json").read_text())
    why = {b["id"]: b["reason"] for b in res["bad_lines"]}
    assert set(why) == {"ev-num", "ev-null-text", "ev-dict", "k-list", "q-empty", "q-none", "a-bad", "topic-dict", "meta-str"}, why
    assert why["topic-dict"].startswith("field 'topic' must be a text") and why["meta-str"].startswith("field 'meta' must be an object")
    assert why["ev-num"].startswith("field 'evidence' must be a list of texts or of objects with a 'text' string, not one item 5")
    assert why["k-list"].startswith("field 'knowledge' must be the knowledge text (a string), not list")
    assert why["q-empty"].startswith("field 'query' must be the query the knowledge is for, a non-empty text")
    assert why["q-none"] == "missing field 'query' (the query the knowledge is for)"
    assert res["counts"]["samples"] == 2 and res["metrics"]["helpfulness"]["n"] == 2  # 5 is the answer "5", not "no gold answer"


def test_generate_knowledge_that_comes_out_empty_is_counted_and_said(tmp_path):
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text(json.dumps({"id": "d1", "title": "Mitochondrion", "text": "The mitochondrion is an organelle."}) + "\n", encoding="utf-8")
    assert CliRunner().invoke(cli, ["docs", "index", str(corpus), "--index", str(tmp_path / "idx"), "-q"]).exit_code == 0
    qs = tmp_path / "qs.jsonl"
    qs.write_text(json.dumps({"id": "a", "question": "Who wrote Hamlet?"}) + "\n" + json.dumps({"id": "b", "question": "What is a mitochondrion?"}) + "\n", encoding="utf-8")
    r = CliRunner().invoke(cli, ["generate", "--method", "conner-knowledge", "--method-arg", "source=retrieve", "--index", str(tmp_path / "idx"),
                                 "--dataset", str(qs), "--model", "fake", "--out", str(tmp_path / "k"), "-q", "--no-cache"])  # fmt: skip
    assert r.exit_code == 0, r.output
    assert "warning: 1 of 2 knowledge texts are empty; the retriever found no passage for 1 (evaluate --task conner leaves them out" in r.output
    summary = json.loads((tmp_path / "k" / "manifest.json").read_text())["summary"]
    assert summary["empty_knowledge"] == 1 and summary["retrieved"] == {"questions": 2, "none_found": 1}



def test_the_validity_reader_reads_each_item_once(tmp_path, monkeypatch):
    # evaluate scores each answer alone into its checkpoint, then the corpus: the reader's answer of the first pass
    # is the corpus's too, not asked for again (a call-cache hit at best, with its progress and log lines). The LM
    # is loaded without the call cache here, so every reading reaches it.
    import vericite.models as models
    from vericite.models.fake import FakeBackend, last_user_message

    read: list[str] = []

    def reply(messages, params):
        prompt = last_user_message(messages)
        if prompt.startswith("Answer the question in a few words"):
            read.append(prompt.split("Question:", 1)[1].strip())
            return "Rome"
        return "Something."

    monkeypatch.setattr(models, "load_model", lambda name, **kw: FakeBackend(name, replies=reply))
    r = CliRunner().invoke(cli, ["evaluate", "--task", "conner", "-i", str(write(tmp_path, LINES)), "-o", str(tmp_path / "out"), *FAKES])
    assert r.exit_code == 0, r.output
    assert sorted(read) == ["What is the capital of Italy?", "Who wrote Hamlet?"]  # c's knowledge is empty: not read
    res = json.loads((tmp_path / "out" / "results.json").read_text())
    assert res["metrics"]["validity"]["n"] == 2 and res["metrics"]["answer_em"]["n"] == 2
    recs = [json.loads(x) for x in (tmp_path / "out" / "samples.jsonl").read_text().splitlines()]
    assert [x["scores"]["conner"].get("reader_answer") for x in recs] == ["Rome", "Rome", None]

    # resumed, every answer in the checkpoint: the readers' answers are its lines', none is read again, and the
    # evaluation's cost (judge_usage: the LM's calls) is the uninterrupted one's
    read.clear()
    r = CliRunner().invoke(cli, ["evaluate", "--task", "conner", "-i", str(write(tmp_path, LINES)), "-o", str(tmp_path / "out"), *FAKES, "--resume"])
    assert r.exit_code == 0, r.output
    assert read == []
    again = json.loads((tmp_path / "out" / "results.json").read_text())
    assert again["judge_usage"] == res["judge_usage"] and again["metrics"] == res["metrics"]
    assert [json.loads(x) for x in (tmp_path / "out" / "samples.jsonl").read_text().splitlines()] == recs


def index_and_lines(tmp_path):
    """An index of three passages, and three knowledge lines without evidence of their own: each sentence's evidence
    is retrieved from the index; "d" has no gold answer, so validity also retrieves evidence for the reader's answer."""
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("".join(json.dumps(x) + "\n" for x in [
        {"id": "d1", "title": "Hamlet", "text": "Hamlet is a play. Hamlet was written by Shakespeare around 1600."},
        {"id": "d2", "title": "Rome", "text": "Rome is a city in Italy. Rome is the capital of Italy."},
        {"id": "d3", "title": "Paris", "text": "Paris is the capital of France."},
    ]), encoding="utf-8")  # fmt: skip
    r = CliRunner().invoke(cli, ["docs", "index", str(corpus), "--index", str(tmp_path / "idx")])
    assert r.exit_code == 0, r.output
    lines = [
        {"id": "a", "query": "What is the capital of Italy?", "knowledge": "Rome is the capital of Italy. Rome is old.", "answer": "Rome"},
        {"id": "b", "query": "Who wrote Hamlet?", "knowledge": "Hamlet was written by Shakespeare. It is a play.", "answer": "Shakespeare"},
        {"id": "d", "query": "What is the capital of France?", "knowledge": "Paris is the capital of France. It is a big city."},
    ]  # fmt: skip
    return tmp_path / "idx", write(tmp_path, lines)


def test_the_evidence_of_an_item_is_retrieved_once_per_evaluation(tmp_path, monkeypatch):
    # evaluate scores each answer alone into its checkpoint, then the corpus: the evidence retrieved for an item in
    # the first pass is the corpus's too, and an answer read back on --resume is not retrieved for again (a dense
    # retriever embeds each query); the files are those of an evaluation that retrieved it twice
    from tests.support.checkpoint import Cut, Searches

    idx, lines = index_and_lines(tmp_path)
    common = ["evaluate", "--task", "conner", "-i", str(lines), "--index", str(idx), *FAKES]
    sent = Searches(monkeypatch)
    r = CliRunner().invoke(cli, [*common, "-o", str(tmp_path / "whole")])
    assert r.exit_code == 0, r.output
    sentences = ["Rome is the capital of Italy.", "Rome is old.", "Hamlet was written by Shakespeare.", "It is a play.",
                 "Paris is the capital of France.", "It is a big city."]  # fmt: skip
    asked = sorted(sent.queries)
    assert len(asked) == len(set(asked)) == len(sentences) + 1 and set(sentences) < set(asked)  # + d's reader answer
    res = json.loads((tmp_path / "whole" / "results.json").read_text())
    assert res["metrics"]["factuality"]["n"] == 3 and res["metrics"]["validity"]["n"] == 3
    assert res["evaluation"]["conner"]["evidence_index"] == str(idx)
    recs = [json.loads(x) for x in (tmp_path / "whole" / "samples.jsonl").read_text().splitlines()]
    assert all("retrieved" not in x["scores"]["conner"] for x in recs)  # the checkpoint's lines keep it, not the records

    sent = Searches(monkeypatch)
    r = CliRunner().invoke(cli, [*common, "-o", str(tmp_path / "whole"), "--resume"])
    assert r.exit_code == 0, r.output
    assert sent.queries == []  # every answer read back: nothing retrieved again

    Cut(monkeypatch, at=3)  # the third judge call: the second answer's factuality, once its evidence was retrieved
    assert CliRunner().invoke(cli, [*common, "-o", str(tmp_path / "cut")]).exit_code == 130
    Cut(monkeypatch)
    sent = Searches(monkeypatch)
    r = CliRunner().invoke(cli, [*common, "-o", str(tmp_path / "cut"), "--resume"])
    assert r.exit_code == 0, r.output
    assert sorted(sent.queries) == sorted(q for q in asked if q not in sentences[:2])  # the first answer's: read back
    for name in ("samples.jsonl",):
        assert (tmp_path / "cut" / name).read_text() == (tmp_path / "whole" / name).read_text()
    cut = json.loads((tmp_path / "cut" / "results.json").read_text())
    for key in ("metrics", "counts", "judge_usage", "evaluation"):
        assert cut[key] == res[key], key


def test_an_index_rebuilt_in_place_between_a_cut_and_resume_is_refused(tmp_path, monkeypatch):
    # the checkpoint's header records what --index holds (the corpus's sha256 and passages, as generate's manifest
    # does), not only its path: answers scored against the old documents are not mixed with answers scored against
    # the new ones; a checkpoint written before it was recorded resumes as it did
    import shutil

    from tests.support.checkpoint import Cut

    idx, lines = index_and_lines(tmp_path)
    out = tmp_path / "cut"
    common = ["evaluate", "--task", "conner", "-i", str(lines), "--index", str(idx), "-o", str(out), *FAKES]
    Cut(monkeypatch, at=3)
    assert CliRunner().invoke(cli, common).exit_code == 130
    Cut(monkeypatch)
    path = out / ".evaluate-answers.jsonl"
    head = json.loads(path.read_text().splitlines()[0])
    assert head["index_corpus"]["passages"] == 3 and len(head["index_corpus"]["sha256"]) == 64

    corpus = tmp_path / "other.jsonl"  # the same --index folder, built again from other documents
    corpus.write_text(json.dumps({"id": "d1", "title": "Rome", "text": "Rome is a village in Georgia."}) + "\n", encoding="utf-8")
    shutil.rmtree(idx)
    assert CliRunner().invoke(cli, ["docs", "index", str(corpus), "--index", str(idx), "-q"]).exit_code == 0
    before = path.read_text()
    r = CliRunner().invoke(cli, [*common, "--resume"])
    assert r.exit_code == 2, r.output
    assert r.output.startswith("error: cannot resume the evaluation in") and len(r.output.strip().splitlines()) == 1 and "Traceback" not in r.output, r.output
    assert "(the documents of --index: its folder was rebuilt from another corpus since)" in r.output and "rerun without --resume, or use another --out" in r.output, r.output
    assert path.read_text() == before and not (out / "results.json").exists()

    # a checkpoint written before the index's corpus was recorded: taken as made with the index as it is now
    text = path.read_text().splitlines()
    old = json.loads(text[0])
    del old["index_corpus"]
    path.write_text("\n".join([json.dumps(old), *text[1:]]) + "\n", encoding="utf-8")
    r = CliRunner().invoke(cli, [*common, "--resume"])
    assert r.exit_code == 0, r.output
    assert f"was written before the documents of --index were recorded: resumed as made with {idx} as it is now" in r.output, r.output
    assert (out / "results.json").is_file()


def test_q_know_gamma_is_an_option_of_the_task(tmp_path):
    # issue 14 part 3: Q_know = γᵀ[S_fact, S_rel, S_coh_para, S_info], γ configurable (default equal): the per-item
    # q_know of an evaluation used equal weights whatever a selection had used
    p = write(tmp_path, LINES)
    r = CliRunner().invoke(cli, ["evaluate", "--task", "conner:gamma=1/0/0/0", "-i", str(p), "-o", str(tmp_path / "out"), *FAKES])
    assert r.exit_code == 0, r.output
    res = json.loads((tmp_path / "out" / "results.json").read_text())
    assert res["evaluation"]["conner"]["q_know_gamma"] == {"factuality": 1.0, "relevance": 0.0, "coherence_paragraph": 0.0, "informativeness": 0.0}
    first = json.loads((tmp_path / "out" / "samples.jsonl").read_text().splitlines()[0])["scores"]["conner"]
    assert first["q_know"] == first["factuality"]
    again = CliRunner().invoke(cli, ["evaluate", "--task", "conner:gamma=1/0/0/0", "-i", str(p), "-o", str(tmp_path / "out"), *FAKES, "--resume"])
    assert again.exit_code == 0, again.output
    other = CliRunner().invoke(cli, ["evaluate", "--task", "conner", "-i", str(p), "-o", str(tmp_path / "out"), *FAKES, "--resume"])
    assert other.exit_code != 0 and "gamma" in other.output and "Traceback" not in other.output
    for bad in ("gamma=1/0/0", "gamma=a/b/c/d", "gamma=nan/0/0/0"):
        r = CliRunner().invoke(cli, ["evaluate", "--task", f"conner:{bad}", "-i", str(p), "-o", str(tmp_path / "bad"), *FAKES])
        assert r.exit_code == 2 and "gamma wants four numbers" in r.output and "Traceback" not in r.output, r.output


def test_paragraph_coherence_model_is_an_option_of_the_task(tmp_path):
    p = write(tmp_path, LINES)
    r = CliRunner().invoke(cli, ["evaluate", "--task", "conner:coherence_model=fake", "-i", str(p), "-o", str(tmp_path / "out"), *FAKES])
    assert r.exit_code == 0, r.output
    res = json.loads((tmp_path / "out" / "results.json").read_text())
    ev = res["evaluation"]["conner"]
    assert ev["coherence_paragraph_model"].startswith("fake-scorer@1") and not [d for d in ev["deviations"] if d.startswith("coherence_paragraph")]
    assert res["metrics"]["coherence_paragraph"]["n"] == 2
    other = CliRunner().invoke(cli, ["evaluate", "--task", "conner", "-i", str(p), "-o", str(tmp_path / "out"), *FAKES, "--resume"])
    assert other.exit_code != 0 and "coherence_model" in other.output and "Traceback" not in other.output
    r = CliRunner().invoke(cli, ["evaluate", "--task", "conner:coherence_model=nosuch", "-i", str(p), "-o", str(tmp_path / "bad"), *FAKES])
    assert r.exit_code == 2 and "nosuch" in r.output and "Traceback" not in r.output, r.output


def test_deviations_from_conner_are_recorded_and_neither_resume_nor_compare_reads_them(tmp_path, monkeypatch):
    # the reader's zero-shot prompt (not Table 13's few-shot templates) and WoW's query (the dialogue history, not
    # the last utterance) are deviations, recorded; an evaluation whose checkpoint and results.json were written
    # before they were noted (only the order test's) still resumes, its answers not judged again, and compares
    from vericite.metrics.conner import COHERENCE_DEVIATION, READER_DEVIATION, SENTENCE_CONTEXT_DEVIATION, WOW_QUERY_DEVIATION, ConnerMetric
    from tests.support.checkpoint import Cut

    wow = [{**x, "meta": {"last_utterance": "And you?"}, "query": x["query"] + "\nAnd you?"} for x in LINES]
    r = CliRunner().invoke(cli, ["evaluate", "--task", "conner", "-i", str(write(tmp_path, wow)), "-o", str(tmp_path / "wow"), *FAKES])
    assert r.exit_code == 0, r.output
    assert json.loads((tmp_path / "wow" / "results.json").read_text())["evaluation"]["conner"]["deviations"] == [SENTENCE_CONTEXT_DEVIATION, COHERENCE_DEVIATION, READER_DEVIATION, WOW_QUERY_DEVIATION]

    p = write(tmp_path, LINES[:2])
    with monkeypatch.context() as before:  # as the code before these deviations were noted recorded it
        before.setattr(ConnerMetric, "deviations", lambda self, samples=(): [COHERENCE_DEVIATION] if self.coherence is None else [])
        r = CliRunner().invoke(cli, ["evaluate", "--task", "conner", "-i", str(p), "-o", str(tmp_path / "old"), *FAKES])
        assert r.exit_code == 0, r.output
    old = json.loads((tmp_path / "old" / "results.json").read_text())["evaluation"]["conner"]
    assert old["deviations"] == [COHERENCE_DEVIATION]
    grown = write(tmp_path, LINES)  # one answer more: resumed, the two scored before are not judged again
    (tmp_path / "old" / "results.json").unlink()
    cut = Cut(monkeypatch)
    r = CliRunner().invoke(cli, ["evaluate", "--task", "conner", "-i", str(grown), "-o", str(tmp_path / "old"), *FAKES, "--resume"])
    assert r.exit_code == 0, r.output
    assert cut.calls == 0  # the answer added is empty knowledge: nothing to judge; the two before were read back
    assert json.loads((tmp_path / "old" / "results.json").read_text())["evaluation"]["conner"]["deviations"] == [SENTENCE_CONTEXT_DEVIATION, COHERENCE_DEVIATION, READER_DEVIATION]

    for name, lines in (("a", LINES[:2]), ("b", LINES[:2])):
        r = CliRunner().invoke(cli, ["evaluate", "--task", "conner", "-i", str(write(tmp_path, lines)), "-o", str(tmp_path / name), *FAKES])
        assert r.exit_code == 0, r.output
    res = json.loads((tmp_path / "a" / "results.json").read_text())
    res["evaluation"]["conner"]["deviations"] = [COHERENCE_DEVIATION]  # written before the reader's was noted
    (tmp_path / "a" / "results.json").write_text(json.dumps(res), encoding="utf-8")
    r = CliRunner().invoke(cli, ["compare", str(tmp_path / "a"), str(tmp_path / "b"), "--format", "json"])
    assert r.exit_code == 0, r.output
    res["evaluation"]["conner"]["aggregation"] = "max"  # a setting still compared
    (tmp_path / "a" / "results.json").write_text(json.dumps(res), encoding="utf-8")
    r = CliRunner().invoke(cli, ["compare", str(tmp_path / "a"), str(tmp_path / "b")])
    assert r.exit_code != 0 and "conner.aggregation" in r.output and "Traceback" not in r.output, r.output


def test_a_run_that_did_not_measure_relevance_records_no_relevance_model_and_still_compares(tmp_path):
    # --metrics without relevance: the relevance model is neither loaded nor recorded (null), so compare reads it
    # only when both runs record one; two runs with different relevance models are still not compared
    p = write(tmp_path, LINES[:2])
    for name, extra in (("all", []), ("some", ["--metrics", "factuality,coherence_sentence"])):
        r = CliRunner().invoke(cli, ["evaluate", "--task", "conner", "-i", str(p), "-o", str(tmp_path / name), *FAKES, *extra])
        assert r.exit_code == 0, r.output
    some = json.loads((tmp_path / "some" / "results.json").read_text())
    assert some["evaluation"]["conner"]["relevance_model"] is None
    assert json.loads((tmp_path / "all" / "results.json").read_text())["evaluation"]["conner"]["relevance_model"] is not None
    r = CliRunner().invoke(cli, ["compare", str(tmp_path / "all"), str(tmp_path / "some"), "--format", "json"])
    assert r.exit_code == 0, r.output
    some["evaluation"]["conner"]["relevance_model"] = "other-scorer@1"
    (tmp_path / "some" / "results.json").write_text(json.dumps(some), encoding="utf-8")
    r = CliRunner().invoke(cli, ["compare", str(tmp_path / "all"), str(tmp_path / "some")])
    assert r.exit_code != 0 and "conner.relevance_model" in r.output, r.output


def test_a_run_that_did_not_measure_coherence_paragraph_records_no_coherence_model_and_still_compares(tmp_path):
    # --metrics without coherence_paragraph: conner:coherence_model is neither loaded nor recorded (null), so compare
    # reads it only when both runs record one; two runs with different coherence models are still not compared
    p = write(tmp_path, LINES[:2])
    for name, extra in (("all", []), ("some", ["--metrics", "factuality,relevance"])):
        r = CliRunner().invoke(cli, ["evaluate", "--task", "conner:coherence_model=fake", "-i", str(p), "-o", str(tmp_path / name), *FAKES, *extra])
        assert r.exit_code == 0, r.output
    some = json.loads((tmp_path / "some" / "results.json").read_text())
    assert some["evaluation"]["conner"]["coherence_paragraph_model"] is None
    assert json.loads((tmp_path / "all" / "results.json").read_text())["evaluation"]["conner"]["coherence_paragraph_model"].startswith("fake-scorer@1")
    r = CliRunner().invoke(cli, ["compare", str(tmp_path / "all"), str(tmp_path / "some"), "--format", "json"])
    assert r.exit_code == 0, r.output
    some["evaluation"]["conner"]["coherence_paragraph_model"] = "other-scorer@1: the sigmoid of its score for (query, knowledge)"
    (tmp_path / "some" / "results.json").write_text(json.dumps(some), encoding="utf-8")
    r = CliRunner().invoke(cli, ["compare", str(tmp_path / "all"), str(tmp_path / "some")])
    assert r.exit_code != 0 and "conner.coherence_paragraph_model" in r.output, r.output
