"""The real embedded backend: SmolLM2-135M through llama.cpp (slow; runs in CI, where it never skips)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from vericite.models import load_model
from vericite.models.cache import CachedBackend
from vericite.models.llamacpp import LlamaCppBackend, default_threads
from vericite.protocols import LLMBackend
from vericite.types import GenParams

from tests.support.guards import require_smollm2

pytestmark = pytest.mark.slow

# a long shared one-shot demonstration, as KaLMA prompts have
DEMO = (
    "You answer questions using the knowledge given. Cite each fact you use as [entity id, property: value], "
    "and write [NA] after any claim the knowledge does not support.\n\n"
    "Knowledge: [Q1, occupation: painter] [Q1, date of birth: 1853] [Q1, place of birth: Zundert]\n"
    "Question: Who was Vincent van Gogh?\n"
    "Answer: Vincent van Gogh was a painter [Q1, occupation: painter] born in 1853 [Q1, date of birth: 1853] "
    "in Zundert [Q1, place of birth: Zundert]. He sold few paintings in his life [NA].\n\n"
)


def chat(question: str) -> list[dict[str, str]]:
    return [{"role": "system", "content": "You are a helpful assistant."}, {"role": "user", "content": DEMO + "Question: " + question}]




@pytest.fixture(scope="module")
def smol() -> LlamaCppBackend:
    require_smollm2()
    b = load_model("smollm2-135m", threads=1, cache=False, n_ctx=2048)
    yield b
    b.close()


def test_loads_through_the_registry_with_identity(smol):
    assert isinstance(smol, LlamaCppBackend) and isinstance(smol, LLMBackend)
    ident = smol.identity()
    from vericite.models.provision import SMOLLM2

    assert ident.name == "smollm2-135m" and ident.backend == "llamacpp"
    assert ident.model == SMOLLM2.filename and ident.sha256 == SMOLLM2.sha256
    assert smol.n_threads == 1


def test_the_registered_name_and_llamacpp_of_its_file_are_one_instance(smol):
    """``llamacpp:<the file of smollm2-135m>`` with the same settings is the instance ``smollm2-135m`` loaded: one
    copy of the weights, named as registered; it answers."""
    from vericite.models.provision import model_path

    other = load_model(f"llamacpp:{model_path('smollm2-135m')}", threads=1, cache=False, n_ctx=2048)
    assert other is smol and other.identity().name == "smollm2-135m"
    assert other.generate([[{"role": "user", "content": "Say hello."}]], GenParams(max_tokens=4))[0].text.strip()


def test_generation_works(smol):
    out = smol.generate([chat("Who was Claude Monet?"), [{"role": "user", "content": "Say hello."}]], GenParams(max_tokens=24))
    assert len(out) == 2
    for c in out:
        assert c.text.strip() and c.prompt_tokens > 0 and 0 < c.completion_tokens <= 24
        assert c.finish_reason in ("stop", "length") and c.seconds > 0 and not c.cached


def test_deterministic_with_temperature_zero_and_seed(smol):
    p = GenParams(max_tokens=20, temperature=0.0, seed=1)
    a = smol.generate([chat("Who was Claude Monet?")], p)[0]
    smol.generate([[{"role": "user", "content": "Something else entirely."}]], p)  # different state in between
    b = smol.generate([chat("Who was Claude Monet?")], p)[0]
    assert a.text == b.text and a.completion_tokens == b.completion_tokens
    s1 = GenParams(max_tokens=20, temperature=0.9, seed=42)
    x = smol.generate([chat("Who was Claude Monet?")], s1)[0]
    y = smol.generate([chat("Who was Claude Monet?")], s1)[0]
    assert x.text == y.text  # sampling with one seed repeats


def test_stop_sequences(smol):
    c = smol.generate([[{"role": "user", "content": "Count from 1 to 20, separated by commas."}]], GenParams(max_tokens=60, stop=("5",)))[0]
    assert "5" not in c.text and c.finish_reason == "stop"


def test_top_logprobs_one_dict_per_generated_token(smol):
    c = smol.generate([chat("Who was Claude Monet?")], GenParams(max_tokens=12, top_logprobs=3))[0]
    assert c.top_logprobs is not None and len(c.top_logprobs) == c.completion_tokens
    for step in c.top_logprobs:
        assert 1 <= len(step) <= 3
        assert all(math.isfinite(v) and v <= 0 for v in step.values())
    # greedy decoding starts with the most likely first token
    first = max(c.top_logprobs[0], key=c.top_logprobs[0].get)
    assert c.text.startswith(first.strip()[:1]) or c.text.lstrip().startswith(first.strip())


def test_logprobs_sane(smol):
    texts = ["The capital of France is Paris.", "Paris", "colourless green ideas sleep furiously"]
    lps = smol.logprobs(texts)
    for text, lp in zip(texts, lps):
        assert len(lp) == len(smol.tokenize(text)) - 1
        assert all(math.isfinite(v) and v < 0 for v in lp)
    assert smol.logprobs(texts) == lps  # deterministic
    # a fluent sentence is likelier per token than word salad
    assert np.mean(lps[0]) > np.mean(lps[2])


def test_logprobs_match_a_direct_computation(smol):
    text = "Vincent van Gogh was a Dutch painter."
    toks = smol.tokenize(text)
    sc = smol.scorer
    sc.reset()
    sc.eval(toks)
    scores = np.asarray(sc.scores[: len(toks)], dtype=np.float64)
    ref = [float(scores[i][toks[i + 1]] - np.log(np.exp(scores[i] - scores[i].max()).sum()) - scores[i].max()) for i in range(len(toks) - 1)]
    assert smol.logprobs([text])[0] == pytest.approx(ref, abs=1e-4)


def test_logprobs_of_long_text_use_windows():
    require_smollm2()
    b = load_model("smollm2-135m", threads=1, cache=False, scorer_n_ctx=32)
    text = " ".join(["The painter Vincent van Gogh was born in Zundert in 1853."] * 8)
    lp = b.logprobs([text])[0]
    assert len(lp) == len(b.tokenize(text)) - 1 > 64
    assert all(math.isfinite(v) and v <= 0 for v in lp)
    b.close()


def test_continuation_logprobs_are_the_tail_of_the_joint_text(smol):
    """log P(continuation | prefix) token by token: where the joint text tokenises as prefix + continuation,
    the values are logprobs' values for the continuation's tokens."""
    prefix, cont = "Vincent van Gogh was born in", " Zundert in 1853."
    tail = smol.llama.tokenize(cont.encode("utf-8"), add_bos=False, special=False)
    joint = smol.tokenize(prefix + cont)
    assert joint == smol.tokenize(prefix) + list(tail)  # the boundary is clean for this text
    got = smol.continuation_logprobs([(prefix, cont)])[0]
    assert len(got) == len(tail) and all(math.isfinite(v) and v <= 0 for v in got)
    assert got == pytest.approx(smol.logprobs([prefix + cont])[0][-len(tail):], abs=1e-4)


def test_next_token_logprobs_yes_no(smol):
    prompts = [
        [{"role": "user", "content": "Is Paris the capital of France? Answer Yes or No."}],
        [{"role": "user", "content": "Is 2 + 2 equal to 5? Answer Yes or No."}],
    ]
    rows = smol.next_token_logprobs(prompts, ["Yes", "No", " Yes"])
    assert len(rows) == 2
    for row in rows:
        assert set(row) == {"Yes", "No", " Yes"}
        assert all(math.isfinite(v) and v < 0 for v in row.values())
        assert math.exp(row["Yes"]) + math.exp(row["No"]) <= 1.0 + 1e-6
    # the same numbers as the first step of a greedy generation's alternatives
    c = smol.generate([prompts[0]], GenParams(max_tokens=1, top_logprobs=5))[0]
    for tok, lp in c.top_logprobs[0].items():
        if tok in rows[0]:
            assert lp == pytest.approx(rows[0][tok], abs=1e-4)


def test_a_prompt_past_the_context_is_prompt_too_long_and_a_judge_fails_that_pair_only(smol):
    """llama.cpp's "Requested tokens (...) exceed context window" is PromptTooLongError (a prompt's property, not
    the backend's failure); a prompted judge records that pair as failed and judges the others of its call."""
    from vericite.errors import PromptTooLongError
    from vericite.judges.three_way import LLM3Judge
    from vericite.types import JudgePair

    table = " | ".join(f"row {i} | 19{i % 100:02d} | value {i}" for i in range(600))  # no full stop: one "sentence"
    with pytest.raises(PromptTooLongError, match="exceed context window of 2048"):
        smol.next_token_logprobs([chat(table)], ["Yes", "No"])
    pairs = [JudgePair("Paris is the capital of France.", "Paris is in France."), JudgePair("Paris is the capital of France.", table)]
    out = LLM3Judge(smol, batch_size=2).judge(pairs)
    assert [j.status for j in out] == ["ok", "failed"]
    assert "exceed context window of 2048" in out[1].raw and out[1].probability is None
    assert smol.generate([chat("What is 2 + 2?")], GenParams(max_tokens=4, temperature=0.0))[0].text  # still answers


def test_prefix_reuse(smol):
    questions = ["Who was Claude Monet?", "Who was Paul Cezanne?", "Who was Edgar Degas?"]
    p = GenParams(max_tokens=8)
    smol.generate([[{"role": "user", "content": "unrelated warm-up"}]], p)
    before = smol.evaluated_tokens
    outs = smol.generate([chat(q) for q in questions], p)
    reused_cost = smol.evaluated_tokens - before
    full = sum(c.prompt_tokens + c.completion_tokens for c in outs)
    # the demonstration (hundreds of tokens) is evaluated once, not three times
    assert reused_cost < full - 2 * 150

    fresh = load_model("smollm2-135m", threads=1, cache=False, n_ctx=2048, reuse_prefix=False)
    before = fresh.evaluated_tokens
    outs2 = fresh.generate([chat(q) for q in questions], p)
    no_reuse_cost = fresh.evaluated_tokens - before
    assert no_reuse_cost >= sum(c.prompt_tokens for c in outs2)
    assert [c.text for c in outs2] == [c.text for c in outs]  # reuse changes cost, not answers
    fresh.close()


def test_threads_from_environment(monkeypatch):
    monkeypatch.setenv("VERICITE_THREADS", "1")
    assert default_threads() == 1
    monkeypatch.delenv("VERICITE_THREADS")
    assert default_threads() == 2


def test_cached_embedded_backend(tmp_path):
    require_smollm2()
    b = load_model("smollm2-135m", threads=1, cache=tmp_path / "calls.sqlite")
    assert isinstance(b, CachedBackend)
    p = GenParams(max_tokens=8)
    a = b.generate([[{"role": "user", "content": "Say hi."}]], p)[0]
    again = b.generate([[{"role": "user", "content": "Say hi."}]], p)[0]
    assert again.cached and again.text == a.text
    assert b.logprobs(["hello world"]) == b.logprobs(["hello world"])
    b.close()


def test_an_interrupted_scoring_call_keeps_the_texts_it_scored(smol, tmp_path):
    """Ctrl-C in the middle of one call of many texts (CONNER's LM measures): the texts llama.cpp scored before it
    are in the call cache, and the resumed call scores only the others, to the same numbers as one uninterrupted
    call."""
    from vericite.models.cache import CallCache
    from vericite.progress import items_of_call

    pairs = [("The capital of France is", f" Paris, and number {i} is next.") for i in range(4)]
    cache = CallCache(tmp_path / "calls.sqlite")
    said = []

    def advance(k):
        said.append(k)
        if len(said) == 2:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt), items_of_call(advance, len(pairs)):
        CachedBackend(smol, cache).continuation_token_spans(pairs)
    assert len(cache) == 2
    resumed = CachedBackend(smol, cache)
    again = resumed.continuation_token_spans(pairs)
    assert (cache.hits, len(cache)) == (2, 4)
    assert again == smol.continuation_token_spans(pairs)
    cache.close()


def test_unknown_option_is_refused():
    require_smollm2()
    from vericite.errors import BackendError

    with pytest.raises(BackendError, match="unknown llama.cpp option 'n_ctxx' \\(did you mean 'n_ctx'\\?\\)"):
        load_model("smollm2-135m", cache=False, n_ctxx=512)


def test_state_cache_restores_a_shared_prefix_and_changes_no_number():
    # prompts that alternate, as VTG's do (a generator's, a judge's, the generator's again): with only the last
    # prompt kept, the demonstration is evaluated at every switch; with the state cache it is restored instead
    require_smollm2()
    from vericite.judges.llm import build_messages

    judge = lambda claim: build_messages(DEMO, claim)  # noqa: E731
    prompts = [chat("Who was Claude Monet?"), judge("Monet was a painter."), chat("Who was Paul Cezanne?"), judge("Cezanne was a painter.")]
    cands = ["Yes", "No"]
    results = {}
    for mb in (0, 64):
        b = load_model("smollm2-135m", threads=1, cache=False, n_ctx=2048, state_cache_mb=mb)
        scores = [b.next_token_logprobs([p], cands)[0] for p in prompts]
        texts = [c.text for c in b.generate(prompts[:1], GenParams(max_tokens=6))]
        results[mb] = (b.evaluated_tokens, b.state_cache_stats, scores, texts)
        b.close()
    (plain, no_stats, s0, t0), (cached, stats, s1, t1) = results[0], results[64]
    assert no_stats == {"restored_states": 0, "restored_tokens": 0, "states": 0, "bytes": 0}
    assert stats["restored_states"] >= 2 and 0 < stats["bytes"] <= 64 << 20
    assert cached < plain - 2 * 150  # the demonstration evaluated once per kind of prompt, not at every switch
    assert s1 == s0 and t1 == t0  # bit for bit: restored states change the cost, not the numbers


def test_state_cache_options(monkeypatch):
    from vericite.errors import BackendError
    from vericite.models.llamacpp import default_state_cache_mb

    monkeypatch.setenv("VERICITE_STATE_CACHE_MB", "256")
    assert default_state_cache_mb() == 256
    for bad in ("lots", "-1"):
        monkeypatch.setenv("VERICITE_STATE_CACHE_MB", bad)
        with pytest.raises(BackendError, match="VERICITE_STATE_CACHE_MB"):
            default_state_cache_mb()
    monkeypatch.delenv("VERICITE_STATE_CACHE_MB")
    assert default_state_cache_mb() == 0
    require_smollm2()
    with pytest.raises(BackendError, match="reuse_prefix"):
        load_model("smollm2-135m", cache=False, state_cache_mb=8, reuse_prefix=False)
    monkeypatch.setenv("VERICITE_STATE_CACHE_MB", "64")
    assert load_model("smollm2-135m", cache=False).state_cache_mb == 64
    assert load_model("smollm2-135m", cache=False, reuse_prefix=False).state_cache_mb == 0  # asked not to reuse
