"""Usage metering: MeteredBackend counts the tokens and calls of every kind of model call, has exactly the
capabilities of what it wraps, and counts calls the cache answers like fresh ones."""

from __future__ import annotations

import threading

from vericite.models.cache import CachedBackend, CallCache
from vericite.models.fake import FakeBackend
from vericite.models.usage import MeteredBackend, UsageMeter, metered
from vericite.protocols import CacheKeyed, Closeable, ContinuationScorer, LLMBackend, NextTokenScorer, Tokenizer
from vericite.types import Completion, GenParams, ModelIdentity, Usage

from tests.support.backends import PlainBackend

MSG = [{"role": "user", "content": "one two three"}]


def test_generate_counts_the_tokens_each_completion_reports_and_one_call_per_prompt():
    meter = UsageMeter()
    b = MeteredBackend(FakeBackend(default="a b c d"), meter)
    out = b.generate([MSG, [{"role": "user", "content": "x"}]], GenParams())
    assert [c.text for c in out] == ["a b c d", "a b c d"]
    assert meter.usage == Usage(prompt_tokens=3 + 1, completion_tokens=4 + 4, calls=2)
    assert meter.usage == sum((Usage.of(c) for c in out), Usage())


def test_scoring_calls_are_counted_too():
    meter = UsageMeter()
    fake = FakeBackend()
    b = MeteredBackend(fake, meter)
    lps = b.logprobs(["one two three", "four", ""])
    assert meter.usage == Usage(len(lps[0]) + 1 + len(lps[1]) + 1, 0, 3) == Usage(4, 0, 3)
    before = meter.usage
    cont = b.continuation_logprobs([("a prefix", "x y"), ("", "z")])
    assert meter.since(before) == Usage(sum(len(c) for c in cont), 0, 2) == Usage(3, 0, 2)
    before = meter.usage
    b.next_token_logprobs([MSG, MSG, MSG], ["Yes", "No"])
    assert meter.since(before) == Usage(0, 0, 3)
    assert fake.calls == {"generate": 0, "logprobs": 1, "next_token_logprobs": 3, "continuation_logprobs": 1, "continuation_token_spans": 0}
    before = meter.usage
    assert b.tokenize("a b") == fake.tokenize("a b") and meter.usage == before  # not a model call


def test_the_meter_has_exactly_the_capabilities_of_what_it_wraps(tmp_path):
    plain = MeteredBackend(PlainBackend(), UsageMeter())
    assert isinstance(plain, LLMBackend) and isinstance(plain, MeteredBackend)
    for cap in (NextTokenScorer, ContinuationScorer, Tokenizer, CacheKeyed, Closeable):
        assert not isinstance(plain, cap), cap
    assert not hasattr(plain, "next_token_logprobs") and not hasattr(plain, "close")
    fake = MeteredBackend(FakeBackend(), UsageMeter())
    assert all(isinstance(fake, c) for c in (NextTokenScorer, ContinuationScorer, Tokenizer, Closeable))
    assert not isinstance(fake, CacheKeyed) and type(fake).__name__ == "MeteredBackend"

    class Keyed(PlainBackend):
        def cache_key_extra(self):
            return {"n_ctx": 4096}

    keyed = MeteredBackend(Keyed(), UsageMeter())
    assert isinstance(keyed, CacheKeyed) and keyed.cache_key_extra() == {"n_ctx": 4096}
    # behind the call cache the wrapped one keeps the cache's capabilities (and its attributes pass through)
    cached = MeteredBackend(CachedBackend(FakeBackend(), CallCache(tmp_path / "c.sqlite")), UsageMeter())
    assert isinstance(cached, NextTokenScorer) and isinstance(cached, ContinuationScorer)
    assert cached.cache.path == tmp_path / "c.sqlite" and cached.identity().name == "fake"


def test_calls_answered_by_the_cache_count_with_the_tokens_first_reported(tmp_path):
    cache = CallCache(tmp_path / "c.sqlite")
    inner = FakeBackend(default="w1 w2")
    first, second = UsageMeter(), UsageMeter()
    a = MeteredBackend(CachedBackend(inner, cache), first).generate([MSG], GenParams())[0]
    b = MeteredBackend(CachedBackend(inner, cache), second).generate([MSG], GenParams())[0]
    assert not a.cached and b.cached and inner.calls["generate"] == 1
    assert first.usage == second.usage == Usage(3, 2, 1)


def test_many_threads_lose_no_count():
    meter = UsageMeter()
    b = MeteredBackend(FakeBackend(default="x"), meter)

    def work():
        for _ in range(200):
            b.generate([MSG], GenParams())

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert meter.usage == Usage(3 * 800, 800, 800)


def test_metered_wraps_once_per_meter():
    meter = UsageMeter()
    b = metered(FakeBackend(), meter)
    assert metered(b, meter) is b and metered(b, None) is b
    assert isinstance(metered(b, UsageMeter()), MeteredBackend) and metered(b, UsageMeter()).backend is b


class _OneCompletion:
    def identity(self):
        return ModelIdentity(name="one", backend="plugin", model="one")

    def generate(self, prompts, params):
        return [Completion("x", prompt_tokens=7, completion_tokens=2) for _ in prompts]

    def logprobs(self, texts):
        return [[] for _ in texts]


def test_a_plugin_backend_with_the_core_only_is_metered():
    meter = UsageMeter()
    b = MeteredBackend(_OneCompletion(), meter)
    b.generate([MSG] * 3, GenParams())
    b.logprobs(["a"])
    assert meter.usage == Usage(21 + 1, 6, 4)
