"""``vericite evaluate --task alce-short --reader llm:<model>``: a model reads each output's final short answer, which
``answer_em`` and ``answer_f1`` score instead of the whole output (VTG's reading of NQ and WebQuestions); with a
fake reader: EM 0 of a sentence becomes 1 of its answer, the reader and its answers are recorded, its calls counted
in ``judge_usage``, a failed reading left out with its reason (never a 0), ``--resume`` with another reader refused,
and the reader refused in one line where it reads nothing."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from vericite import registry
from vericite.cli.main import cli
from vericite.errors import BackendError
from vericite.metrics.alce_reader import PROMPTS, parse_reader_spec, short_answer
from vericite.models.fake import FakeBackend, last_user_message

DOCS = [{"title": "France", "text": "Paris is the capital of France."}, {"title": "Germany", "text": "Berlin is the capital of Germany."}]
ITEMS = [
    {"id": "q1", "question": "What is the capital of France?", "answers": [["Paris", "Paris, France"]], "passages": DOCS,
     "answer": "The capital of France is Paris [1]."},
    {"id": "q2", "question": "What is the capital of Germany?", "answers": [["Berlin"]], "passages": DOCS,
     "answer": "Germany's capital is Bonn [2]."},
    {"id": "q3", "question": "What is the capital of Spain?", "answers": [["Madrid"]], "passages": DOCS,
     "answer": "It is Madrid."},
]
#: what the fake reader answers, by a word of the response it is given; "FAIL": its call fails
READS = {"Paris": "Paris\nbecause the response says so", "Bonn": "Final answer: Bonn", "Madrid": "FAIL"}


@pytest.fixture
def reader_model():
    made: dict[str, FakeBackend] = {}
    loads: list[str] = []

    def factory(arg, *, ctx, **options):
        loads.append(arg)
        def reply(messages, params):
            text = last_user_message(messages)
            response = text.split("Response: ", 1)[1]
            for word, answer in READS.items():
                if word in response:
                    if answer == "FAIL":
                        raise BackendError("the server said 500")
                    return answer
            return "unknown"

        return made.setdefault(arg or "reader", FakeBackend(f"fake:{arg or 'reader'}", replies=reply))

    registry.backends.register("reading", factory, replace=True)
    made["loads"] = loads  # type: ignore[assignment]
    yield made
    registry.backends.unregister("reading")


def answers_file(tmp_path, items=ITEMS):
    f = tmp_path / "answers.jsonl"
    f.write_text("".join(json.dumps(r) + "\n" for r in items), encoding="utf-8")
    return f


def evaluate(*args):
    return CliRunner().invoke(cli, ["evaluate", "-q", "--resamples", "20", "--task", "alce-short", "--no-cache", *map(str, args)])


def load(out):
    res = json.loads((out / "results.json").read_text())
    recs = [json.loads(x) for x in (out / "samples.jsonl").read_text().splitlines()]
    return res, recs


def test_without_a_reader_a_sentence_never_scores_em(tmp_path):
    r = evaluate("--input", answers_file(tmp_path), "--out", tmp_path / "e")
    assert r.exit_code == 0, r.output
    res, recs = load(tmp_path / "e")
    assert res["metrics"]["answer_em"]["value"] == 0.0 and res["metrics"]["answer_em"]["n"] == 3
    assert res["metrics"]["answer_hit"]["value"] == pytest.approx(2 / 3)
    assert "reader" not in res["evaluation"]["alce"] and res["config"]["reader"] is None
    assert "reader_answer" not in recs[0]["scores"]["alce"]


def test_the_readers_answer_is_what_em_and_f1_score(tmp_path, reader_model):
    out = tmp_path / "e"
    r = evaluate("--input", answers_file(tmp_path), "--out", out, "--reader", "llm:reading:r1")
    assert r.exit_code == 0, r.output
    res, recs = load(out)
    em, f1 = res["metrics"]["answer_em"], res["metrics"]["answer_f1"]
    # q1: "Paris" (first line of the reply) EM 1; q2: "Bonn" (echoed "Final answer:" cut) EM 0; q3: the call failed,
    # left out: n = 2, never a 0
    assert (em["value"], em["n"], f1["value"], f1["n"]) == (0.5, 2, 0.5, 2)
    assert em["judge"] == "alce-final-answer@1:reading:r1" and em["details"]["reader_failures"] == 1
    assert res["metrics"]["answer_hit"]["value"] == pytest.approx(2 / 3)  # still the whole output's
    alce = res["evaluation"]["alce"]
    assert (alce["reader"], alce["reader_prompt"], alce["reader_calls"], alce["reader_failures"]) == ("llm:reading:r1", "alce-final-answer@1", 3, 1)
    assert res["counts"]["reader_failures"] == 1 and res["config"]["reader"] == "llm:reading:r1"
    got = [(s["scores"]["alce"].get("reader_answer"), s["scores"]["alce"].get("answer_em")) for s in recs]
    assert got == [("Paris", 1.0), ("Bonn", 0.0), (None, None)]
    assert "500" in recs[2]["scores"]["alce"]["not_computed"]["answer_em"]
    # the reader was given the question and the output without its citations
    backend = reader_model["r1"]
    first = backend.prompts[0][-1]["content"]
    assert "Question: What is the capital of France?" in first and "Response: The capital of France is Paris.\n" in first
    assert backend.calls["generate"] == 3
    # its calls count like a judge's, under its model's name (a failed call has no usage)
    assert res["judge_usage"]["reading:r1"]["calls"] == 2
    assert "reader of final answers (answer_em, answer_f1): llm:reading:r1 (alce-final-answer@1), 1 failed" in " ".join(r.output.split())


def test_an_empty_output_is_not_read_and_an_answer_without_gold_is_left_out(tmp_path, reader_model):
    items = [ITEMS[0], {**ITEMS[1], "answer": ""}, {**ITEMS[1], "id": "q4", "answers": []}]
    r = evaluate("--input", answers_file(tmp_path, items), "--out", tmp_path / "e", "--reader", "llm:reading:r3")
    assert r.exit_code == 0, r.output
    res, recs = load(tmp_path / "e")
    # the empty output scores 0 as without a reader (it says nothing); the line without gold answers is not read
    assert (res["metrics"]["answer_em"]["value"], res["metrics"]["answer_em"]["n"]) == (0.5, 2)
    assert res["evaluation"]["alce"]["reader_calls"] == 1 and reader_model["r3"].calls["generate"] == 1
    assert [x["scores"].get("alce", {}).get("reader_answer") for x in recs] == ["Paris", "", None]


def test_every_reading_failed_is_not_computed_with_the_reason(tmp_path, reader_model):
    items = [ITEMS[2]]
    r = evaluate("--input", answers_file(tmp_path, items), "--out", tmp_path / "e", "--reader", "llm:reading:r2")
    assert r.exit_code == 0, r.output
    res, _ = load(tmp_path / "e")
    em = res["metrics"]["answer_em"]
    assert em["value"] is None and em["n"] == 0 and "the reader failed on every answer" in em["reason"]


def test_resume_with_another_reader_is_refused(tmp_path, reader_model):
    f, out = answers_file(tmp_path), tmp_path / "e"
    assert evaluate("--input", f, "--out", out, "--reader", "llm:reading:r1").exit_code == 0
    r = evaluate("--input", f, "--out", out, "--reader", "llm:reading:other", "--resume")
    assert r.exit_code != 0 and "other settings (reader)" in r.output and "Traceback" not in r.output
    r = evaluate("--input", f, "--out", out, "--resume")  # no reader is another evaluation too
    assert r.exit_code != 0 and "other settings (reader)" in r.output
    r = evaluate("--input", f, "--out", out, "--reader", "llm:reading:r1", "--resume")
    assert r.exit_code == 0, r.output


def test_on_a_pool_of_workers_the_reader_reads_on_the_driver_once(tmp_path, reader_model):
    """``--ray``'s path (its thread pool here: the same AnswerWorker, no Ray started): the workers judge the answers
    and never load the reader; the driver reads each answer once, and the evaluation is the local one."""
    from vericite.evaluate import EvaluateConfig, evaluate_items, read_answers
    from vericite.evaluate.checkpoint import AnswerCheckpoint
    from vericite.evaluate.inputs import load_task
    from vericite.runs.distributed import answer_pool

    cfg = EvaluateConfig(task="alce-short", judge="llm:fake:judge", reader="llm:reading:pooled", resamples=0, cache=False)
    f = answers_file(tmp_path)
    got = []
    for name, workers in (("local", None), ("pool", answer_pool(cfg, ray=None, workers=2))):
        ck = AnswerCheckpoint.open(tmp_path / name, {"test": name})
        got.append(evaluate_items(read_answers(f, load_task("alce-short")).items, cfg, checkpoint=ck, workers=workers))
        assert len((tmp_path / name / ".evaluate-answers.jsonl").read_text().splitlines()) == 4  # judged answer by answer
    (local, local_recs), (pooled, pooled_recs) = got
    assert reader_model["loads"] == ["pooled", "pooled"]  # one evaluation, one load each: never by a worker
    assert pooled["metrics"]["answer_em"] == local["metrics"]["answer_em"] and pooled["metrics"]["answer_em"]["value"] == 0.5
    assert [r["scores"]["alce"].get("reader_answer") for r in pooled_recs] == ["Paris", "Bonn", None]
    assert pooled["metrics"]["alce_citation_recall"] == local["metrics"]["alce_citation_recall"]


def test_compare_rebuilds_the_readers_scores_and_refuses_another_reader(tmp_path, reader_model):
    from vericite.metrics.alce_family import AlceMetric
    from vericite.stats import point

    f = answers_file(tmp_path)
    outs = {}
    for name, extra in (("r1", ["--reader", "llm:reading:r1"]), ("again", ["--reader", "llm:reading:r1"]), ("other", ["--reader", "llm:reading:r2"]), ("none", [])):
        outs[name] = tmp_path / name
        assert evaluate("--input", f, "--out", outs[name], *extra).exit_code == 0
    res, recs = load(outs["r1"])
    cs = AlceMetric.statistics_from_records(recs)
    for m in ("answer_em", "answer_f1", "answer_hit"):
        assert point(cs.statistics[m], len(recs)) == res["metrics"][m]["value"] and cs.ns[m] == res["metrics"][m]["n"], m
    r = CliRunner().invoke(cli, ["compare", "--resamples", "20", "--json", str(outs["r1"]), str(outs["again"])])
    assert r.exit_code == 0, r.output
    for other in ("other", "none"):
        r = CliRunner().invoke(cli, ["compare", "--resamples", "20", str(outs["r1"]), str(outs[other])])
        assert r.exit_code == 2 and "alce.reader" in r.output, r.output


def test_the_readers_calls_go_through_the_call_cache(tmp_path, reader_model, monkeypatch):
    monkeypatch.setenv("VERICITE_CACHE", str(tmp_path / "cache"))
    f = answers_file(tmp_path, ITEMS[:2])
    args = ["evaluate", "-q", "--resamples", "0", "--task", "alce-short", "--input", str(f), "--reader", "llm:reading:cached"]
    for name in ("first", "again"):
        r = CliRunner().invoke(cli, [*args, "--out", str(tmp_path / name)])
        assert r.exit_code == 0, r.output
    assert reader_model["cached"].calls["generate"] == 2  # the second evaluation's readings came from the cache
    first, again = (load(tmp_path / n)[0] for n in ("first", "again"))
    assert again["metrics"]["answer_em"]["value"] == first["metrics"]["answer_em"]["value"] == 0.5
    assert again["judge_usage"] == first["judge_usage"]  # cached calls count with the tokens first reported


def test_a_checkpoint_made_before_the_reader_existed_resumes_without_one(tmp_path):
    from vericite.evaluate import EvaluateConfig
    from vericite.evaluate.checkpoint import fingerprint

    assert "reader" not in fingerprint(EvaluateConfig(task="alce-short"), "alce-short", "0" * 64)["config"]
    assert fingerprint(EvaluateConfig(task="alce-short", reader="llm:x"), "alce-short", "0" * 64)["config"]["reader"] == "llm:x"


@pytest.mark.parametrize(
    "args, says",
    [
        (["--reader", "nli:x"], "want llm:<model>[@<prompt number>]"),
        (["--reader", "llm:"], "want llm:<model>"),
        (["--reader", "llm:x@7"], "unknown prompt number 7"),
        (["--reader", "llm:x", "--metrics", "answer_hit"], "--metrics leaves both out"),
        (["--reader", "llm:x", "--task", "alce-asqa"], "neither"),
    ],
)
def test_a_reader_that_would_read_nothing_is_one_line(tmp_path, args, says):
    r = evaluate("--input", answers_file(tmp_path), "--out", tmp_path / "e", *args)
    assert r.exit_code != 0 and says in r.output and "Traceback" not in r.output, r.output


def test_a_task_without_short_answers_refuses_a_reader():
    from types import SimpleNamespace

    from vericite.errors import VericiteError
    from vericite.evaluate.inputs import load_task
    from vericite.evaluate.pipeline import check_reader

    with pytest.raises(VericiteError, match="task kalma scores no final short answer"):
        check_reader(SimpleNamespace(reader="llm:x"), load_task("kalma"), None)
    check_reader(SimpleNamespace(reader=None), load_task("kalma"), None)  # none given: nothing to say


def test_short_answer_and_spec():
    assert short_answer("  Paris.\nmore") == "Paris." and short_answer("Answer: 1969") == "1969" and short_answer("\n\n") == ""
    assert parse_reader_spec("llm:qwen2.5-7b") == ("qwen2.5-7b", 1) and parse_reader_spec("llm:qwen@1") == ("qwen", 1)
    assert parse_reader_spec("llm:openai:gpt-4o") == ("openai:gpt-4o", 1)
    assert "{question}" in PROMPTS[1]["user"] and "{output}" in PROMPTS[1]["user"]
