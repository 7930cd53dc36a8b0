"""judge_corpus sends calls of a judge's own ``pairs_per_call`` when it has one (a judge on N Ray workers)."""

from vericite.judges.batches import JUDGE_CHUNK, judge_corpus
from vericite.types import JudgePair, Judgement


class Counting:
    id = "counting@1"
    labels = ("supported", "not_supported")

    def __init__(self, pairs_per_call=None):
        self.calls = []
        if pairs_per_call:
            self.pairs_per_call = pairs_per_call

    def judge(self, pairs):
        self.calls.append(len(pairs))
        return [Judgement(self.id, p.claim, p.evidence, 1.0, "supported") for p in pairs]


def test_a_judge_with_pairs_per_call_gets_larger_calls():
    pairs = [JudgePair(f"e{i}", f"c{i}") for i in range(5 * JUDGE_CHUNK)]
    plain, wide = Counting(), Counting(2 * JUDGE_CHUNK)
    assert judge_corpus(plain, pairs) == judge_corpus(wide, pairs)
    assert plain.calls == [JUDGE_CHUNK] * 5 and wide.calls == [2 * JUDGE_CHUNK, 2 * JUDGE_CHUNK, JUDGE_CHUNK]
