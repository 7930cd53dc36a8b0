"""llm3c: the three-way LLM judge with contextual calibration (judges/calibrated.py): the content-free prior asked
once (through the call cache), divided out of every pair's label probabilities, recorded in raw and in the
judge's calibration; an unusable prior is a one-line error; the id is not llm3's."""

from __future__ import annotations

import json
import math

import pytest

from vericite import registry
from vericite.errors import VericiteError
from vericite.judges.calibrated import CONTENT_FREE, CalibratedLLM3Judge, calibrate
from vericite.judges.three_way import LLM3Judge
from vericite.types import Completion, JudgePair, ModelIdentity

#: the label probabilities the fake model gives: content-free prompts lean Neutral; a pair's are its claim's
LEAN = {"Supports": 0.2, "Refutes": 0.1, "Neutral": 0.7}
PAIRS = {
    "Rome is old": {"Supports": 0.4, "Refutes": 0.05, "Neutral": 0.55},  # uncalibrated Neutral, calibrated Supports
    "Paris is new": {"Supports": 0.1, "Refutes": 0.3, "Neutral": 0.6},  # uncalibrated Neutral, calibrated Refutes
    "Oslo is far": {"Supports": 0.05, "Refutes": 0.05, "Neutral": 0.9},  # Neutral either way
}


def claim_of(messages) -> str:
    return messages[-1]["content"].split("Claim: ")[1]


class LeaningScorer:
    """A next-token scorer whose answers on content-free prompts lean to Neutral; counts every prompt it is asked."""

    def __init__(self, content_free: dict[str, float] | None = None) -> None:
        self.asked: list[str] = []
        self.content_free = LEAN if content_free is None else content_free

    def identity(self) -> ModelIdentity:
        return ModelIdentity(name="leaning", backend="test", model="leaning")

    def next_token_logprobs(self, prompts, candidates):
        out = []
        for messages in prompts:
            claim = claim_of(messages)
            self.asked.append(claim)
            probs = self.content_free if claim in CONTENT_FREE else PAIRS[claim]
            out.append({c: math.log(probs[c]) for c in candidates if c in probs})
        return out


def test_the_prior_is_asked_once_from_the_content_free_prompts():
    model = LeaningScorer()
    j = CalibratedLLM3Judge(model)
    j.judge([JudgePair("e", "Rome is old")])
    j.judge([JudgePair("e", "Paris is new"), JudgePair("e", "Oslo is far")])
    assert sorted(model.asked[:3]) == sorted(CONTENT_FREE)  # first, before any pair
    assert [c for c in model.asked if c in CONTENT_FREE] == model.asked[:3]  # and never again
    prior = j.content_free_prior()
    assert prior["supports"] == pytest.approx(0.2) and prior["not_enough_info"] == pytest.approx(0.7)
    # the content-free prompts are the judge's own prompt, evidence and claim both the content-free string
    assert [m[-1]["content"] for m in [j.messages(JudgePair(x, x)) for x in CONTENT_FREE]][0].endswith("Evidence: N/A\n\nClaim: N/A")


def test_the_prior_goes_through_the_call_cache(tmp_path):
    from vericite.models.cache import CachedBackend, CallCache

    cache = CallCache(tmp_path / "calls.sqlite")
    first, second = LeaningScorer(), LeaningScorer()
    CalibratedLLM3Judge(CachedBackend(first, cache)).judge([JudgePair("e", "Rome is old")])
    again = CalibratedLLM3Judge(CachedBackend(second, cache)).judge([JudgePair("e", "Rome is old")])
    assert len(first.asked) == 4 and second.asked == []  # a second instance: prior and pair from the cache
    assert again[0].label == "supports"
    cache.close()


def test_a_neutral_leaning_judge_is_corrected():
    pairs = [JudgePair("e", c) for c in PAIRS]
    plain = LLM3Judge(LeaningScorer()).judge(pairs)
    cal = CalibratedLLM3Judge(LeaningScorer()).judge(pairs)
    assert [j.label for j in plain] == ["not_enough_info"] * 3
    assert [j.label for j in cal] == ["supports", "refutes", "not_enough_info"]
    # p / p_cf renormalised: Rome's 0.4/0.2, 0.05/0.1, 0.55/0.7
    w = {"supports": 2.0, "refutes": 0.5, "not_enough_info": 0.55 / 0.7}
    assert cal[0].scores == pytest.approx({k: v / sum(w.values()) for k, v in w.items()}, abs=1e-6)
    assert cal[0].probability == cal[0].scores["supports"] and sum(cal[0].scores.values()) == pytest.approx(1, abs=1e-5)
    raw = json.loads(cal[0].raw)
    assert raw["uncalibrated"] == plain[0].scores  # what llm3 says, kept
    assert raw["content_free_prior"] == pytest.approx({"supports": 0.2, "refutes": 0.1, "not_enough_info": 0.7}, abs=1e-6)
    assert raw["calibration"] == "content-free@1" and set(raw["label_logmass"]) == {"supports", "refutes", "not_enough_info"}


def test_the_id_differs_from_llm3_and_the_uncalibrated_judge_is_unchanged():
    cal, plain = CalibratedLLM3Judge(LeaningScorer()), LLM3Judge(LeaningScorer())
    assert cal.id == "llm3c:leaning@1" and plain.id == "llm3:leaning@1"
    assert cal.labels == plain.labels and cal.prompt_version == plain.prompt_version
    assert set(json.loads(plain.judge([JudgePair("e", "Rome is old")])[0].raw)) == {"label_logmass"}


def test_an_unparseable_content_free_answer_stops_the_judge_before_any_pair():
    model = LeaningScorer(content_free={"Maybe": 0.9})
    j = CalibratedLLM3Judge(model)
    with pytest.raises(VericiteError, match=r"content-free input 'N/A'.*none of Supports, Refutes, Neutral.*use llm3:leaning"):
        j.judge([JudgePair("e", "Rome is old")])
    assert all(c in CONTENT_FREE for c in model.asked)  # no pair was judged


def test_a_label_without_prior_mass_on_the_top_logprobs_path_is_an_error():
    class TopOnly:
        """No next_token_logprobs: the first token's top alternatives, which never hold Refutes here."""

        def identity(self):
            return ModelIdentity(name="top", backend="test", model="top")

        def generate(self, prompts, params):
            return [Completion(text="Neutral", top_logprobs=[{"Neutral": math.log(0.8), "Supports": math.log(0.1)}]) for _ in prompts]

    with pytest.raises(VericiteError, match="refutes no probability"):
        CalibratedLLM3Judge(TopOnly()).judge([JudgePair("e", "c")])


def test_options_never_ask_the_model_and_calibration_records_the_prior():
    model = LeaningScorer()
    j = CalibratedLLM3Judge(model)
    assert j.options() == {"calibration": "content-free@1", "content_free_inputs": list(CONTENT_FREE)} and model.asked == []
    cal = j.calibration()
    assert cal["id"] == "content-free@1" and cal["content_free_prior"]["refutes"] == pytest.approx(0.1) and len(model.asked) == 3


def test_calibrate_divides_by_the_prior_and_renormalises():
    got = calibrate({"supports": 0.5, "refutes": 0.25, "not_enough_info": 0.25}, {"supports": 0.5, "refutes": 0.25, "not_enough_info": 0.25})
    assert got == pytest.approx({"supports": 1 / 3, "refutes": 1 / 3, "not_enough_info": 1 / 3})


def test_built_from_its_spec_through_the_registry():
    ctx = registry.BuildContext(load_model=lambda name: LeaningScorer())
    j = registry.create("judges", "llm3c:leaning", ctx)
    assert isinstance(j, CalibratedLLM3Judge) and j.id == "llm3c:leaning@1"
    with pytest.raises(VericiteError, match="llm3c:<model name>"):
        registry.create("judges", "llm3c", ctx)
