"""The Protocols of language models and the small models beside them (pair scorers, embedders), with the
backend capabilities callers check with ``isinstance``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol, Sequence, runtime_checkable

if TYPE_CHECKING:
    from ..types import Completion, GenParams, Message, ModelIdentity, Usage

__all__ = [
    "LLMBackend",
    "NextTokenScorer",
    "NextTokenUsage",
    "ContinuationScorer",
    "TokenSpanScorer",
    "Tokenizer",
    "CacheKeyed",
    "Closeable",
    "BackendWrapper",
    "PairScorer",
    "Embedder",
    "QueryEmbedder",
]


# --------------------------------------------------------------------------- language models


@runtime_checkable
class LLMBackend(Protocol):
    """A language model. One batched ``generate`` and one ``logprobs``; everything else is built on these or
    is a capability below."""

    def identity(self) -> ModelIdentity: ...

    def generate(self, prompts: Sequence[Sequence[Message]], params: GenParams) -> list[Completion]:
        """Chat completions, one per prompt (a prompt is a list of chat messages)."""
        ...

    def logprobs(self, texts: Sequence[str]) -> list[list[float]]:
        """For each text, the log-probability of each of its tokens after the first (perplexity)."""
        ...


@runtime_checkable
class NextTokenScorer(Protocol):
    """Capability: the log-probability that the reply to a chat prompt starts with each candidate (an LLM
    judge's Yes/No, G-Eval's digits). Without it, callers read ``top_logprobs`` of a one-token ``generate``."""

    def next_token_logprobs(self, prompts: Sequence[Sequence[Message]], candidates: Sequence[str]) -> list[dict[str, float]]: ...


@runtime_checkable
class NextTokenUsage(Protocol):
    """Capability of a ``NextTokenScorer``: what each prompt of ``next_token_logprobs`` cost. For each prompt, the
    candidates' log-probabilities (as ``next_token_logprobs`` gives them) and its ``Usage`` (``calls`` 1; the
    prompt's tokens; the completion tokens the backend generated to read the distribution), or None when they are
    unknown (a cache entry written before usage was stored). A scorer without this capability reports no tokens:
    its callers count its calls as of unknown tokens, never as zero tokens."""

    def next_token_logprobs_usage(
        self, prompts: Sequence[Sequence[Message]], candidates: Sequence[str]
    ) -> list[tuple[dict[str, float], Usage | None]]: ...


@runtime_checkable
class ContinuationScorer(Protocol):
    """Capability: log P(continuation | prefix), token by token (CONNER's informativeness and helpfulness).

    ``pairs`` are ``(prefix, continuation)`` texts; for each, the log-probability of every token of the
    continuation given the prefix and the continuation's earlier tokens (their sum is log P(continuation |
    prefix)). The prefix and the continuation are tokenised apart, so the boundary is exact. Batched like every
    other backend call, so caches and servers can batch."""

    def continuation_logprobs(self, pairs: Sequence[tuple[str, str]]) -> list[list[float]]: ...


@runtime_checkable
class TokenSpanScorer(Protocol):
    """Capability: ``continuation_logprobs`` with where each token is. For each ``(prefix, continuation)``, one
    ``(start, end, logprob)`` per token of the continuation: its character span ``[start, end)`` in the
    continuation and log P(token | prefix, earlier tokens). One evaluation of a text gives every position, so a
    caller cuts the continuation into sentences afterwards (CONNER's sentence coherence) instead of scoring each
    sentence apart. A token's span may start on the space before a word; spans are in order and do not overlap."""

    def continuation_token_spans(self, pairs: Sequence[tuple[str, str]]) -> list[list[tuple[int, int, float]]]: ...


@runtime_checkable
class Tokenizer(Protocol):
    """Capability: the model's own tokens for a text."""

    def tokenize(self, text: str) -> list[int]: ...


@runtime_checkable
class CacheKeyed(Protocol):
    """Capability: settings beyond ``identity()`` that change outputs (the call cache adds them to its key)."""

    def cache_key_extra(self) -> dict[str, Any]: ...


@runtime_checkable
class Closeable(Protocol):
    """Capability: resources (weights, connections) to release."""

    def close(self) -> None: ...


@runtime_checkable
class BackendWrapper(Protocol):
    """Capability: a backend that wraps another and calls it (the call cache's ``CachedBackend``, a usage meter's
    ``MeteredBackend``); ``wrapped_backend()`` gives the one it wraps, so ``models.release`` finds the model under
    any wrappers (a process-shared local model's weights stay open)."""

    def wrapped_backend(self) -> Any: ...


@runtime_checkable
class PairScorer(Protocol):
    """Scores (query, text) pairs, higher = more related: a relevance cross-encoder (CONNER's relevance,
    reranking retrieved passages)."""

    id: str

    def score(self, pairs: Sequence[tuple[str, str]]) -> list[float]: ...


@runtime_checkable
class Embedder(Protocol):
    """Texts to vectors of one fixed length (dense retrieval of evidence)."""

    id: str

    def embed(self, texts: Sequence[str]) -> list[list[float]]: ...


@runtime_checkable
class QueryEmbedder(Protocol):
    """Capability of an Embedder: queries embedded in their own form (bge's query instruction, e5's
    ``"query: "``); ``embed`` is then for the passages searched."""

    def embed_queries(self, texts: Sequence[str]) -> list[list[float]]: ...
