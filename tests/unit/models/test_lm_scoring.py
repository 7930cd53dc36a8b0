"""LM scoring for CONNER: token spans on the fake and through the cache and meter, sentences grouped from one
evaluation per text, perplexity capped."""

from __future__ import annotations

import math

import pytest

from vericite.errors import VericiteError
from vericite.models.cache import CachedBackend, CallCache
from vericite.models.fake import FakeBackend
from vericite.models.lm_scoring import PPL_CAP, group_by_spans, perplexity, sentence_logprobs, sentence_logprobs_one_by_one
from vericite.models.usage import MeteredBackend, UsageMeter
from vericite.protocols import TokenSpanScorer

from tests.support.backends import PlainBackend


def test_fake_token_spans_match_continuation_logprobs_and_are_cached(tmp_path):
    fake = FakeBackend()
    pairs = [("Q: who?", "Ada  Lovelace wrote. Notes here"), ("", "")]
    got = fake.continuation_token_spans(pairs)
    assert [lp for _, _, lp in got[0]] == fake.continuation_logprobs(pairs[:1])[0]
    assert [pairs[0][1][s:e] for s, e, _ in got[0]] == pairs[0][1].split()
    assert got[1] == []
    cached = CachedBackend(fake, CallCache(tmp_path / "c.sqlite"))
    assert isinstance(cached, TokenSpanScorer)
    assert cached.continuation_token_spans(pairs[:1]) == [got[0]]
    n = fake.calls["continuation_token_spans"]
    assert cached.continuation_token_spans(pairs[:1]) == [got[0]] and fake.calls["continuation_token_spans"] == n
    meter = UsageMeter()
    metered = MeteredBackend(fake, meter)
    assert isinstance(metered, TokenSpanScorer)
    metered.continuation_token_spans(pairs[:1])
    assert meter.usage.prompt_tokens == 5 and meter.usage.calls == 1


def test_a_backend_without_spans_has_no_such_capability_behind_the_cache(tmp_path):
    plain = CachedBackend(PlainBackend(), CallCache(tmp_path / "c.sqlite"))
    assert not isinstance(plain, TokenSpanScorer)
    with pytest.raises(VericiteError, match="token positions"):
        sentence_logprobs(plain, ["a b."], [[(0, 4)]])


def test_group_by_spans_gives_each_token_to_the_sentence_of_its_last_character():
    text = "One two. Three."
    tokens = [(0, 3, -1.0), (3, 7, -2.0), (7, 8, -3.0), (8, 14, -4.0), (14, 15, -5.0)]
    assert group_by_spans(tokens, [(0, 8), (9, 15)]) == [[-1.0, -2.0, -3.0], [-4.0, -5.0]]
    assert group_by_spans(tokens, []) == []


def test_paragraph_and_sentence_contexts():
    fake = FakeBackend()
    text = "Rome is old. It has seven hills."
    spans = [(0, 12), (13, 32)]
    para = sentence_logprobs(fake, [text], [spans])[0]
    alone = sentence_logprobs(fake, [text], [spans], context="sentence")[0]
    assert [len(x) for x in para] == [3, 4] and [len(x) for x in alone] == [3, 4]
    assert para[0] == alone[0]  # the first sentence has no context either way
    assert para[1] != alone[1]  # the second is scored after the first in the paragraph
    assert alone == sentence_logprobs_one_by_one(fake, text, spans)
    with pytest.raises(VericiteError, match="sentence context"):
        sentence_logprobs(fake, [text], [spans], context="word")


def test_perplexity_is_capped_and_none_without_tokens():
    assert perplexity([]) is None
    assert perplexity([math.log(0.5)] * 3) == pytest.approx(2.0)
    assert perplexity([-50.0]) == PPL_CAP
    assert perplexity([-50.0], cap=None) > 1e20


def test_one_call_per_sentence_in_context_gives_what_one_evaluation_gives():
    """The benchmark's like-for-like baseline: each sentence after the text before it (one call each) scores the
    same tokens with the same log-probs as one evaluation of the whole text."""
    fake = FakeBackend()
    text = "Rome is old.  It has seven hills. Its river is the Tiber."
    spans = [(0, 12), (14, 33), (34, 57)]
    para = sentence_logprobs(fake, [text], [spans])[0]
    before = fake.calls["continuation_token_spans"]
    in_context = sentence_logprobs_one_by_one(fake, text, spans, context="paragraph")
    assert in_context == para and [len(x) for x in para] == [3, 4, 5]
    assert fake.calls["continuation_token_spans"] - before == 3  # one call per sentence
    assert in_context != sentence_logprobs_one_by_one(fake, text, spans)  # alone: no context after the first
    with pytest.raises(VericiteError, match="sentence context"):
        sentence_logprobs_one_by_one(fake, text, spans, context="word")


class CharScorer:
    """One token a character (spaces are tokens of their own, as digits' spaces are in SmolLM2); a token's
    log-prob depends on all the text before it."""

    def identity(self):
        return None

    def continuation_token_spans(self, pairs):
        out = []
        for prefix, cont in pairs:
            out.append([(i, i + 1, -float(len(prefix) + i + ord(c) % 5)) for i, c in enumerate(cont)])
        return out

    def continuation_logprobs(self, pairs):
        return [[lp for *_, lp in row] for row in self.continuation_token_spans(pairs)]


def test_in_context_baseline_leaves_out_the_whitespace_token_between_sentences_as_one_evaluation_does():
    text = "Ab c. De f.  Gh."
    spans = [(0, 5), (6, 11), (13, 16)]
    scorer = CharScorer()
    para = sentence_logprobs(scorer, [text], [spans])[0]
    assert [len(x) for x in para] == [5, 5, 3]  # the spaces between sentences belong to none
    assert sentence_logprobs_one_by_one(scorer, text, spans, context="paragraph") == para
