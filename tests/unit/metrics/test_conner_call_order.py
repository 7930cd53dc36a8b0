"""The order of CONNER's model calls (what makes llama.cpp's prefix reuse pay; docs/results-conner.md, "What an
evaluated item costs"): factuality's pairs reach the judge passage by passage, and the LM measures that score texts
with a prefix send them in one call, so that a backend can order them; the values are those of the measures as
defined, whatever the order."""

from __future__ import annotations

from vericite.fakes.judges import ThreeWayJudge
from vericite.metrics.conner import ConnerMetric, passage_major
from vericite.models.fake import FakeBackend
from vericite.types import AttributedAnswer, JudgePair, Passage, Sample


class RecordingJudge(ThreeWayJudge):
    """The fake three-way judge, recording the pairs of each call."""

    def __init__(self) -> None:
        super().__init__()
        self.calls: list[list[JudgePair]] = []

    def judge(self, pairs):  # type: ignore[no-untyped-def]
        self.calls.append(list(pairs))
        return super().judge(pairs)


def long_item() -> tuple[Sample, AttributedAnswer]:
    """Ten sentences, each checked against the same ten passages: 100 pairs, more than one judge call (64)."""
    passages = [Passage(f"p{j}", f"Passage {j} says that Rome has {j} hills and {j} gates.") for j in range(10)]
    knowledge = " ".join(f"Rome has {k} hills." for k in range(10))
    return Sample(id="q0", question="How many hills has Rome?", answers=[["seven"]], passages=passages), AttributedAnswer(raw=knowledge)


def test_passage_major_groups_by_first_seen_evidence_and_keeps_each_groups_order():
    pairs = [JudgePair(e, c) for c in ("s1", "s2") for e in ("B", "A", "C")] + [JudgePair("A", "s3")]
    assert [(p.evidence, p.claim) for p in passage_major(pairs)] == [
        ("B", "s1"), ("B", "s2"), ("A", "s1"), ("A", "s2"), ("A", "s3"), ("C", "s1"), ("C", "s2")]


def test_each_passage_reaches_the_judge_in_one_run_of_consecutive_pairs():
    judge = RecordingJudge()
    sample, answer = long_item()
    r = ConnerMetric(judge, resamples=0, metrics=["factuality"]).score_answers([sample], [answer])
    assert len(judge.calls) >= 2 and sum(map(len, judge.calls)) == 100
    seen = [p.evidence for call in judge.calls for p in call]
    runs = [e for k, e in enumerate(seen) if k == 0 or seen[k - 1] != e]
    assert len(runs) == len(set(runs)) == 10  # sentence by sentence, each passage came back 10 times
    # each passage's pairs in one call: a backend that keeps the passage's evaluation uses it for all of them
    assert all(len({id(c) for c in judge.calls if any(p.evidence == e for p in c)}) == 1 for e in set(seen))
    # the record keeps its order (sentence by sentence), and the value is the measure's
    claims = [j["claim"] for j in r.judgements[0]]
    assert claims == [f"Rome has {k} hills." for k in range(10) for _ in range(10)]
    plain = ConnerMetric(ThreeWayJudge(), resamples=0, metrics=["factuality"]).score_answers([sample], [answer])
    assert r.scores == plain.scores and r.scores[0]["conner"]["factuality"] is not None


class RecordingLM(FakeBackend):
    """The fake LM, recording the pairs of each continuation_logprobs call."""

    def __init__(self) -> None:
        super().__init__(replies=lambda msgs, p: "Rome")
        self.continuation_calls: list[list[tuple[str, str]]] = []

    def continuation_logprobs(self, pairs):  # type: ignore[no-untyped-def]
        self.continuation_calls.append(list(pairs))
        return super().continuation_logprobs(pairs)


def three_items():
    texts = ["Rome is old. Rome has seven hills.", "Paris is big. Paris is in France.", "Milan has a cathedral. It is big."]
    return [(Sample(id=f"q{i}", question="What is the capital of Italy?", answers=[["Rome"]], meta={"topic": "Italy"}), AttributedAnswer(raw=t))
            for i, t in enumerate(texts)]


def test_the_texts_of_the_order_test_informativeness_and_helpfulness_go_in_one_call():
    lm = RecordingLM()
    samples, answers = zip(*three_items())
    names = ["coherence_paragraph", "informativeness", "helpfulness"]
    r = ConnerMetric(None, lm=lm, resamples=0, metrics=names).score_answers(list(samples), list(answers))
    assert len(lm.continuation_calls) == 1
    (call,) = lm.continuation_calls
    # 3 items x (own order + 5 shuffles), 3 informativeness prefixes, 3 x (own + 2 unrelated: only 2 others) helpfulness prompts
    assert len(call) == 18 + 3 + 9
    help_prompts = [p for p, c in call if c == " Rome"]
    for a in answers:  # a knowledge text begins its own helpfulness prompt and the two that draw it as unrelated
        assert sum(p.startswith(a.raw + "\n") for p in help_prompts) == 3
        assert ("", a.raw) in call  # and is its own order test's paragraph
    # each measure alone: the same values (the call's other texts change nothing)
    for name in names:
        alone = ConnerMetric(None, lm=FakeBackend(replies=lambda msgs, p: "Rome"), resamples=0, metrics=[name]).score_answers(list(samples), list(answers))
        assert [s["conner"][name] for s in alone.scores] == [s["conner"][name] for s in r.scores]
