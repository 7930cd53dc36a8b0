"""evaluate/checkpoint.py over an input that grew: each answer's line records its record's sha256, so a resumed
evaluation keeps the answers scored that are unchanged, scores those added, and refuses (one line naming it) an
answer scored that changed or is gone; a checkpoint of the previous header (whole-file sha256 only) resumes over
the same file, or over it with lines appended, and is refused otherwise with the way out."""

from __future__ import annotations

import json

import pytest

from tests.support.checkpoint import Cut
from tests.support.ray_runs import write_answers
from vericite.errors import VericiteError
from vericite.evaluate.checkpoint import NAME, PREVIOUS, VERSION, AnswerCheckpoint, grown_from, record_sha256
from vericite.paths import file_sha256


def recs(*ids, changed=()):
    return [(i, {"id": i, "question": f"{i}?", "answer": f"answer {i}" + (" (edited)" if i in changed else "")}) for i in ids]


def head(sha="abc"):
    return {"config": {"judge": "fake", "task": "kalma"}, "input_sha256": sha}


def scored(tmp_path, answers, sha="abc"):
    ck = AnswerCheckpoint.open(tmp_path, head(sha), answers=answers, input_file="in.jsonl")
    for i, (sid, _) in enumerate(answers):
        ck.add(i, sid, {"x": i}, [], {"m": {"prompt_tokens": 1, "completion_tokens": 1, "calls": 1}})
    return ck


def test_the_record_hash_is_canonical():
    assert record_sha256({"a": 1, "b": "é"}) == record_sha256({"b": "é", "a": 1}) != record_sha256({"a": 2, "b": "é"})


def test_a_grown_input_resumes_with_the_answers_scored_and_says_so(tmp_path):
    scored(tmp_path, recs("a", "b"))
    said = []
    ck = AnswerCheckpoint.open(tmp_path, head("def"), resume=True, answers=recs("a", "b", "c"), input_file="in.jsonl", note=said.append)
    assert ck.done == {0: "a", 1: "b"} and not ck.is_done(2, "c")
    assert said == [f"note: resuming the evaluation in {tmp_path}: 2 answers already scored (unchanged), 1 more in in.jsonl to score"]
    assert ck.usage["m"]["calls"] == 2  # what the answers read back cost
    ck.add(2, "c", {}, [])
    lines = [json.loads(x) for x in (tmp_path / NAME).read_text().splitlines()]
    assert lines[0]["checkpoint"] == VERSION and lines[0]["input_sha256"] == "def"  # the input it now covers
    assert [x["record_sha256"] for x in lines[1:]] == [record_sha256(r) for _, r in recs("a", "b", "c")]


def test_answers_moved_in_the_input_are_found_by_their_id(tmp_path):
    scored(tmp_path, recs("a", "b"))
    ck = AnswerCheckpoint.open(tmp_path, head("def"), resume=True, answers=recs("c", "b", "a"), note=lambda _: None)
    assert ck.done == {2: "a", 1: "b"} and not ck.is_done(0, "c")


def test_an_answer_scored_that_changed_is_refused_naming_it_and_the_file_is_kept(tmp_path):
    scored(tmp_path, recs("a", "b"))
    before = (tmp_path / NAME).read_text()
    with pytest.raises(VericiteError, match=r"answer 'b' \(answer 2 of in.jsonl\) has changed since it was scored .*rerun without --resume, or use another --out$"):
        AnswerCheckpoint.open(tmp_path, head("def"), resume=True, answers=recs("a", "b", "c", changed="b"), input_file="in.jsonl")
    with pytest.raises(VericiteError, match=r"answer 'a', scored as answer 1, is no longer in in.jsonl .*answers may be added, not removed or changed"):
        AnswerCheckpoint.open(tmp_path, head("def"), resume=True, answers=recs("b", "c"), input_file="in.jsonl")
    assert (tmp_path / NAME).read_text() == before
    with pytest.raises(VericiteError, match=r"other settings \(judge\)"):  # the settings are still compared first
        AnswerCheckpoint.open(tmp_path, {**head("def"), "config": {"judge": "triple", "task": "kalma"}}, resume=True, answers=recs("a", "b"))
    # vericite run's: a level whose answers changed is evaluated again
    again = AnswerCheckpoint.open(tmp_path, head("def"), resume=True, answers=recs("a", "b", changed="b"), changed="restart")
    assert again.done == {} and (tmp_path / NAME).read_text().count("\n") == 1


def previous(tmp_path, answers_file, n):
    """A checkpoint as the previous header (evaluate-answers@2) wrote it: the whole file's sha256, no record hashes."""
    lines = [{"checkpoint": PREVIOUS, **head(file_sha256(answers_file))}]
    lines += [{"answer": i, "id": f"a{i:02d}", "judged": {}, "scores": {}, "judgements": [], "usage": {}} for i in range(n)]
    (tmp_path / NAME).write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")


def read(path):
    from vericite.evaluate import read_answers

    return [(it.sample.id, it.record) for it in read_answers(path).items]


def test_a_previous_checkpoint_resumes_over_the_same_file_or_the_file_grown_else_says_how_to_go_on(tmp_path):
    ck_dir, answers = tmp_path / "o", write_answers(tmp_path / "a.jsonl", 3)
    ck_dir.mkdir()
    previous(ck_dir, answers, 3)
    ck = AnswerCheckpoint.open(ck_dir, head(file_sha256(answers)), resume=True, answers=read(answers), input_file=answers)
    assert ck.done == {0: "a00", 1: "a01", 2: "a02"}
    lines = [json.loads(x) for x in (ck_dir / NAME).read_text().splitlines()]  # written again as this version
    assert lines[0]["checkpoint"] == VERSION and all("record_sha256" in x for x in lines[1:])

    previous(ck_dir, answers, 3)
    legacy = (ck_dir / NAME).read_text().replace(PREVIOUS, "evaluate-answers@1", 1)  # the header before that: the same
    (ck_dir / NAME).write_text(legacy, encoding="utf-8")
    assert AnswerCheckpoint.open(ck_dir, head(file_sha256(answers)), resume=True, answers=read(answers), input_file=answers).done == ck.done

    previous(ck_dir, answers, 3)
    write_answers(answers, 5)  # the same three lines, two appended
    assert grown_from(answers, json.loads((ck_dir / NAME).read_text().splitlines()[0])["input_sha256"])
    ck = AnswerCheckpoint.open(ck_dir, head(file_sha256(answers)), resume=True, answers=read(answers), input_file=answers, note=lambda _: None)
    assert ck.done == {0: "a00", 1: "a01", 2: "a02"}

    write_answers(answers, 3)
    previous(ck_dir, answers, 3)
    answers.write_text(answers.read_text().replace("P1 worked", "P1 once worked"), encoding="utf-8")
    before = (ck_dir / NAME).read_text()
    with pytest.raises(VericiteError, match=r"written before answers were checked one by one, and .*a.jsonl is no longer the file it scored nor that file with answers appended.*rerun without --resume"):
        AnswerCheckpoint.open(ck_dir, head(file_sha256(answers)), resume=True, answers=read(answers), input_file=answers)
    assert (ck_dir / NAME).read_text() == before


def test_evaluate_over_a_grown_file_judges_only_the_new_answers_and_writes_what_from_scratch_does(tmp_path, monkeypatch):
    from vericite.evaluate import EvaluateConfig
    from vericite.runs.results import evaluate_file

    cfg = EvaluateConfig(judge="fake", attribution_judge="fake-4class", resamples=30)
    answers = write_answers(tmp_path / "a.jsonl", 4)
    first = Cut(monkeypatch)
    evaluate_file(answers, tmp_path / "o", cfg)
    write_answers(answers, 7)
    resumed = Cut(monkeypatch)
    got = evaluate_file(answers, tmp_path / "o", cfg, resume=True)
    whole = Cut(monkeypatch)
    want = evaluate_file(answers, tmp_path / "scratch", cfg)
    assert resumed.calls == 2 * 3 and whole.calls == 2 * 7 and first.calls == 2 * 4  # each answer asks its two judges once
    assert got["metrics"] == want["metrics"] and got["counts"] == want["counts"] and got["judge_usage"] == want["judge_usage"]
