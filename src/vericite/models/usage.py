"""Usage metering: what the model calls made through a backend cost, counted call by call.

``MeteredBackend(backend, meter)`` wraps any backend and adds a :class:`~vericite.types.Usage` to ``meter`` for
every call it passes on, so a method that makes many calls per sample (VTG's generator, verifier and
simplifier) has each one counted without doing anything itself. The run loop (``vericite.runs.loop``) gives
every backend of a method one meter and records, per sample, what the meter counted while the sample was
answered.

What counts, per prompt, text or pair of a batch (one *call* each):

- ``generate``: the prompt and completion tokens the backend reports on each ``Completion``;
- ``logprobs``: the tokens of the text, read as prompt tokens (the scored ones plus the first);
- ``continuation_logprobs``: the continuation's tokens (the ones scored), as prompt tokens;
- ``continuation_token_spans``: the same as ``continuation_logprobs``;
- ``next_token_logprobs``: the usage the backend reports for each prompt when it is a ``NextTokenUsage``
  (llama.cpp, OpenAI-compatible servers, the fake; the call cache keeps it), else, and for a cache entry
  written before usage was stored, the call as one of unknown tokens (``Usage.uncounted_calls``), never as zero
  tokens.

Calls answered by the call cache count like fresh ones, with the tokens the model reported when it first
answered them: a run's usage is what its answers cost to produce, whether this process or an earlier one paid
for them (a generation record's ``cached`` says which).

The wrapper has exactly the capabilities (``vericite.protocols``) of the backend it wraps, like
``CachedBackend``: ``MeteredBackend(b)`` is a ``NextTokenScorer`` only when ``b`` is one, and so on for
``NextTokenUsage``, ``ContinuationScorer``, ``Tokenizer``, ``CacheKeyed`` and ``Closeable``.
"""

from __future__ import annotations

import contextlib
import threading
from typing import Any, Iterator, Sequence

from ..protocols import CacheKeyed, Closeable, ContinuationScorer, NextTokenScorer, NextTokenUsage, Tokenizer, TokenSpanScorer
from ..types import Completion, GenParams, Message, Usage
from .wrapping import CapabilityWrapper

__all__ = ["MeteredBackend", "UsageMeter", "metered", "metering"]


class UsageMeter:
    """A running total of model usage, safe to add to from several threads: ``usage`` is the total so far, and
    ``since(before)`` what was added after the total was ``before`` (a sample's share)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.usage = Usage()

    def add(self, usage: Usage) -> None:
        with self._lock:
            self.usage = self.usage + usage

    def since(self, before: Usage) -> Usage:
        """What was counted after the total was ``before``."""
        return self.usage - before


class MeteredBackend(CapabilityWrapper):
    """Wraps a backend: every call goes to it unchanged and its usage is added to ``meter`` (module docstring).
    Other attributes of the wrapped backend (``stats``, ``cache``, ...) are passed through."""

    own_attributes = frozenset({"meter"})

    def __init__(self, backend: Any, meter: UsageMeter) -> None:
        self.backend = backend
        self.meter = meter

    def generate(self, prompts: Sequence[Sequence[Message]], params: GenParams) -> list[Completion]:
        out = self.backend.generate(prompts, params)
        self.meter.add(sum((Usage.of(c) for c in out), Usage()))
        return out

    def logprobs(self, texts: Sequence[str]) -> list[list[float]]:
        out = self.backend.logprobs(texts)
        self.meter.add(Usage(sum(len(lp) + 1 for t, lp in zip(texts, out) if t), 0, len(out)))
        return out

    def __repr__(self) -> str:
        return f"MeteredBackend({self.backend!r})"


class _NextToken(MeteredBackend):
    def next_token_logprobs(self, prompts: Sequence[Sequence[Message]], candidates: Sequence[str]) -> list[dict[str, float]]:
        if isinstance(self.backend, NextTokenUsage):
            return [scores for scores, _ in self.next_token_logprobs_usage(prompts, candidates)]  # type: ignore[attr-defined]
        out = self.backend.next_token_logprobs(prompts, candidates)
        self.meter.add(Usage.unknown(len(out)))  # a scorer that does not say what a call cost
        return out


class _NextTokenCounted(MeteredBackend):
    def next_token_logprobs_usage(
        self, prompts: Sequence[Sequence[Message]], candidates: Sequence[str]
    ) -> list[tuple[dict[str, float], Usage | None]]:
        out = self.backend.next_token_logprobs_usage(prompts, candidates)
        self.meter.add(sum((u if u is not None else Usage.unknown() for _, u in out), Usage()))
        return out


class _Continuation(MeteredBackend):
    def continuation_logprobs(self, pairs: Sequence[tuple[str, str]]) -> list[list[float]]:
        out = self.backend.continuation_logprobs(pairs)
        self.meter.add(Usage(sum(len(lp) for lp in out), 0, len(out)))
        return out


class _TokenSpans(MeteredBackend):
    def continuation_token_spans(self, pairs: Sequence[tuple[str, str]]) -> list[list[tuple[int, int, float]]]:
        out = self.backend.continuation_token_spans(pairs)
        self.meter.add(Usage(sum(len(row) for row in out), 0, len(out)))
        return out


class _Tokenizing(MeteredBackend):
    def tokenize(self, text: str) -> list[int]:
        return self.backend.tokenize(text)  # not a model call: nothing to count


class _Keyed(MeteredBackend):
    def cache_key_extra(self) -> dict[str, Any]:
        return self.backend.cache_key_extra()


class _Closing(MeteredBackend):
    def close(self) -> None:
        self.backend.close()


MeteredBackend.capabilities = (
    (NextTokenScorer, _NextToken), (ContinuationScorer, _Continuation), (Tokenizer, _Tokenizing), (CacheKeyed, _Keyed), (Closeable, _Closing),
    (TokenSpanScorer, _TokenSpans), (NextTokenUsage, _NextTokenCounted),
)


def metered(backend: Any, meter: UsageMeter | None) -> Any:
    """``backend`` behind ``meter`` (as is when there is no meter, or when it already reports to this one)."""
    if meter is None or (isinstance(backend, MeteredBackend) and backend.meter is meter):
        return backend
    return MeteredBackend(backend, meter)


@contextlib.contextmanager
def metering(user: Any, meter: UsageMeter) -> Iterator[bool]:
    """While inside, the model calls of ``user`` (a judge, or anything holding its model as ``backend``) are
    counted by ``meter`` too (on top of any meter its backend already reports to): a generation method's judge
    counted as its own component. Yields whether there is a model to count (a judge without ``backend``, such as
    the triple or an NLI judge, makes no model calls). The attribute is restored on the way out."""
    before = getattr(user, "backend", None)
    if before is None:
        yield False
        return
    user.backend = metered(before, meter)
    try:
        yield True
    finally:
        user.backend = before
