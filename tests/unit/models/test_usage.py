"""Usage metering: MeteredBackend counts the tokens and calls of every kind of model call, has exactly the
capabilities of what it wraps, and counts calls the cache answers like fresh ones."""

from __future__ import annotations

import threading

from vericite.models.cache import CachedBackend, CallCache
from vericite.models.fake import FakeBackend
from vericite.models.usage import MeteredBackend, UsageMeter, metered
from vericite.protocols import CacheKeyed, Closeable, ContinuationScorer, LLMBackend, NextTokenScorer, NextTokenUsage, Tokenizer
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
    assert meter.since(before) == Usage(3 * 3, 3, 3)  # the fake's usage: the prompt's words, one completion token
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


class _Silent:
    """A next-token scorer that does not say what its calls cost (no ``next_token_logprobs_usage``)."""

    def identity(self):
        return ModelIdentity(name="silent", backend="test", model="silent")

    def generate(self, prompts, params):
        return [Completion(text="x") for _ in prompts]

    def logprobs(self, texts):
        return [[] for _ in texts]

    def next_token_logprobs(self, prompts, candidates):
        return [{c: -1.0 for c in candidates} for _ in prompts]


def test_next_token_usage_is_counted_from_what_the_backend_reports():
    meter = UsageMeter()
    fake = FakeBackend(default="Yes it is")
    b = MeteredBackend(fake, meter)
    assert isinstance(b, NextTokenUsage)
    rows = b.next_token_logprobs_usage([MSG, [{"role": "system", "content": "judge"}, {"role": "user", "content": "a b"}]], ["Yes", "No"])
    assert [u for _, u in rows] == [Usage(3, 1, 1), Usage(1 + 2, 1, 1)]
    assert [s for s, _ in rows] == fake.next_token_logprobs([MSG, [{"role": "system", "content": "judge"}, {"role": "user", "content": "a b"}]], ["Yes", "No"])
    assert meter.usage == Usage(6, 2, 2) and meter.usage.to_dict() == {"prompt_tokens": 6, "completion_tokens": 2, "calls": 2}


def test_a_scorer_that_reports_no_tokens_counts_as_tokens_unknown_never_zero_tokens():
    meter = UsageMeter()
    b = MeteredBackend(_Silent(), meter)
    assert isinstance(b, NextTokenScorer) and not isinstance(b, NextTokenUsage) and not hasattr(b, "next_token_logprobs_usage")
    b.next_token_logprobs([MSG, MSG], ["Yes"])
    assert meter.usage == Usage(0, 0, 2, uncounted_calls=2)
    assert meter.usage.to_dict() == {"prompt_tokens": 0, "completion_tokens": 0, "calls": 2, "uncounted_calls": 2}
    b.generate([MSG], GenParams())
    assert meter.usage.calls == 3 and meter.usage.uncounted_calls == 2  # a generate call reports its own
    assert Usage.from_dict(meter.usage.to_dict()) == meter.usage


def test_next_token_usage_through_the_cache_old_entries_read_as_unknown(tmp_path):
    import sqlite3

    cache = CallCache(tmp_path / "c.sqlite")
    inner = FakeBackend(default="No")
    first, second = UsageMeter(), UsageMeter()
    fresh = MeteredBackend(CachedBackend(inner, cache), first).next_token_logprobs([MSG], ["Yes", "No"])
    again = MeteredBackend(CachedBackend(inner, cache), second).next_token_logprobs([MSG], ["Yes", "No"])
    assert fresh == again and inner.calls["next_token_logprobs"] == 1
    assert first.usage == second.usage == Usage(3, 1, 1)  # a hit counts with the usage first reported
    # the log-probabilities' entry keeps the value it always had: an older vericite reads it unchanged
    con = sqlite3.connect(tmp_path / "c.sqlite")
    rows = dict(con.execute("SELECT kind, value FROM calls").fetchall())
    assert set(rows) == {"next_token_logprobs", "next_token_usage"}
    import json

    assert json.loads(rows["next_token_logprobs"]) == fresh[0]
    # an entry written before usage was stored (no usage entry): tokens unknown, the scores still a hit
    con.execute("DELETE FROM calls WHERE kind = 'next_token_usage'")
    con.commit()
    con.close()
    third = UsageMeter()
    cached = CachedBackend(inner, CallCache(tmp_path / "c.sqlite"))
    rows3 = MeteredBackend(cached, third).next_token_logprobs_usage([MSG], ["Yes", "No"])
    assert rows3 == [(fresh[0], None)] and inner.calls["next_token_logprobs"] == 1
    assert third.usage == Usage.unknown(1) and cached.cache.hits == 1 and cached.cache.misses == 0


def test_a_cache_over_a_scorer_without_usage_has_no_usage_capability(tmp_path):
    cached = CachedBackend(_Silent(), CallCache(tmp_path / "c.sqlite"))
    assert isinstance(cached, NextTokenScorer) and not isinstance(cached, NextTokenUsage)
    meter = UsageMeter()
    MeteredBackend(cached, meter).next_token_logprobs([MSG], ["Yes"])
    MeteredBackend(cached, meter).next_token_logprobs([MSG], ["Yes"])
    assert meter.usage == Usage.unknown(2)


def test_generate_says_when_some_calls_tokens_are_unknown(capsys):
    from vericite.cli.generate import print_summary

    print_summary({"summary": {"n_done": 1, "tokens": {"prompt": 5, "completion": 2, "uncounted_calls": 3}}}, "o")
    assert "tokens: 5 prompt + 2 completion (and 3 calls of unknown tokens: a lower bound)" in capsys.readouterr().out
    print_summary({"summary": {"n_done": 1, "tokens": {"prompt": 5, "completion": 2}}}, "o")
    assert "unknown" not in capsys.readouterr().out
