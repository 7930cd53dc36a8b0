"""``vericite evaluate`` with a judge that fails: one that raises (not a model server's BackendError) or gives back
no list of judgements is one line naming it and exit 2, not a traceback; one whose judgements are garbage (NaN,
a string, 7.0 as the probability) has them counted as unparseable and its answers left out, never scored."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from vericite import registry
from vericite.cli.main import cli
from vericite.types import Judgement

ITEM = {"sample_id": "q1", "question": "Who wrote it?", "docs": [{"title": "Song", "text": "Paul Simon wrote the song."}],
        "qa_pairs": [{"question": "Who?", "short_answers": ["Paul Simon"]}], "output": "Paul Simon wrote it [1]."}  # fmt: skip


class Bad:
    id = "bad@1"
    labels = ("supported", "not_supported")

    def __init__(self, how):
        self.how = how

    def judge(self, pairs):
        if self.how == "raise":
            raise RuntimeError("judge exploded")
        if self.how == "none":
            return None
        p = {"nan": float("nan"), "str": "0.9", "big": 7.0}[self.how]
        return [Judgement(self.id, x.claim, x.evidence, p, "supported") for x in pairs]


@pytest.fixture()
def result(tmp_path):
    f = tmp_path / "result.json"
    f.write_text(json.dumps({"args": {"dataset_name": "asqa"}, "data": [ITEM]}), encoding="utf-8")
    return f


def evaluate(tmp_path, result, how):
    registry.judges.register("bad", lambda arg, *, ctx, **o: Bad(how), replace=True)
    try:
        return CliRunner().invoke(cli, ["evaluate", "-q", "--resamples", "20", "--task", "alce", "--input", str(result), "--judge", "bad",
                                        "--metrics", "alce_citation_recall", "--out", str(tmp_path / "ev")])  # fmt: skip
    finally:
        registry.judges.unregister("bad")


# a plugin's judge that raises: the plugin named, with the exception's class and message (registry.py guards its calls)
@pytest.mark.parametrize("how, why", [("raise", "judge 'bad' (plugin) failed: RuntimeError: judge exploded"), ("none", "judge bad@1 failed")])
def test_a_judge_that_raises_is_one_line(tmp_path, result, how, why):
    r = evaluate(tmp_path, result, how)
    assert r.exit_code == 2 and why in r.output and "Traceback" not in r.output, r.output
    assert r.exception is None or isinstance(r.exception, SystemExit)


@pytest.mark.parametrize("how", ["nan", "str", "big"])
def test_garbage_judgements_are_unparseable_never_a_score(tmp_path, result, how):
    r = evaluate(tmp_path, result, how)
    assert r.exit_code == 0 and "Traceback" not in r.output, r.output
    res = json.loads((tmp_path / "ev" / "results.json").read_text())
    assert res["counts"]["unparseable_judgements"] == 1
    m = res["metrics"]["alce_citation_recall"]
    assert m["value"] is None and m["n"] == 0 and m["details"]["answers_unjudged"] == 1  # 7.0 was "entailed": recall 1.0


class Bad3:
    """A three-way judge whose class scores are not probabilities (logits), or that gives none."""

    id = "bad3@1"
    labels = ("supports", "refutes", "not_enough_info")

    def __init__(self, how):
        self.how = how

    def judge(self, pairs):
        if self.how == "logits":
            return [Judgement(self.id, p.claim, p.evidence, 7.0, "supports", scores={"supports": 7.0, "refutes": -1.0, "not_enough_info": 0.0}) for p in pairs]
        return [Judgement(self.id, p.claim, p.evidence, 0.7, "supports") for p in pairs]  # no class scores


@pytest.mark.parametrize("how, unparseable", [("logits", 3), ("no-scores", 2)])
def test_conner_three_way_scores_that_are_no_probabilities_are_unparseable_and_counted(tmp_path, how, unparseable):
    line = {"id": "a", "query": "Capital of Italy?", "knowledge": "Rome is the capital of Italy. Rome is old.", "answer": "Rome",
            "evidence": ["Rome is the capital of Italy and is old."]}  # fmt: skip
    (tmp_path / "k.jsonl").write_text(json.dumps(line) + "\n", encoding="utf-8")
    registry.judges.register("bad3", lambda arg, *, ctx, **o: Bad3(how), replace=True)
    try:
        r = CliRunner().invoke(cli, ["evaluate", "-q", "--resamples", "20", "--task", "conner", "--input", str(tmp_path / "k.jsonl"), "--judge", "bad3",
                                     "--lm", "fake", "--relevance-model", "fake", "--out", str(tmp_path / "ev")])  # fmt: skip
    finally:
        registry.judges.unregister("bad3")
    assert r.exit_code == 0 and "Traceback" not in r.output, r.output
    res = json.loads((tmp_path / "ev" / "results.json").read_text())
    m = res["metrics"]
    assert res["counts"]["unparseable_judgements"] == unparseable  # was 0, and factuality 7.0 with logits
    assert m["factuality"]["value"] is None and m["factuality"]["details"]["left_out"] == {"no sentence could be judged (unparseable judgements)": 1}
    if how == "logits":
        assert m["validity"]["value"] is None and m["validity"]["details"]["left_out"] == {"no judgement could be read": 1}


class BadScorer:
    id = "badscorer@1"

    def __init__(self, how):
        self.how = how

    def score(self, pairs):
        return [] if self.how == "short" else [float("nan")] * len(pairs)


@pytest.mark.parametrize("how, why", [("nan", "the relevance model gave no score (nan)"), ("short", "the relevance model gave 0 scores for 1 pairs")])
def test_conner_relevance_from_a_scorer_without_numbers_is_not_computed_never_zero(tmp_path, how, why):
    line = {"id": "a", "query": "Capital of Italy?", "knowledge": "Rome is the capital of Italy. Rome is old.", "answer": "Rome"}
    (tmp_path / "k.jsonl").write_text(json.dumps(line) + "\n", encoding="utf-8")
    registry.scorers.register("badscorer", lambda arg, *, ctx, **o: BadScorer(how), replace=True)
    try:
        r = CliRunner().invoke(cli, ["evaluate", "-q", "--resamples", "20", "--task", "conner", "--input", str(tmp_path / "k.jsonl"), "--judge", "fake-3way",
                                     "--lm", "fake", "--relevance-model", "badscorer", "--metrics", "relevance", "--out", str(tmp_path / "ev")])  # fmt: skip
    finally:
        registry.scorers.unregister("badscorer")
    assert r.exit_code == 0, r.output
    m = json.loads((tmp_path / "ev" / "results.json").read_text())["metrics"]["relevance"]
    assert m["value"] is None and m["n"] == 0 and m["reason"] == why  # NaN was reported as relevance 0.0
