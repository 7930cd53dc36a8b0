"""Three-way judges: the fake by word overlap, llm3 from next-token log-probs (softmax over the three words)
and from top_logprobs behind a plain backend, nli3 from an NLI judge's classes."""

from __future__ import annotations

import json
import math

import pytest

from vericite import registry
from vericite.errors import VericiteError
from vericite.judges.three_way import LLM3Judge, NLI3Judge, label_probabilities
from vericite.models.fake import FakeBackend
from vericite.types import JudgePair, Judgement


def test_fake_3way_labels():
    j = registry.create("judges", "fake-3way")
    got = j.judge([JudgePair("Rome is in Italy.", "Rome is in Italy"), JudgePair("Rome is in Italy.", "Rome is not in Italy"), JudgePair("Rome.", "Paris is big")])
    assert [x.label for x in got] == ["supports", "refutes", "not_enough_info"]
    assert got[0].probability == 0.8 and got[1].scores["refutes"] == 0.8


def test_label_probabilities_softmax_and_unparseable():
    p, mass = label_probabilities({"Supports": math.log(0.6), " Supports": math.log(0.2), "Refutes": math.log(0.1), "Neutral": math.log(0.1), "Yes": -0.1})
    assert p["supports"] == pytest.approx(0.8) and p["refutes"] == pytest.approx(0.1) and set(mass) == {"supports", "refutes", "not_enough_info"}
    assert label_probabilities({"Yes": -0.1}) == (None, {})


def test_llm3_reads_the_models_next_word():
    j = LLM3Judge(FakeBackend(replies={"Claim: Rome": "Supports", "Claim: Paris": "Refutes"}))
    got = j.judge([JudgePair("e", "Rome is old"), JudgePair("e", "Paris is old")])
    assert j.id == "llm3:fake@1"
    assert [x.label for x in got] == ["supports", "refutes"] and got[0].probability > 0.5
    assert set(got[0].scores) == {"supports", "refutes", "not_enough_info"} and sum(got[0].scores.values()) == pytest.approx(1, abs=1e-5)


def test_llm3_without_next_token_scoring_reads_top_logprobs():
    from tests.support.backends import PlainBackend

    got = LLM3Judge(PlainBackend()).judge([JudgePair("e", "c")])[0]
    assert got.status == "unparseable" and got.probability is None  # PlainBackend's top tokens are Yes/No


def test_nli3_maps_the_classes_and_refuses_two_class_models():
    class NLI:
        model_name = "m"
        labels = ["CONTRADICTION", "ENTAILMENT", "NEUTRAL"]

        def judge(self, pairs):
            return [Judgement("nli:m@1", p.claim, p.evidence, 0.7, "supported", json.dumps({"CONTRADICTION": 0.1, "ENTAILMENT": 0.7, "NEUTRAL": 0.2})) for p in pairs]

    got = NLI3Judge(NLI()).judge([JudgePair("e", "c")])[0]
    assert got.scores == {"supports": 0.7, "refutes": 0.1, "not_enough_info": 0.2} and got.label == "supports"

    class Two(NLI):
        labels = ["entailment", "not_entailment"]

    with pytest.raises(VericiteError, match="three-class"):
        NLI3Judge(Two())


@pytest.mark.parametrize("kind", ["llm3", "llm3c"])
def test_a_three_way_llm_judges_id_is_a_spec_too(kind):
    from vericite import registry
    from vericite.errors import VericiteError

    judge = registry.create("judges", f"{kind}:fake@1")  # the id results.json shows, passed back
    assert judge.id == f"{kind}:fake@1" and registry.create("judges", f"{kind}:fake").id == judge.id
    with pytest.raises(VericiteError, match=f"want {kind}:<model name> or {kind}:<model name>@1"):
        registry.create("judges", f"{kind}:fake@2")
