"""Backend capabilities are declared Protocols, checked with isinstance: the call cache has exactly the
capabilities of the backend it wraps, continuation log-probabilities (CONNER) on the fake and on llama.cpp's
windowed scorer (with a stand-in Llama, no model), and callers that fall back when a capability is missing."""

from __future__ import annotations

import math

import numpy as np
import pytest

from vericite.judges.llm import LLMJudge
from vericite.metrics.geval import GEval
from vericite.models.cache import CachedBackend, CallCache
from vericite.models.fake import FakeBackend
from vericite.models.usage import MeteredBackend, UsageMeter
from vericite.protocols import CacheKeyed, Closeable, ContinuationScorer, LLMBackend, NextTokenScorer, NextTokenUsage, Tokenizer
from vericite.types import JudgePair, Usage

from tests.support.backends import PlainBackend
from tests.support.guards import requires


def test_the_cache_has_exactly_the_capabilities_of_what_it_wraps(tmp_path):
    cache = CallCache(tmp_path / "c.sqlite")
    plain = CachedBackend(PlainBackend(), cache)
    assert isinstance(plain, LLMBackend) and isinstance(plain, CachedBackend)
    assert not isinstance(plain, NextTokenScorer) and not isinstance(plain, ContinuationScorer) and not isinstance(plain, Tokenizer)
    assert not hasattr(plain, "next_token_logprobs")
    fake = CachedBackend(FakeBackend(), cache)
    assert isinstance(fake, NextTokenScorer) and isinstance(fake, ContinuationScorer) and isinstance(fake, Tokenizer)
    assert isinstance(fake, Closeable) and type(fake).__name__ == "CachedBackend"
    assert isinstance(FakeBackend(), LLMBackend) and not isinstance(FakeBackend(), CacheKeyed)


class _UsageOnly(PlainBackend):
    """A plugin that scores next tokens only with their usage (``NextTokenUsage`` without ``NextTokenScorer``)."""

    def next_token_logprobs_usage(self, prompts, candidates):
        return [({c: -1.0 for c in candidates}, Usage(7, 0, 1)) for _ in prompts]


def test_both_wrappers_keep_exactly_a_capability_set_and_build_one_class_per_combination(tmp_path):
    cache = CallCache(tmp_path / "c.sqlite")
    meter = UsageMeter()
    for wrapped in (CachedBackend(_UsageOnly(), cache), MeteredBackend(_UsageOnly(), meter), MeteredBackend(CachedBackend(_UsageOnly(), cache), meter)):
        assert isinstance(wrapped, NextTokenUsage) and not isinstance(wrapped, NextTokenScorer), wrapped
        assert not hasattr(wrapped, "next_token_logprobs") and not hasattr(wrapped, "tokenize")
        assert wrapped.next_token_logprobs_usage([[{"role": "user", "content": "q"}]], ["Yes", "No"]) == [({"Yes": -1.0, "No": -1.0}, Usage(7, 0, 1))]
        assert wrapped.identity().name == "plain" and wrapped.generated == 0  # the rest read from the backend
    assert meter.usage == Usage(14, 0, 2)  # the second call to the cached one was a hit, counted with its usage
    assert type(CachedBackend(_UsageOnly(), cache)) is type(CachedBackend(_UsageOnly(), cache))
    assert type(MeteredBackend(FakeBackend(), meter)) is type(MeteredBackend(FakeBackend(), meter)) is not MeteredBackend
    with pytest.raises(AttributeError):
        MeteredBackend.__new__(MeteredBackend, PlainBackend()).meter  # not set yet: missing, never the backend's


def test_judge_and_geval_fall_back_to_top_logprobs_behind_the_cache(tmp_path):
    """A plugin backend without next_token_logprobs, behind the default call cache: the LLM judge and G-Eval
    use generate's top_logprobs instead of calling a method the backend does not have."""
    inner = PlainBackend()
    cached = CachedBackend(inner, CallCache(tmp_path / "c.sqlite"))
    j = LLMJudge(cached).judge([JudgePair("Rome is in Italy.", "Rome is Italian.")])[0]
    assert j.status == "ok" and j.probability == pytest.approx(1 / (1 + math.exp(-2.4)))
    score = GEval(cached, aspects=("fluency",)).score([("q", "a", [])])[0]["fluency"]
    assert score.status == "ok" and 3.0 < score.score < 4.0
    assert inner.generated == 2


def test_fake_continuation_logprobs_match_logprobs_and_are_cached(tmp_path):
    fake = FakeBackend()
    prefix, cont = "Who was Ada Lovelace ?", "a mathematician and writer"
    got = fake.continuation_logprobs([(prefix, cont), ("", "one two")])
    assert got[0] == fake.logprobs([prefix + " " + cont])[0][-4:]
    assert len(got[1]) == 2 and all(v < 0 for v in got[1])
    cached = CachedBackend(fake, CallCache(tmp_path / "c.sqlite"))
    assert cached.continuation_logprobs([(prefix, cont)]) == [got[0]]
    calls = fake.calls["continuation_logprobs"]
    assert cached.continuation_logprobs([(prefix, cont)]) == [got[0]] and fake.calls["continuation_logprobs"] == calls


# --------------------------------------------------------------------------- llama.cpp's scorer, stood in for


class MarkovLlama:
    """Stands in for llama_cpp.Llama: tokens are characters' code points; the logits after token t favour t+1,
    and depend on nothing before t, so any window with at least one token of history gives exact values."""

    VOCAB = 256

    def __init__(self) -> None:
        self.evaluated: list[list[int]] = []
        self._tokens: list[int] = []

    def tokenize(self, data: bytes, add_bos: bool = True, special: bool = False) -> list[int]:
        return ([1] if add_bos else []) + list(data)

    def detokenize(self, tokens) -> bytes:
        return bytes(t for t in tokens if t != 1)

    def reset(self) -> None:
        self._tokens = []

    def eval(self, tokens) -> None:
        self._tokens = list(tokens)
        self.evaluated.append(list(tokens))

    @staticmethod
    def logits_after(token: int) -> np.ndarray:
        row = np.zeros(MarkovLlama.VOCAB)
        row[(token + 1) % MarkovLlama.VOCAB] = 3.0
        row[(token * 7) % MarkovLlama.VOCAB] += 1.0
        return row

    @property
    def scores(self) -> np.ndarray:
        return np.stack([self.logits_after(t) for t in self._tokens])


def _exact(tokens: list[int], start: int) -> list[float]:
    out = []
    for i in range(start, len(tokens)):
        row = MarkovLlama.logits_after(tokens[i - 1])
        out.append(float(row[tokens[i]] - np.log(np.exp(row).sum())))
    return out


@pytest.fixture
def markov_backend(tmp_path):
    requires("llama_cpp")
    from vericite.models.llamacpp import LlamaCppBackend

    f = tmp_path / "m.gguf"
    f.write_bytes(b"GGUF")
    b = LlamaCppBackend(f, scorer_n_ctx=8, sha256="0" * 64)
    b._scorer = b._llm = MarkovLlama()  # never load a model
    return b


def test_llamacpp_continuation_logprobs_score_only_the_continuation(markov_backend):
    b = markov_backend
    assert isinstance(b, ContinuationScorer) and isinstance(b, Tokenizer) and isinstance(b, CacheKeyed)
    prefix, cont = "abcdefghijklmnopqrst", "uvwxyz0123456789"  # 21 + 16 tokens: several windows of 8
    got = b.continuation_logprobs([(prefix, cont), ("", "ab")])
    head = [1] + list(prefix.encode())
    assert got[0] == pytest.approx(_exact(head + list(cont.encode()), len(head)), abs=1e-9)
    assert len(got[0]) == len(cont)
    assert got[1] == pytest.approx(_exact([1, 97, 98], 1), abs=1e-9)  # after BOS alone
    # windows never exceed the scorer's context
    assert max(len(w) for w in b._scorer.evaluated) <= 8


def test_llamacpp_logprobs_unchanged_by_the_shared_windowing(markov_backend):
    text = "the quick brown fox jumps"
    toks = [1] + list(text.encode())
    assert markov_backend.logprobs([text, ""]) == [pytest.approx(_exact(toks, 1), abs=1e-9), []]


def test_llamacpp_token_spans_are_the_continuation_logprobs_with_their_characters(markov_backend):
    from vericite.protocols import TokenSpanScorer

    b = markov_backend
    assert isinstance(b, TokenSpanScorer)
    prefix, cont = "abc", "héllo wörld"  # two-byte characters: two tokens, one character
    spans = b.continuation_token_spans([(prefix, cont), ("x", "")])
    assert [lp for _, _, lp in spans[0]] == pytest.approx(b.continuation_logprobs([(prefix, cont)])[0], abs=1e-12)
    assert spans[1] == []
    ends = [e for _, e, _ in spans[0]]
    assert ends[-1] == len(cont) and ends == sorted(ends)
    assert "".join(cont[s:e] for s, e, _ in spans[0]) == cont
