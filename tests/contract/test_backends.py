"""Contract of LLMBackend (and of each capability a backend declares), run against every backend and model."""

from __future__ import annotations

import math

import pytest

from vericite.models.cache import CachedBackend, CallCache
from vericite.models.usage import UsageMeter, metered
from vericite.protocols import CacheKeyed, Closeable, ContinuationScorer, LLMBackend, NextTokenScorer, NextTokenUsage, Tokenizer, TokenSpanScorer
from vericite.types import Completion, GenParams, ModelIdentity, Usage

from .impls import params

BACKENDS = params("backends") + params("models")
#: the optional scoring capabilities a backend may lack (declared in impls.py as ``extra["lacks"]``), and the
#: method each adds
CAPABILITIES = {"NextTokenScorer": (NextTokenScorer, "next_token_logprobs"), "ContinuationScorer": (ContinuationScorer, "continuation_logprobs"),
    "TokenSpanScorer": (TokenSpanScorer, "continuation_token_spans"), "NextTokenUsage": (NextTokenUsage, "next_token_logprobs_usage"),
}


def lacks(impl) -> tuple[str, ...]:
    return tuple(impl.extra.get("lacks", ()))


def having(capability: str) -> list:
    """The backends declared to have ``capability``: its suite runs on them, so nothing is skipped."""
    return [p for p in BACKENDS if capability not in lacks(p.values[0])]


def lacking() -> list:
    return [pytest.param(p.values[0], c, id=f"{p.id}-{c}", marks=p.marks) for p in BACKENDS for c in lacks(p.values[0])]


PROMPTS = [
    [{"role": "system", "content": "Answer briefly."}, {"role": "user", "content": "Is Rome in Italy? Answer Yes or No."}],
    [{"role": "user", "content": "Name a colour."}],
]


@pytest.fixture(params=BACKENDS)
def backend(request, tmp_path):
    return request.param.build(tmp_path)


@pytest.fixture(params=having("NextTokenScorer"))
def next_token_scorer(request, tmp_path):
    return request.param.build(tmp_path)


@pytest.fixture(params=having("ContinuationScorer"))
def continuation_scorer(request, tmp_path):
    return request.param.build(tmp_path)


def test_is_a_backend_with_an_identity(backend):
    assert isinstance(backend, LLMBackend)
    ident = backend.identity()
    assert isinstance(ident, ModelIdentity) and ident.name and ident.backend
    assert backend.identity() == ident


def test_generate_answers_each_prompt_in_order_within_max_tokens(backend):
    out = backend.generate(PROMPTS, GenParams(max_tokens=4, temperature=0.0))
    assert len(out) == len(PROMPTS) and all(isinstance(c, Completion) for c in out)
    for c in out:
        assert isinstance(c.text, str) and 0 <= c.completion_tokens <= 4 and c.prompt_tokens >= 0
    again = backend.generate(PROMPTS, GenParams(max_tokens=4, temperature=0.0))
    assert [c.text for c in again] == [c.text for c in out]  # greedy is deterministic
    assert backend.generate([], GenParams()) == []


def test_top_logprobs_are_given_per_generated_token_when_asked(backend):
    c = backend.generate(PROMPTS[:1], GenParams(max_tokens=2, temperature=0.0, top_logprobs=2))[0]
    assert c.top_logprobs is not None and 1 <= len(c.top_logprobs) <= 2
    for step in c.top_logprobs:
        assert step and all(isinstance(t, str) and v <= 0 for t, v in step.items())


def test_logprobs_one_list_per_text(backend):
    out = backend.logprobs(["Rome is in Italy.", "The sky is blue today."])
    assert len(out) == 2 and all(out) and all(math.isfinite(v) and v <= 0 for row in out for v in row)


def test_declares_exactly_the_capabilities_it_has(backend, request):
    missing = lacks(request.node.callspec.params["backend"])
    for name, (capability, _) in CAPABILITIES.items():
        assert isinstance(backend, capability) == (name not in missing), f"{name}: impls.py says {'lacks' if name in missing else 'has'} it"


@pytest.mark.parametrize("impl, name", lacking())
def test_a_capability_it_lacks_is_not_faked_by_the_cache_or_the_meter(impl, name, tmp_path):
    """Callers test ``isinstance(backend, Capability)`` and fall back; the call cache and the usage meter wrap a
    backend with exactly its capabilities, so they must not offer the one it lacks."""
    backend = impl.build(tmp_path)
    capability, method = CAPABILITIES[name]
    for b in (backend, CachedBackend(backend, CallCache(tmp_path / "calls.sqlite")), metered(backend, UsageMeter())):
        assert not isinstance(b, capability) and not hasattr(b, method), type(b)


def test_next_token_logprobs_cover_every_candidate(next_token_scorer):
    backend = next_token_scorer
    rows = backend.next_token_logprobs(PROMPTS, ["Yes", "No"])
    assert len(rows) == 2 and all(set(r) == {"Yes", "No"} and all(v <= 0 for v in r.values()) for r in rows)


@pytest.fixture(params=having("NextTokenUsage"))
def next_token_usage(request, tmp_path):
    return request.param.build(tmp_path)


def test_next_token_usage_is_one_call_per_prompt_with_its_tokens_and_the_same_scores(next_token_usage, tmp_path):
    backend = next_token_usage
    rows = backend.next_token_logprobs_usage(PROMPTS, ["Yes", "No"])
    for (scores, _), plain in zip(rows, backend.next_token_logprobs(PROMPTS, ["Yes", "No"])):
        assert scores == pytest.approx(plain)
    for _, u in rows:
        assert isinstance(u, Usage) and u.calls == 1 and u.prompt_tokens > 0 and u.completion_tokens in (0, 1) and not u.uncounted_calls
    meter = UsageMeter()  # through the cache (twice: the hit keeps the usage) and the meter
    cached = CachedBackend(backend, CallCache(tmp_path / "u.sqlite"))
    for _ in range(2):
        metered(cached, meter).next_token_logprobs(PROMPTS, ["Yes", "No"])
    one = sum((u for _, u in rows), Usage())
    assert meter.usage == one + one


def test_continuation_logprobs_score_the_continuation(continuation_scorer):
    backend = continuation_scorer
    rows = backend.continuation_logprobs([("Rome is the capital of", " Italy."), ("The sky is", " blue and clear today.")])
    assert len(rows) == 2 and all(rows) and all(math.isfinite(v) and v <= 0 for row in rows for v in row)
    assert len(rows[1]) > len(rows[0])  # one value per token of the continuation only


@pytest.fixture(params=having("TokenSpanScorer"))
def token_span_scorer(request, tmp_path):
    return request.param.build(tmp_path)


def test_token_spans_cover_the_continuation_with_its_logprobs(token_span_scorer):
    backend = token_span_scorer
    pairs = [("Rome is the capital of", " Italy."), ("", "The sky is blue. It is clear today.")]
    rows = backend.continuation_token_spans(pairs)
    assert len(rows) == 2
    for (_, cont), row in zip(pairs, rows):
        assert row and all(math.isfinite(lp) and lp <= 0 for _, _, lp in row)
        assert all(0 <= s <= e <= len(cont) for s, e, _ in row) and [e for _, e, _ in row] == sorted(e for _, e, _ in row)
        assert cont[row[-1][1]:].strip() == ""  # the last token reaches the end of the text
    assert [lp for _, _, lp in rows[0]] == pytest.approx(backend.continuation_logprobs(pairs[:1])[0], abs=1e-4)


def test_other_capabilities_behave(backend):
    if isinstance(backend, Tokenizer):
        toks = backend.tokenize("Rome is in Italy.")
        assert toks and all(isinstance(t, int) for t in toks)
    if isinstance(backend, CacheKeyed):
        assert isinstance(backend.cache_key_extra(), dict)
    if isinstance(backend, Closeable):
        assert callable(backend.close)
