"""Scoring texts with a causal language model: what CONNER's coherence, informativeness and helpfulness read.

Two ways to get the log-probabilities of a text's sentences:

- ``paragraph`` (default): one evaluation per text, ``TokenSpanScorer.continuation_token_spans``; each token is
  given to the sentence its last character falls in, so a sentence after the first is scored in the context of
  the sentences before it;
- ``sentence``: one scored continuation per sentence, each on its own (``ContinuationScorer``), as CONNER's
  released scripts score them.

All calls go through the backend, so the call cache (``models/cache.py``) answers repeated ones. ``progress``
(an ``Advance``, or any ``(n) -> None``) moves by one per text (per sentence in the ``sentence`` context) as the
backend says it scored them (``progress.items_of_call``); the calls are the same without it. Perplexities
are capped at :data:`PPL_CAP` (CONNER's code caps sentence perplexity at 200).
"""

from __future__ import annotations

import math
from typing import Any, Callable, Sequence

from ..errors import VericiteError
from ..progress import items_of_call
from ..protocols import ContinuationScorer, TokenSpanScorer

#: CONNER's cap on a sentence's perplexity
PPL_CAP = 200.0
SENTENCE_CONTEXTS = ("paragraph", "sentence")

Span = tuple[int, int]


def perplexity(logprobs: Sequence[float], cap: float | None = PPL_CAP) -> float | None:
    """exp(−mean log-prob), at most ``cap``; None for no tokens."""
    if not logprobs:
        return None
    mean = sum(logprobs) / len(logprobs)
    ppl = math.exp(-mean) if -mean < 700 else math.inf
    return min(ppl, cap) if cap is not None else ppl


def group_by_spans(token_spans: Sequence[tuple[int, int, float]], spans: Sequence[Span]) -> list[list[float]]:
    """The log-probs of the tokens inside each ``[start, end)`` span: a token belongs to the span its last
    character falls in (a token that starts on the space before a word goes with that word); tokens outside
    every span (whitespace between sentences) are left out."""
    out: list[list[float]] = [[] for _ in spans]
    order = sorted(range(len(spans)), key=lambda i: spans[i][0])
    k = 0
    for start, end, lp in token_spans:
        last = end - 1 if end > start else start
        while k < len(order) and spans[order[k]][1] <= last:
            k += 1
        if k < len(order) and spans[order[k]][0] <= last < spans[order[k]][1]:
            out[order[k]].append(lp)
    return out


def sentence_logprobs(
    backend: Any, texts: Sequence[str], sentences: Sequence[Sequence[Span]], *, context: str = "paragraph", progress: Callable[[int], None] | None = None
) -> list[list[list[float]]]:
    """For each text, the token log-probs of each of its sentences (``sentences[i]``: character spans in
    ``texts[i]``), in one backend call for the whole batch: ``paragraph`` evaluates each text once
    (``continuation_token_spans``); ``sentence`` each sentence alone (``continuation_logprobs``)."""
    if context not in SENTENCE_CONTEXTS:
        raise VericiteError(f"sentence context must be one of {', '.join(SENTENCE_CONTEXTS)}, not {context!r}")
    if context == "paragraph":
        if not isinstance(backend, TokenSpanScorer):
            raise VericiteError(f"model {_name(backend)} cannot give token positions (continuation_token_spans): use the sentence context")
        with items_of_call(progress, len(texts)):
            rows = backend.continuation_token_spans([("", t) for t in texts]) if texts else []
        return [group_by_spans(row, spans) for row, spans in zip(rows, sentences)]
    if not isinstance(backend, ContinuationScorer):
        raise VericiteError(f"model {_name(backend)} cannot score continuations (continuation_logprobs)")
    flat = [(i, t[s:e]) for i, (t, spans) in enumerate(zip(texts, sentences)) for s, e in spans]
    with items_of_call(progress, len(flat)):
        scored = backend.continuation_logprobs([("", s) for _, s in flat]) if flat else []
    out: list[list[list[float]]] = [[] for _ in texts]
    for (i, _), lps in zip(flat, scored):
        out[i].append(list(lps))
    return out


def sentence_logprobs_one_by_one(backend: Any, text: str, spans: Sequence[Span], *, context: str = "sentence") -> list[list[float]]:
    """The baseline of the benchmark: one backend call per sentence, the sentence alone (``sentence``) or after
    the text before it (``paragraph``: the log-probs that one evaluation of the text gives, one call each)."""
    if context not in SENTENCE_CONTEXTS:
        raise VericiteError(f"sentence context must be one of {', '.join(SENTENCE_CONTEXTS)}, not {context!r}")
    out = []
    for s, e in spans:
        if context == "sentence":
            out.append(list(backend.continuation_logprobs([("", text[s:e])])[0]))
            continue
        # in context, the whitespace before the sentence is tokenised with it, as in one evaluation of the text;
        # a token that is only that whitespace is left out as group_by_spans leaves it out (with token spans)
        prefix = text[:s].rstrip()
        tail = text[len(prefix) : e]
        if isinstance(backend, TokenSpanScorer):
            row = backend.continuation_token_spans([(prefix, tail)])[0]
            out.append(group_by_spans(row, [(s - len(prefix), e - len(prefix))])[0])
        else:
            out.append(list(backend.continuation_logprobs([(prefix, tail)])[0]))
    return out


def continuation_logprobs(backend: Any, pairs: Sequence[tuple[str, str]], *, progress: Callable[[int], None] | None = None) -> list[list[float]]:
    """``backend.continuation_logprobs`` with a one-line error for a model that cannot."""
    if not isinstance(backend, ContinuationScorer):
        raise VericiteError(f"model {_name(backend)} cannot score continuations (continuation_logprobs)")
    with items_of_call(progress, len(pairs)):
        return [list(r) for r in backend.continuation_logprobs(list(pairs))] if pairs else []


def _name(backend: Any) -> str:
    try:
        return str(backend.identity().name)
    except Exception:  # noqa: BLE001
        return type(backend).__name__
