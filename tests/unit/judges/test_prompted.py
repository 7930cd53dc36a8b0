"""What the three prompted judges (llm:, llm3:, llm4:) share through judges/prompted.py: the batch size checked,
calls of batch_size prompts, the answers back in input order, a backend that answers too few an error, and the
top_logprobs path for a backend that cannot score next tokens."""

from __future__ import annotations

import json

import pytest

from vericite.errors import BackendError, PromptTooLongError, VericiteError
from vericite.judges.four_class import LLM4Judge
from vericite.judges.llm import LLMJudge
from vericite.judges.three_way import LLM3Judge
from vericite.types import Completion, JudgePair, ModelIdentity

# per judge: the word each claim's prompt answers with (by the claim), and the label that word means
JUDGES = [
    (LLMJudge, {"a": "Yes", "b": "No"}, lambda j: j.label, {"a": "supported", "b": "not_supported"}),
    (LLM3Judge, {"a": "Supports", "b": "Refutes"}, lambda j: j.label, {"a": "supports", "b": "refutes"}),
    (LLM4Judge, {"a": "Supportive", "b": "Irrelevant"}, lambda j: max(j.scores, key=j.scores.get), {"a": "supportive", "b": "irrelevant"}),
]


class Words:
    """Answers each prompt with one word, chosen by the claim ("a..." or "b...") found in the prompt's last
    message; ``short``: drops the last answer of every call; ``scorer``: has next_token_logprobs."""

    def __init__(self, words: dict[str, str], *, short: bool = False) -> None:
        self.words, self.short, self.calls = words, short, []

    def identity(self) -> ModelIdentity:
        return ModelIdentity(name="words", backend="test", model="words")

    def _word(self, messages) -> str:
        text = messages[-1]["content"]
        return self.words["a"] if "claim-a" in text else self.words["b"]

    def generate(self, prompts, params):
        self.calls.append(len(prompts))
        assert params.max_tokens == 1 and params.top_logprobs
        out = [Completion(text=self._word(m), top_logprobs=[{self._word(m): -0.01, "zzz": -5.0}]) for m in prompts]
        return out[:-1] if self.short else out


class ScoringWords(Words):
    def next_token_logprobs(self, prompts, candidates):
        self.calls.append(len(prompts))
        out = [{c: (-0.01 if c == self._word(m) else -9.0) for c in candidates} for m in prompts]
        return out[:-1] if self.short else out


def pairs():
    # evidence sorted against input order, so a judge that sorts by evidence must put the answers back
    return [JudgePair(evidence=f"e{9 - i}", claim=f"claim-{'ab'[i % 2]} {i}", question="q?") for i in range(5)]


@pytest.mark.parametrize("backend_class", [Words, ScoringWords])
@pytest.mark.parametrize("judge_class, words, label_of, want", JUDGES)
def test_calls_of_batch_size_answers_in_input_order(judge_class, words, label_of, want, backend_class):
    backend = backend_class(words)
    judge = judge_class(backend, batch_size=2)
    out = judge.judge(pairs())
    assert backend.calls == [2, 2, 1]
    assert [j.claim for j in out] == [p.claim for p in pairs()]
    assert [label_of(j) for j in out] == [want["ab"[i % 2]] for i in range(5)]
    assert all(j.status == "ok" for j in out)
    if judge_class is not LLM3Judge:  # llm3 records its label masses only
        assert ("text" in json.loads(out[0].raw)) is (backend_class is Words)  # the generated word kept on that path only


@pytest.mark.parametrize("judge_class, words, label_of, want", JUDGES)
@pytest.mark.parametrize("bad", [0, -1, 2.5, True, "8"])
def test_a_bad_batch_size_is_one_error(judge_class, words, label_of, want, bad):
    with pytest.raises(VericiteError, match="batch_size must be a whole number of at least 1"):
        judge_class(Words(words), batch_size=bad)


@pytest.mark.parametrize("backend_class", [Words, ScoringWords])
@pytest.mark.parametrize("judge_class, words, label_of, want", JUDGES)
def test_a_backend_answering_too_few_is_an_error_naming_it(judge_class, words, label_of, want, backend_class):
    with pytest.raises(VericiteError, match="backend 'words' answered 1 of 2 judge prompts"):
        judge_class(backend_class(words, short=True), batch_size=2).judge(pairs()[:2])


class TooLong(Words):
    """Raises PromptTooLongError for a call holding a prompt whose claim says "long", as llama.cpp does for a
    prompt past its context; the other prompts are answered."""

    def _check(self, prompts):
        self.calls.append(len(prompts))
        if any("long" in m[-1]["content"] for m in prompts):
            raise PromptTooLongError("llama.cpp: Requested tokens (4780) exceed context window of 4096")

    def generate(self, prompts, params):
        self._check(prompts)
        self.calls.pop()
        return super().generate(prompts, params)


class ScoringTooLong(TooLong, ScoringWords):
    def next_token_logprobs(self, prompts, candidates):
        self._check(prompts)
        self.calls.pop()
        return ScoringWords.next_token_logprobs(self, prompts, candidates)


@pytest.mark.parametrize("backend_class", [TooLong, ScoringTooLong])
@pytest.mark.parametrize("judge_class, words, label_of, want", JUDGES)
def test_a_prompt_too_long_fails_alone_and_the_others_are_judged(judge_class, words, label_of, want, backend_class):
    given = pairs()
    given[1] = JudgePair(evidence="e8", claim="claim-b long table", question="q?")
    backend = backend_class(words)
    out = judge_class(backend, batch_size=2).judge(given)
    assert [j.claim for j in out] == [p.claim for p in given]
    assert [j.status for j in out] == ["ok", "failed", "ok", "ok", "ok"]
    bad = out[1]
    assert bad.probability is None and bad.label is None and bad.judge == out[0].judge
    assert json.loads(bad.raw) == {"error": "llama.cpp: Requested tokens (4780) exceed context window of 4096"}
    assert [label_of(j) for j in out[:1] + out[2:]] == [want["ab"[i % 2]] for i in (0, 2, 3, 4)]
    # calls of 2, 2 and 1 prompts; the one holding the long prompt failed, then its two were asked one at a time
    assert sorted(backend.calls) == [1, 1, 1, 2, 2]


def test_another_backend_error_is_not_taken_for_a_prompt_too_long():
    class Down(ScoringWords):
        def next_token_logprobs(self, prompts, candidates):
            raise BackendError("server unreachable")

    with pytest.raises(BackendError, match="server unreachable"):
        LLM3Judge(Down({"a": "Supports", "b": "Refutes"}), batch_size=2).judge(pairs())
