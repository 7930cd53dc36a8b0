"""Four-class judges: class probabilities from next-token log-probabilities (never parsed text), the AutoIS and
3-way NLI mappings, ids and specs."""

from __future__ import annotations

import json
import math

import pytest

from vericite.errors import VericiteError
from vericite.judges.four_class import (
    CAQA_LABELS,
    LLM4Judge,
    NLI3Mapped,
    class_of_word,
    class_probabilities,
    map_nli3,
)
from vericite.models.fake import FakeBackend
from vericite.registry import BuildContext, create
from vericite.types import JudgePair, Judgement

PAIR = JudgePair("Leeds is where John was born.", "John was born in Leeds.", question="Where was John born?")


def test_class_probabilities_softmax_over_class_mass():
    lp = {"Supportive": math.log(0.5), " Supportive": math.log(0.1), "Irrelevant": math.log(0.2), "Contr": math.log(0.2), "Yes": -0.1}
    probs, mass = class_probabilities(lp)
    assert probs is not None and set(probs) == set(CAQA_LABELS)
    assert probs["supportive"] == pytest.approx(0.6) and probs["irrelevant"] == pytest.approx(0.2)
    assert probs["contradictory"] == pytest.approx(0.2) and probs["insufficient"] == 0.0
    assert class_probabilities({"Yes": -0.1, "No": -2.0}) == (None, {})
    # one token listed under two spellings counts once
    probs, _ = class_probabilities({"Supportive": -1.0, "supportive": -1.0, "Irrelevant": -1.0})
    assert probs["supportive"] == pytest.approx(0.5)


def test_class_of_word_reads_first_tokens():
    assert class_of_word(" Support") == "supportive" and class_of_word("Ins") == "insufficient"
    assert class_of_word("Contradictory") == "contradictory" and class_of_word("Ir") is None and class_of_word("In") is None


def test_llm4_takes_the_class_with_most_mass_and_keeps_the_numbers():
    fake = FakeBackend("fake", replies={"Leeds": "Contradictory"})
    j = LLM4Judge(fake).judge([PAIR])[0]
    assert j.status == "ok" and j.label == "contradictory" and j.judge == "llm4:fake@1"
    assert set(j.scores) == set(CAQA_LABELS) and sum(j.scores.values()) == pytest.approx(1.0, abs=1e-5)
    assert j.probability == j.scores["supportive"]
    assert "class_logmass" in json.loads(j.raw)
    prompt = fake.prompts[-1]
    assert "Insufficient: Choose this" in prompt[0]["content"] and "Question: Where was John born?" in prompt[1]["content"]
    assert Judgement.from_dict(j.to_dict()).scores == j.scores


def test_llm4_without_class_words_is_unparseable_never_a_default():
    class NoClass(FakeBackend):
        def next_token_logprobs(self, prompts, candidates):
            return [{"Yes": -0.1} for _ in prompts]

    j = LLM4Judge(NoClass("fake")).judge([PAIR])[0]
    assert j.status == "unparseable" and j.label is None and j.probability is None


def test_llm4_generate_path_reads_top_logprobs():
    class GenOnly:
        def identity(self):
            return FakeBackend("fake:gen").identity()

        def generate(self, prompts, params):
            from vericite.types import Completion

            return [Completion(text="Irrelevant", top_logprobs=[{"Irrelevant": -0.1, "Supportive": -3.0}]) for _ in prompts]

    j = LLM4Judge(GenOnly()).judge([PAIR, PAIR])
    assert [x.label for x in j] == ["irrelevant", "irrelevant"] and json.loads(j[0].raw)["text"] == "Irrelevant"


def test_specs_and_mappings():
    ctx = BuildContext(cache=False)
    assert create("judges", "llm4:fake@1", ctx).id == "llm4:fake@1"
    with pytest.raises(VericiteError, match="prompt number"):
        create("judges", "llm4:fake@9", ctx)
    a = create("judges", "autois:fake", ctx)
    out = a.judge([JudgePair("John was born in Leeds", "John born Leeds"), JudgePair("Paris", "John born Leeds")])
    assert [j.label for j in out] == ["supportive", "irrelevant"] and a.id == "autois:fake@1"
    assert out[0].scores["supportive"] == pytest.approx(0.9) and out[1].scores["irrelevant"] == pytest.approx(0.9)
    with pytest.raises(VericiteError, match="already a four-class"):
        create("judges", "autois:fake-4class", ctx)


def test_nli3_maps_three_way_classes():
    assert map_nli3({"ENTAILMENT": 0.7, "neutral": 0.2, "contradiction": 0.1}) == {
        "supportive": 0.7, "insufficient": 0.0, "contradictory": 0.1, "irrelevant": 0.2}
    assert map_nli3({"LABEL_0": 1.0}) is None

    class Inner:
        id = "nli:m@1"
        labels = ("supported", "not_supported")

        def judge(self, pairs):
            raw = json.dumps({"contradiction": 0.6, "entailment": 0.3, "neutral": 0.1})
            return [Judgement(self.id, p.claim, p.evidence, 0.3, "not_supported", raw) for p in pairs]

    j = NLI3Mapped(Inner()).judge([PAIR])[0]
    assert j.label == "contradictory" and j.judge == "nli4:nli:m@1" and j.scores["supportive"] == pytest.approx(0.3)
