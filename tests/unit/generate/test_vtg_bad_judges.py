"""VTG with a judge that fails: one that raises, gives back too few, too many or no judgements, or judgements
whose probability is no probability. Each is counted and traced, its sentences left unverified: never a crash,
never a pass. (A model server's BackendError is the loop's: the question fails and --resume retries it.)"""

from __future__ import annotations

import pytest

from vericite.errors import BackendError
from vericite.fakes.judges import KeywordJudge
from vericite.generate.vtg import build
from vericite.judges.batches import judgement_verdict
from vericite.registry import BuildContext
from vericite.types import Judgement, Sample

from tests.support.vtg import DOCS, QUESTION, scripted

PARIS = "Paris is the capital of France."


class Odd(KeywordJudge):
    def __init__(self, how):
        super().__init__()
        self.how = how

    def judge(self, pairs):
        good = super().judge(pairs)
        if self.how == "raise":
            raise RuntimeError("judge exploded")
        if self.how == "backend":
            raise BackendError("judge server down")
        return {"none": None, "few": good[:-1] or [], "many": good * 2, "not-judgements": ["yes"] * len(good)}[self.how]


def answer(judge):
    m = build("", ctx=BuildContext(), backend=scripted([PARIS], cites={"Paris": "[1]"}), judge=judge, k=2, docs_per_query=1, trials=1)
    return m.answer(Sample("q1", QUESTION, passages=list(DOCS)))


@pytest.mark.parametrize("how", ["raise", "none", "few", "many", "not-judgements"])
def test_a_failing_judge_is_counted_and_traced_never_a_crash_or_a_pass(how):
    r = answer(Odd(how))
    v = r["vtg"]
    assert v["problems"]["judge_errors"] >= 2 and v["problems"]["unverified_sentences"] == 1
    assert v["judge_error"].startswith("judge fake@1: ") and not v["sentences"][0]["verified"]
    first = v["sentences"][0]["trials"][0]["generation_verifier"]
    assert first == {"entailed": False, "probability": None, "status": "failed"}
    assert r["output"] == "Paris is the capital of France [1]."  # the last attempt kept, marked unverified


def test_a_model_servers_failure_stays_the_loops():
    with pytest.raises(BackendError):
        answer(Odd("backend"))


def test_a_working_judge_has_no_judge_error():
    v = answer(KeywordJudge())["vtg"]
    assert v["problems"]["judge_errors"] == 0 and "judge_error" not in v and v["sentences"][0]["verified"]


@pytest.mark.parametrize("p", [float("nan"), 7.0, -0.1, "0.9", True, None])
def test_a_probability_that_is_no_probability_is_unparseable_not_a_verdict(p):
    assert judgement_verdict(Judgement("j", "c", "e", p, "supported")) is None


def test_probabilities_of_any_real_type_are_verdicts():
    import numpy as np

    assert judgement_verdict(Judgement("j", "c", "e", np.float32(0.7), "supported")) is True
    assert judgement_verdict(Judgement("j", "c", "e", 0, "not_supported")) is False
    assert judgement_verdict(Judgement("j", "c", "e", 1.0, "supported")) is True


def test_an_empty_answer_is_counted():
    m = build("", ctx=BuildContext(), backend=scripted([]), judge=KeywordJudge(), k=2)
    v = m.answer(Sample("q1", QUESTION, passages=list(DOCS)))["vtg"]
    assert v["problems"]["empty_answer"] == 1 and v["end"] == "end-marker"
