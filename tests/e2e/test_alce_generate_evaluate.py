"""The two halves of ALCE as one system: ``vericite generate`` an ALCE baseline over an ALCE file, ``vericite
evaluate --task alce`` of the run folder with a table judge, ``vericite export alce`` of the run, and ``evaluate``
of the export: every metric has the same value and n, and the reference answers (kept in ``meta.alce`` by
generate, top-level in the export) are found both ways."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from vericite import registry
from vericite.cli.main import cli
from vericite.models.fake import FakeBackend, last_user_message

from tests.support.alce import TINY, verdicts

DOCS = [
    {"title": "The Sound of Silence", "text": "The Sound of Silence is a song by Simon & Garfunkel, written by Paul Simon.", "summary": "A song."},
    {"title": "Paul Simon", "text": "Paul Simon is an American musician.", "summary": "A musician."},
    {"title": "Elsewhere", "text": "Nothing to do with it."},
]
ASQA = [
    {
        "sample_id": "q1", "question": "Who wrote the sound of silence?", "docs": DOCS,
        "qa_pairs": [{"question": "Who wrote it?", "short_answers": ["Paul Simon"]}, {"question": "Who sang it?", "short_answers": ["Garfunkel"]}],
        "annotations": [{"long_answer": "Paul Simon wrote The Sound of Silence."}, {"long_answer": "It was written by Paul Simon."}],
        "answer": "Paul Simon wrote it.",
    },
    {
        "sample_id": "q2", "question": "Who is Paul Simon?", "docs": DOCS,
        "qa_pairs": [{"question": "Who is he?", "short_answers": ["a musician"]}],
        "annotations": [{"long_answer": "An American musician."}, {"long_answer": "A singer."}],
    },
]  # fmt: skip
ELI5 = [
    {"question": "Who wrote the sound of silence?", "answer": "Paul Simon wrote the song.", "claims": ["Paul Simon wrote it."], "docs": DOCS},
    {"question": "Who is Paul Simon?", "answer": "An American musician.", "claims": ["He is a musician."], "docs": DOCS},
]
QAMPARI = [
    {"id": "m1", "question": "Who wrote the sound of silence?", "answers": [["Paul Simon", "Simon"], ["Art Garfunkel"]], "docs": DOCS},
    {"id": "m2", "question": "Who is Paul Simon?", "answers": [["a musician"], ["a singer"]], "docs": DOCS},
]
#: what the model answers, by question (citations 1-based into the documents it is given: --ndoc 2, so [3] is out of range)
REPLIES = {
    "Who wrote the sound of silence?": "Paul Simon wrote The Sound of Silence [1][2]. It was a hit [3].\nignored",
    "Who is Paul Simon?": "Paul Simon is an American musician [2].",
}
QAMPARI_REPLIES = {"Who wrote the sound of silence?": "Paul Simon [1], Garfunkel [2], Nobody [3].", "Who is Paul Simon?": "a musician [2]"}


VERDICTS = verdicts(DOCS)


@pytest.fixture
def citing_model():
    """Backend ``citing:<sub-task>``: the fake model answering each question with its reply above."""

    def factory(arg, *, ctx, **options):
        replies = QAMPARI_REPLIES if arg == "qampari" else REPLIES

        def reply(messages, params):
            asked = last_user_message(messages).rsplit("Question: ", 1)[1].split("\n", 1)[0]
            return replies[asked]

        return FakeBackend(f"citing-{arg}", replies=reply)

    registry.backends.register("citing", factory, replace=True)
    yield "citing"
    registry.backends.unregister("citing")


def run(*args):
    r = CliRunner().invoke(cli, [str(a) for a in args])
    assert r.exit_code == 0, r.output
    return r


def values(out):
    res = json.loads((out / "results.json").read_text())
    return res, {k: (v["value"], v["n"]) for k, v in res["metrics"].items()}


@pytest.mark.parametrize("subtask, items", [("asqa", ASQA), ("eli5", ELI5), ("qampari", QAMPARI)])
def test_generate_evaluate_export_evaluate_agree(tmp_path, citing_model, subtask, items):
    data = tmp_path / f"{subtask}_eval.json"
    data.write_text(json.dumps(items), encoding="utf-8")
    prompt = tmp_path / "prompt.json"
    prompt.write_text(json.dumps(TINY), encoding="utf-8")
    table = tmp_path / "verdicts.jsonl"
    table.write_text("".join(json.dumps(v) + "\n" for v in VERDICTS), encoding="utf-8")
    gen = tmp_path / "v1"
    run("generate", "--method", "vanilla", "--dataset", data, "--model", f"{citing_model}:{subtask}", "--ndoc", 2, "--shot", 0,
        "--method-arg", f"prompt={prompt}", "--out", gen, "-q", "--no-cache")  # fmt: skip
    records = [json.loads(x) for x in (gen / "samples.jsonl").read_text().splitlines()]
    assert all("annotations" not in r and ("alce" in r["meta"]) == (subtask != "qampari") for r in records if subtask != "qampari")  # references: meta.alce
    # the record's answer is parsed as the ALCE task parses it
    assert all(r["answer"]["parser"] == "alce-citation@1" for r in records)

    judge = ["--judge", f"table:{table}"] if subtask == "asqa" else ["--metrics", "output_length,rouge_lsum" if subtask == "eli5" else "qampari_recall,qampari_precision,qampari_f1"]
    run("evaluate", "--task", "alce", "--input", gen, *judge, "--out", tmp_path / "e1", "-q", "--resamples", 50)
    result = tmp_path / f"{subtask}_result.json"
    run("export", "alce", gen, "--out", result)
    run("evaluate", "--task", "alce", "--input", result, *judge, "--out", tmp_path / "e2", "-q", "--resamples", 50)

    res1, from_run = values(tmp_path / "e1")
    res2, from_export = values(tmp_path / "e2")
    assert res1["evaluation"]["alce"]["subtask"] == res2["evaluation"]["alce"]["subtask"] == subtask
    assert from_run == from_export
    assert res1["counts"].get("citation_status") == res2["counts"].get("citation_status")
    if subtask == "asqa":
        # hand-worked (tests/e2e/test_alce_evaluate.py has the same answers): q1 recall 1/2 ([3] out of range),
        # precision 1/2 ([2] not needed); q2 1 and 1; STR-EM 1/2 and 1
        assert from_run["alce_citation_recall"] == (0.75, 2) and from_run["alce_citation_precision"] == (0.75, 2)
        assert from_run["str_em"] == (0.75, 2) and res1["counts"]["failed_judgements"] == 0
        assert res1["counts"]["citation_status"] == {"ok": 3, "unknown_source": 1}
    if subtask in ("asqa", "eli5"):
        assert from_run["rouge_lsum"][1] == 2 and 0 < from_run["rouge_lsum"][0] < 1  # the references were found
        refs = [[a["long_answer"] for a in it["annotations"]] if subtask == "asqa" else [it["answer"]] for it in items]
        for e in ("e1", "e2"):  # read from meta.alce of the generate records, and from the export's own fields
            scored = [json.loads(x) for x in (tmp_path / e / "samples.jsonl").read_text().splitlines()]
            assert [r["meta"]["long_answers"] for r in scored] == refs
    if subtask == "qampari":
        # m1: "Paul Simon" found, "Art Garfunkel" not (1/2), 1 of 3 items right; m2: "musician" found (1/2), 1 of 1
        assert from_run["qampari_recall"] == (0.5, 2) and from_run["qampari_precision"][0] == pytest.approx(2 / 3)
