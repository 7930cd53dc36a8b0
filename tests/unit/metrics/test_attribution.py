"""The four-class diagnosis (``metrics/attribution.py``, issue 13 part 6): which (sentence, citation) pairs are
asked, how a citation is put in words, the per-answer counts and shares, the corpus shares as a ratio of sums
with their n and CIs, unparseable judgements counted in the denominator, and a judge that is not four-class
refused in one line. The judge is ``fake-4class`` (word overlap; every verdict below is worked out by hand)."""

from __future__ import annotations

import json

import pytest

from vericite.attribution.alce import AlceFormat
from vericite.attribution.kg import KgFormat
from vericite.errors import VericiteError
from vericite.fakes.judges import FourClassJudge
from vericite.metrics.attribution import METRIC_NAMES, AttributionMetric, answer_pairs, attribution_statistics, citation_text
from vericite.metrics.base import point
from vericite.registry import create
from vericite.types import Judgement, Passage, Sample, Triple

KNOWLEDGE = [Triple("Q1", "place of birth", "Rome", "Ann"), Triple("Q1", "occupation", "painter", "Ann")]


def kalma(answer: str, qid: str = "a") -> tuple[Sample, object]:
    s = Sample(qid, "Who is Ann?", knowledge=list(KNOWLEDGE))
    return s, KgFormat().parse(answer, s.knowledge)


PASSAGES = [Passage("1", "Rome is the capital of Italy.", "Rome"), Passage("2", "Paris is in France.", "Paris")]


def alce(answer: str, qid: str = "x") -> tuple[Sample, object]:
    s = Sample(qid, "What is Rome?", passages=list(PASSAGES))
    return s, AlceFormat().parse(answer, s.passages)


# the four classes, one sentence each (the fake: claim words all in the citation: supportive; a negation on one
# side only: contradictory; some words shared: insufficient; none: irrelevant)
KALMA_ANSWER = (
    "Ann's place of birth is Rome [Q1, place of birth: Rome]. "  # supportive
    "Ann's occupation is not painter [Q1, occupation: painter]. "  # contradictory
    "Ann's occupation is painter and poet [Q1, occupation: painter][Q1, occupation: painter]. "  # insufficient, once
    "Bob likes tea [Q1, place of birth: Rome]. "  # irrelevant
    "She had a cat [NA]. Unknown [Q9, pet: cat]."  # [NA]: no pair; an entity not given: not judged
)


def test_triple_citations_are_put_in_words_as_caqa_s_template_and_passages_as_alce_s_premise():
    s, a = kalma("Ann was born in Rome [Q1, place of birth: Rome].")
    assert citation_text(a.citations[0], s) == "Ann's place of birth is Rome."
    s2, a2 = alce("Rome is a capital [1][3].")
    assert citation_text(a2.citations[0], s2) == "Title: Rome\nRome is the capital of Italy."
    assert citation_text(a2.citations[1], s2) is None  # [3]: out of range, not a pair


def test_every_sentence_citation_pair_once_na_left_out_and_unresolved_counted():
    s, a = kalma(KALMA_ANSWER)
    pairs, not_judged = answer_pairs(s, a)
    assert [k for k, _ in pairs] == [0, 1, 2, 3] and not_judged == 1
    p = pairs[0][1]
    assert (p.claim, p.evidence, p.question) == ("Ann's place of birth is Rome.", "Ann's place of birth is Rome.", "Who is Ann?")


def test_per_answer_counts_and_shares_and_the_corpus_shares_over_pairs():
    m = create("metrics", "attribution", judge="fake-4class", resamples=200, seed=1)
    s1, a1 = kalma(KALMA_ANSWER, "a")
    s2, a2 = kalma("Ann's place of birth is Rome [Q1, place of birth: Rome].", "b")  # one supportive pair
    s3, a3 = kalma("No citation here.", "c")  # no pair: not in n
    run = m.score_answers([s1, s2, s3], [a1, a2, a3])
    one = run.scores[0]["attribution"]
    assert one["pairs"] == 4 and one["not_judged"] == 1
    assert one["counts"] == {"supportive": 1, "insufficient": 1, "contradictory": 1, "irrelevant": 1, "unparseable": 0}
    assert one["shares"] == {"supportive": 0.25, "insufficient": 0.25, "contradictory": 0.25, "irrelevant": 0.25, "unparseable": 0.0}
    assert run.scores[2]["attribution"]["pairs"] == 0 and run.scores[2]["attribution"]["shares"]["supportive"] is None
    r = run.results
    assert list(r) == list(METRIC_NAMES)
    assert r["attribution_supportive"].value == pytest.approx(2 / 5)  # pairs pooled: 2 of 5, not the mean of 1/4 and 1
    assert r["attribution_irrelevant"].value == pytest.approx(1 / 5) and r["attribution_unparseable"].value == 0.0
    assert all(x.n == 2 for x in r.values()) and r["attribution_supportive"].details["pairs"] == 5
    lo, hi = r["attribution_supportive"].ci_low, r["attribution_supportive"].ci_high
    assert lo is not None and lo <= 0.4 <= hi and hi > lo  # bootstrap over answers
    assert r["attribution_supportive"].higher_is_better and not r["attribution_contradictory"].higher_is_better
    assert run.judges == {"attribution": "fake-4class@1"} and run.counts == {"attribution_pairs": 5, "attribution_unparseable": 0}
    assert all(j["purpose"] == "attribution" for j in run.judgements[0]) and len(run.judgements[0]) == 4
    assert run.settings["attribution"]["not_judged"] == 1
    # compare rebuilds the same values from what samples.jsonl holds
    records = json.loads(json.dumps([{"scores": sc} for sc in run.scores]))
    cs = AttributionMetric.statistics_from_records(records)
    assert point(cs.live["attribution_supportive"], 3) == pytest.approx(0.4)


class HalfUnparseable(FourClassJudge):
    """fake-4class, but a pair whose sentence holds "?" gets no verdict (an LLM reply naming no class)."""

    def judge(self, pairs):
        out = super().judge(pairs)
        return [Judgement(j.judge, j.claim, j.evidence, None, None, "{}", "unparseable") if "?" in p.claim else j for p, j in zip(pairs, out)]


def test_unparseable_judgements_stay_in_the_denominator_and_are_counted():
    s, a = kalma("Ann's place of birth is Rome [Q1, place of birth: Rome]. Is she a painter? [Q1, occupation: painter]")
    run = AttributionMetric(HalfUnparseable(), resamples=0).score_answers([s], [a])
    assert run.scores[0]["attribution"]["counts"]["unparseable"] == 1
    assert run.results["attribution_unparseable"].value == 0.5 and run.results["attribution_supportive"].value == 0.5
    assert run.counts["attribution_unparseable"] == 1


def test_passage_citations_each_document_once_per_sentence():
    s, a = alce("Rome is the capital of Italy [1][1][2]. Paris is not in France [2]. Rome [3].")
    run = create("metrics", "attribution", judge="fake-4class", resamples=0).score_answers([s], [a])
    sc = run.scores[0]["attribution"]
    assert sc["pairs"] == 3 and sc["not_judged"] == 1  # [1] twice in one sentence: one pair; [3]: out of range
    labels = [j["label"] for j in run.judgements[0]]
    assert labels == ["supportive", "insufficient", "contradictory"]  # [2] shares only "is" with the first sentence
    assert run.judgements[0][1]["evidence"] == "Title: Paris\nParis is in France."


def test_without_a_judge_or_with_one_that_is_not_four_class_a_clear_error():
    with pytest.raises(VericiteError, match="four-class judge"):
        create("metrics", "attribution")
    with pytest.raises(VericiteError, match=r"needs a four-class judge .*fake@1 gives the labels supported, not_supported"):
        create("metrics", "attribution", judge="fake")
    with pytest.raises(VericiteError, match="fake-3way@1"):
        create("metrics", "attribution", judge="fake-3way")


def test_statistics_without_any_judged_answer_say_why():
    cs = attribution_statistics([None, None])
    assert set(cs.reasons) == set(METRIC_NAMES) and "--attribution-judge" in cs.reasons["attribution_supportive"]
    cs = attribution_statistics([{"pairs": 0, "counts": {}}])
    assert "no (sentence, citation) pair" in cs.reasons["attribution_supportive"]
