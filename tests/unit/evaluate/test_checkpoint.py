"""evaluate/checkpoint.py: the per-answer checkpoint's file (a torn last line, another evaluation's settings) and
the memoising judge."""

from __future__ import annotations

import json

import pytest

from vericite.errors import VericiteError
from vericite.evaluate.checkpoint import NAME, AnswerCheckpoint, MemoJudge, differences, pair_key
from vericite.fakes.judges import KeywordJudge
from vericite.types import JudgePair, Judgement

HEAD = {"config": {"judge": "fake", "task": "kalma"}, "input_sha256": "abc"}


def ok(pair):
    return Judgement("fake@1", pair.claim, pair.evidence, 0.9, "supported").to_dict()


def test_a_torn_last_line_is_cut_and_the_answers_before_it_kept(tmp_path):
    ck = AnswerCheckpoint.open(tmp_path, HEAD)
    ck.fresh["k1"] = ok(JudgePair("e", "c"))
    ck.add(0, "a", {"x": 1}, [])
    ck.add(1, "b", {"x": 2}, [])
    with open(tmp_path / NAME, "a", encoding="utf-8") as f:
        f.write('{"answer": 2, "id": "c", "judg')  # killed while writing
    again = AnswerCheckpoint.open(tmp_path, HEAD, resume=True)
    assert sorted(again.done) == [0, 1] and again.is_done(1, "b") and not again.is_done(1, "other") and not again.is_done(2, "c")
    assert list(again.memo) == ["k1"]
    again.add(2, "c", {}, [])
    assert [json.loads(line).get("answer") for line in (tmp_path / NAME).read_text().splitlines()] == [None, 0, 1, 2]


def test_another_evaluations_checkpoint_is_one_line_naming_what_differs(tmp_path):
    AnswerCheckpoint.open(tmp_path, HEAD)
    other = {"config": {"judge": "triple", "task": "kalma"}, "input_sha256": "def"}
    with pytest.raises(VericiteError, match=r"other settings \(judge, the input file\)"):
        AnswerCheckpoint.open(tmp_path, other, resume=True)
    assert differences(HEAD, HEAD) == "the settings"
    fresh = AnswerCheckpoint.open(tmp_path, other)  # without resume: started again
    assert not fresh.done and (tmp_path / NAME).read_text().count("\n") == 1


def test_only_ok_judgements_are_taken_back(tmp_path):
    ck = AnswerCheckpoint.open(tmp_path, HEAD)
    ck.fresh.update({"good": ok(JudgePair("e", "c")), "bad": {**ok(JudgePair("e", "d")), "status": "unparseable"}})
    ck.add(0, "a", {}, [])
    assert set(AnswerCheckpoint.open(tmp_path, HEAD, resume=True).memo) == {"good"}


def test_the_memo_judge_asks_each_pair_once_and_gives_the_judges_answers(tmp_path):
    real = KeywordJudge()
    memo, fresh = {}, {}
    judge = MemoJudge(real, memo, fresh)
    pairs = [JudgePair("Ann was a painter", "painter"), JudgePair("Ann was a painter", "poet"), JudgePair("x", "y", question="q?", context={"t": 1})]
    first = judge.judge(pairs + pairs[:1])
    assert [j.to_dict() for j in first] == [j.to_dict() for j in real.judge(pairs + pairs[:1])]
    assert judge.calls == 1 and len(memo) == 3 == len(fresh)
    assert [j.to_dict() for j in judge.judge(pairs)] == [j.to_dict() for j in first[:3]] and judge.calls == 1
    assert judge.id == "fake@1" and judge.options() == {}  # the rest is the judge's
    # the whole pair is the key: another question or context is another pair
    assert pair_key("fake@1", pairs[2]) != pair_key("fake@1", JudgePair("x", "y", question="q?", context={"t": 2}))
    assert pair_key("fake@1", pairs[0]) != pair_key("other@1", pairs[0])


def test_the_fingerprint_records_a_tasks_options_that_differ_from_its_defaults():
    from types import SimpleNamespace

    from vericite.evaluate.checkpoint import fingerprint
    from vericite.registry import create

    cfg = SimpleNamespace(judge="fake", threads=2, resamples=10, seed=0)
    default = fingerprint(cfg, create("tasks", "alce-asqa"), "abc")
    assert default == fingerprint(cfg, "alce-asqa", "abc")  # the task's name alone: as checkpoints were written before
    assert default == fingerprint(cfg, create("tasks", "alce-asqa:at_most_citations=3"), "abc")  # a default spelled out
    one = fingerprint(cfg, create("tasks", "alce-asqa:at_most_citations=1"), "abc")
    assert one["config"]["task"] == "alce-asqa" and one["config"]["task_options"] == {"at_most_citations": 1}
    assert differences(default, one) == "task option at_most_citations"
    every = fingerprint(cfg, create("tasks", "alce-asqa:at_most_citations=all"), "abc")
    assert every["config"]["task_options"] == {"at_most_citations": None} and differences(one, every) == "task option at_most_citations"
    assert fingerprint(cfg, create("tasks", "conner:shuffles=5"), "abc") == fingerprint(cfg, "conner", "abc")
    assert differences(fingerprint(cfg, "conner", "abc"), fingerprint(cfg, create("tasks", "conner:shuffles=7,unrelated=2"), "abc")) == "task option shuffles, task option unrelated"
