"""Progress while CONNER's LM measures score the corpus (coherence, informativeness, helpfulness): after the
per-answer bar, one or two long model calls used to run with nothing on screen. A bar over the texts the LM scores
moves as the backend says it scored them (``progress.items_of_call``); the calls, their order and the values are
those without it."""

from __future__ import annotations

import contextlib

import pytest

from tests.unit.metrics.test_conner_call_order import RecordingLM, three_items
from tests.unit.models.test_llamacpp_scorer_reuse import KNOWLEDGE, backend
from vericite.metrics.conner import ConnerMetric
from vericite.models.cache import CachedBackend, CallCache
from vericite.models.fake import FakeBackend
from vericite.models.lm_scoring import continuation_logprobs, sentence_logprobs
from vericite.progress import item_done, items_of_call

LM_MEASURES = ["coherence_sentence", "coherence_paragraph", "informativeness", "helpfulness"]


class RecordingBars:
    """A ``ProgressBar`` that records each bar: its total, its description and every advance, with how many
    continuation calls the LM had begun by then."""

    def __init__(self, lm: RecordingLM | None = None) -> None:
        self.lm = lm
        self.bars: list[dict] = []

    def __call__(self, total, description):  # type: ignore[no-untyped-def]
        bar = {"total": total, "description": description, "steps": []}
        self.bars.append(bar)

        @contextlib.contextmanager
        def opened():  # type: ignore[no-untyped-def]
            calls = (lambda: len(self.lm.continuation_calls)) if self.lm is not None else (lambda: 0)
            yield lambda n=1: bar["steps"].append((n, calls()))

        return opened()


@pytest.mark.parametrize("context", ["paragraph", "sentence"])
def test_the_lm_measures_bar_reaches_the_texts_scored_and_the_values_and_calls_are_the_same(context):
    samples, answers = (list(x) for x in zip(*three_items()))
    plain_lm, lm = RecordingLM(), RecordingLM()
    plain = ConnerMetric(None, lm=plain_lm, resamples=0, metrics=LM_MEASURES, sentence_context=context).score_answers(samples, answers)
    bars = RecordingBars(lm)
    shown = ConnerMetric(None, lm=lm, resamples=0, metrics=LM_MEASURES, sentence_context=context).score_answers(samples, answers, progress=bars)
    # the values, the records and the model's calls: those without progress
    assert shown.scores == plain.scores and shown.results == plain.results
    assert lm.continuation_calls == plain_lm.continuation_calls and lm.calls == plain_lm.calls
    (bar,) = bars.bars
    assert bar["description"] == "scoring texts with the LM (coherence, informativeness, helpfulness)"
    # the sentence test's texts (a text per item, or each of its 2 sentences alone), then 18 + 3 + 9 in one call
    texts = 3 if context == "paragraph" else 6
    assert bar["total"] == texts + 30 == sum(n for n, _ in bar["steps"])
    # text by text, also while the one call of the three measures runs (not all at its end)
    assert len(bar["steps"]) == bar["total"] and {n for n, _ in bar["steps"]} == {1}
    assert [c for _, c in bar["steps"]].count(len(lm.continuation_calls)) == 30
    # no bar without a language model, nor without a text to score
    ConnerMetric(None, lm=None, resamples=0, metrics=LM_MEASURES).score_answers(samples, answers, progress=bars)
    ConnerMetric(None, lm=FakeBackend(), resamples=0, metrics=LM_MEASURES).score_answers(samples[:1], [type(answers[0])(raw="")], progress=bars)
    assert len(bars.bars) == 1




class Silent:
    """A scorer that says nothing as it scores (an HTTP backend, a plugin's)."""

    def continuation_logprobs(self, pairs):  # type: ignore[no-untyped-def]
        return [[-1.0] * len(c.split()) for _, c in pairs]


def test_a_backend_that_says_nothing_moves_the_bar_by_the_whole_call_at_its_end():
    steps: list[int] = []
    out = continuation_logprobs(Silent(), [("", "a b"), ("x", "c")], progress=steps.append)
    assert out == [[-1.0, -1.0], [-1.0]] and steps == [2]
    steps.clear()
    assert continuation_logprobs(Silent(), [], progress=steps.append) == [] and steps == []


def test_the_call_cache_says_its_hits_before_the_misses_are_scored(tmp_path):
    cache = CallCache(tmp_path / "calls.sqlite")
    try:
        fake = FakeBackend()
        lm = CachedBackend(fake, cache)
        continuation_logprobs(lm, [("", "Rome is old."), ("", "Paris is big.")])
        steps: list[tuple[int, int]] = []
        pairs = [("", "Milan is far."), ("", "Rome is old."), ("", "Paris is big."), ("", "Turin is north.")]
        got = continuation_logprobs(lm, pairs, progress=lambda n: steps.append((n, fake.calls["continuation_logprobs"])))
        assert got == FakeBackend().continuation_logprobs(pairs)
        assert steps == [(2, 1), (1, 2), (1, 2)]  # the 2 hits before the backend's call, then its 2 texts one by one
    finally:
        cache.close()


def test_llamacpp_says_each_text_as_it_is_scored_in_the_order_of_their_tokens():
    lm = backend(True)
    pairs = [(f"{k}\nAnswer:", " seven") for k in KNOWLEDGE] + [("", k) for k in KNOWLEDGE]
    steps: list[int] = []
    with items_of_call(steps.append, len(pairs)):
        got = lm.continuation_logprobs(pairs)
    assert got == backend(True).continuation_logprobs(pairs) and steps == [1] * len(pairs)
    steps.clear()
    rows = sentence_logprobs(lm, KNOWLEDGE, [[(0, 12)]] * 3, progress=steps.append)
    assert len(rows) == 3 and steps == [1, 1, 1]


def test_items_of_call_never_goes_past_its_items_and_says_nothing_for_a_failed_call():
    steps: list[int] = []
    item_done(5)  # outside a call: nothing
    with items_of_call(steps.append, 3):
        item_done(2)
        item_done(2)
        item_done()
    assert steps == [2, 1]
    steps.clear()
    with pytest.raises(RuntimeError), items_of_call(steps.append, 3):
        item_done()
        raise RuntimeError("the model failed")
    assert steps == [1]
    item_done()
    assert steps == [1]
    with items_of_call(None, 3):  # no bar: nothing to say
        item_done()
