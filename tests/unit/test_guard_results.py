"""What a plugin model backend's batched calls return is checked by its guard (``guard.RESULT_CHECKS``):
``generate`` gives one ``Completion`` per prompt, ``next_token_logprobs`` one dict (or None) per prompt and
``next_token_logprobs_usage`` one (that, ``Usage`` or None) pair per prompt, else the call
fails with a ``PluginError`` of the backend's kind naming the plugin, the method and what came back, as a raising
plugin's call does. Judges' and pair scorers' results are not checked here (CONNER and VTG handle a wrong-length
result where they use it). The fake backend has no property, so it is guarded in place (the e2e tests'
``FakeBackend`` subclass, which has one, is guarded by a proxy)."""

from __future__ import annotations

import pytest

from vericite import registry
from vericite.errors import PluginError
from vericite.fakes.judges import KeywordJudge
from vericite.fakes.scoring import FakePairScorer
from vericite.guard import GuardedProxy
from vericite.types import Completion, GenParams, JudgePair, ModelIdentity, Usage

PROMPTS = [[{"role": "user", "content": "one"}], [{"role": "user", "content": "two"}]]


class Plain:
    """A plugin backend with no property, whose results are ``result`` (set by each test)."""

    result: object = None
    scores: object = None

    def identity(self):
        return ModelIdentity(name="plain", backend="plain", model="plain", sha256=None)

    def generate(self, prompts, params):
        return self.result

    def logprobs(self, texts):
        return [[] for _ in texts]

    def next_token_logprobs(self, prompts, candidates):
        return self.scores

    def next_token_logprobs_usage(self, prompts, candidates):
        return self.scores


@pytest.fixture
def backend():
    registry.backends.register("plain", lambda arg, *, ctx, **o: Plain(), replace=True)
    yield registry.backends.create("plain")
    registry.backends.unregister("plain")


@pytest.mark.parametrize("result, said", [
    (None, "returned None from generate, expected 2 completions"),
    ({"text": "x"}, "returned a dict from generate, expected 2 completions"),
    ([Completion("a")], "returned a list of 1 from generate, expected 2 completions"),
    ([Completion("a"), "b"], "returned a list with a str (item 1) from generate, expected 2 completions"),
])  # fmt: skip
def test_a_plugin_backends_generate_returning_garbage_fails_naming_the_plugin_and_what_came_back(backend, result, said):
    assert not isinstance(backend, GuardedProxy)  # guarded in place
    backend.result = result
    with pytest.raises(PluginError) as e:
        backend.generate(PROMPTS, GenParams())
    assert str(e.value) == f"backend 'plain' (plugin) {said}" and e.value.kind == "backend"
    with pytest.raises(PluginError):  # called with keywords, as the Protocol allows
        backend.generate(prompts=PROMPTS, params=GenParams())


def test_a_plugin_backends_generate_with_one_completion_per_prompt_is_returned_as_it_is(backend):
    backend.result = good = [Completion("a"), Completion("b")]
    assert backend.generate(PROMPTS, GenParams()) is good
    backend.result = ()
    assert backend.generate([], GenParams()) == ()


def test_a_plugin_backends_next_token_logprobs_gives_one_dict_per_prompt(backend):
    backend.scores = [{"Yes": -0.1}]
    with pytest.raises(PluginError, match=r"^backend 'plain' \(plugin\) returned a list of 1 from next_token_logprobs, expected 2 dicts of log-probabilities$"):
        backend.next_token_logprobs(PROMPTS, ["Yes", "No"])
    backend.scores = [-0.1, -0.2]
    with pytest.raises(PluginError, match=r"a list with a float \(item 0\) from next_token_logprobs"):
        backend.next_token_logprobs(PROMPTS, ["Yes", "No"])
    backend.scores = good = [{"Yes": -0.1}, {"Yes": -0.2}]
    assert backend.next_token_logprobs(PROMPTS, ["Yes", "No"]) is good
    backend.scores = good = [None, {"Yes": -0.2}]  # a prompt without log-probabilities: the judges read none
    assert backend.next_token_logprobs(PROMPTS, ["Yes", "No"]) is good


def test_a_plugin_backends_next_token_logprobs_usage_gives_one_pair_per_prompt(backend):
    for garbage, got in [([{"Yes": -0.1}, {"Yes": -0.2}], "a list with a dict (item 0)"), ([({"Yes": -0.1}, Usage(3, 1, 1))], "a list of 1"),
                         ([({"Yes": -0.1}, None), ({"Yes": -0.2}, 3)], "a list with a tuple (item 1)")]:  # fmt: skip
        backend.scores = garbage
        with pytest.raises(PluginError) as e:
            backend.next_token_logprobs_usage(PROMPTS, ["Yes"])
        assert str(e.value) == f"backend 'plain' (plugin) returned {got} from next_token_logprobs_usage, expected 2 (log-probabilities, usage) pairs"
    backend.scores = good = [({"Yes": -0.1}, Usage(3, 1, 1)), (None, None)]
    assert backend.next_token_logprobs_usage(PROMPTS, ["Yes"]) is good


class ShortJudge(KeywordJudge):
    def judge(self, pairs):
        return []


class ShortScorer(FakePairScorer):
    def score(self, pairs):
        return []


def test_a_plugin_judges_or_scorers_wrong_length_result_is_left_to_its_caller():
    registry.judges.register("short", lambda arg, *, ctx, **o: ShortJudge(), replace=True)
    registry.scorers.register("short", lambda arg, *, ctx, **o: ShortScorer(), replace=True)
    try:
        assert registry.judges.create("short").judge([JudgePair(claim="a", evidence="b")]) == []
        assert registry.scorers.create("short").score([("a", "b")]) == []
    finally:
        registry.judges.unregister("short")
        registry.scorers.unregister("short")
