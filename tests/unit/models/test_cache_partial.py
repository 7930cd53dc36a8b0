"""A call of many items that is interrupted keeps what it answered: the backend says each answer as it has it
(``progress.answered``) and the call cache stores it at once, so a resumed call asks the backend for the rest only."""

from __future__ import annotations

import pytest

from vericite.models.cache import CachedBackend, CallCache
from vericite.models.fake import FakeBackend
from vericite.progress import answered, items_of_call

TEXTS = [f"text number {i} of the call" for i in range(5)]
PAIRS = [(f"prefix {i}", f"the continuation {i} here") for i in range(5)]


class Asked(FakeBackend):
    """The fake, recording the inputs each scoring call asked for."""

    def __init__(self) -> None:
        super().__init__()
        self.asked: list[list] = []

    def logprobs(self, texts):
        self.asked.append(list(texts))
        return super().logprobs(texts)

    def continuation_logprobs(self, pairs):
        self.asked.append(list(pairs))
        return super().continuation_logprobs(pairs)

    def continuation_token_spans(self, pairs):
        self.asked.append(list(pairs))
        return super().continuation_token_spans(pairs)


def interrupted_at(n: int):
    """A progress callback that is a Ctrl-C when the ``n``-th item of the call is said done."""
    seen = [0]

    def advance(k: int) -> None:
        seen[0] += k
        if seen[0] >= n:
            raise KeyboardInterrupt

    return advance


CALLS = [("logprobs", TEXTS), ("continuation_logprobs", PAIRS), ("continuation_token_spans", PAIRS)]


@pytest.mark.parametrize("kind,inputs", CALLS, ids=[k for k, _ in CALLS])
def test_an_interrupted_call_keeps_what_it_answered_and_the_resume_asks_for_the_rest(tmp_path, kind, inputs):
    cache = CallCache(tmp_path / "calls.sqlite")
    first = CachedBackend(Asked(), cache)
    with pytest.raises(KeyboardInterrupt), items_of_call(interrupted_at(3), len(inputs)):
        getattr(first, kind)(inputs)
    assert len(cache) == 3  # the three answered before the interrupt, not none

    fake = Asked()
    again = getattr(CachedBackend(fake, cache), kind)(inputs)
    assert fake.asked == [list(inputs[3:])]  # the fake answers in order: the first three came from the cache
    uncached = getattr(FakeBackend(), kind)(inputs)
    if kind == "continuation_token_spans":
        uncached = [[tuple(t) for t in row] for row in uncached]
    assert again == uncached  # what was stored as said reads back as what the call returns
    assert len(cache) == 5
    cache.close()


def test_a_call_that_returns_stores_each_answer_once_and_reads_back_the_same(tmp_path):
    cache = CallCache(tmp_path / "calls.sqlite")
    fake = Asked()
    b = CachedBackend(fake, cache)
    first = b.continuation_token_spans(PAIRS)
    assert len(cache) == 5 and b.continuation_token_spans(PAIRS) == first and len(fake.asked) == 1
    cache.close()


class Chatty(FakeBackend):
    """Says answers the call did not ask for, and answers of another kind (a method that calls another)."""

    def continuation_logprobs(self, pairs):
        answered("continuation_logprobs", ("not", "asked"), [-1.0])
        answered("logprobs", pairs[0], [-2.0])
        answered("continuation_logprobs", pairs[0], [-3.0])  # then the call returns another value for it
        return [[-4.0] for _ in pairs]


def test_only_an_asked_item_of_the_calls_kind_is_stored_and_the_first_word_is_kept(tmp_path):
    cache = CallCache(tmp_path / "calls.sqlite")
    b = CachedBackend(Chatty(), cache)
    assert b.continuation_logprobs(PAIRS[:2]) == [[-4.0], [-4.0]]
    assert len(cache) == 2  # neither the pair not asked nor the other kind
    again = CachedBackend(Chatty(), cache).continuation_logprobs(PAIRS[:2])
    assert again == [[-3.0], [-4.0]]  # what the backend said first is what the cache holds
    cache.close()


def test_answered_moves_a_bar_around_the_call_with_or_without_a_cache():
    steps: list[int] = []
    answered("logprobs", "a text", [-1.0])  # no call, no bar: no error
    with items_of_call(steps.append, 2):
        answered("logprobs", "a text", [-1.0])  # a bar, no cached call: the item is done
        assert steps == [1]
    assert steps == [1, 1]  # the rest of the call when it returns


class Garbage(FakeBackend):
    """A plugin's backend that says an unchecked answer during its call, then returns a well-shaped result."""

    def continuation_logprobs(self, pairs):
        answered("continuation_logprobs", pairs[0], "not log-probabilities")
        return [[-1.0] for _ in pairs]


def test_a_plugins_word_during_its_call_is_not_stored_only_its_checked_result(tmp_path):
    from vericite.guard import guard_calls
    from vericite.registry import REGISTRIES

    plugin = guard_calls(Garbage(), REGISTRIES["backends"].guarded, "backend 'garbage'", kind="backend")
    cache = CallCache(tmp_path / "calls.sqlite")
    assert CachedBackend(plugin, cache).continuation_logprobs(PAIRS[:2]) == [[-1.0], [-1.0]]
    assert CachedBackend(Garbage(), cache).continuation_logprobs(PAIRS[:2]) == [[-1.0], [-1.0]]  # read back: checked
    cache.close()
