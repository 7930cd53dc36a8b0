"""The llama.cpp backend's scoring: log-probabilities of texts and of continuations after a prefix, on the scorer
context (``logits_all``), in windows of its context, keeping the prefix a window shares with what the scorer
already holds (``reuse_scorer_prefix``) and scoring a call's texts in the order of their tokens. Split out of
llamacpp.py (generation, next-token judgements, loading), which had grown past what a reader holds."""

from __future__ import annotations

from typing import Any, Iterator, Sequence

import numpy as np

from ..progress import answered


def shared_prefix(held: Any, tokens: Sequence[int]) -> int:
    """How many tokens at the start of ``tokens`` are those ``held`` (a context's evaluated tokens) begins with."""
    n = min(len(held), len(tokens))
    if n == 0:
        return 0
    differ = np.flatnonzero(np.asarray(held[:n]) != np.asarray(tokens[:n]))
    return int(differ[0]) if differ.size else n


def prefix_order(seqs: Sequence[Sequence[int]]) -> list[int]:
    """The indices of ``seqs`` in the order of their tokens (lexicographic): the order in which one context that
    keeps the prefix it shares with the next sequence evaluates the fewest tokens (each sequence then follows the
    one it shares the longest beginning with)."""
    return sorted(range(len(seqs)), key=lambda i: list(seqs[i]))


def log_softmax(logits: np.ndarray) -> np.ndarray:
    """Log-probabilities of each row of ``logits`` (float64)."""
    x = logits.astype(np.float64, copy=False)
    m = x.max(axis=-1, keepdims=True)
    return x - m - np.log(np.exp(x - m).sum(axis=-1, keepdims=True))


class ScoringMixin:
    """The scoring methods of :class:`~vericite.models.llamacpp.LlamaCppBackend`; they use its ``lock``,
    ``tokenize``, ``_llm``, ``scorer``, ``scorer_n_ctx`` and ``reuse_scorer_prefix``."""

    lock: Any
    _llm: Any
    scorer: Any
    scorer_n_ctx: int
    reuse_scorer_prefix: bool
    tokenize: Any  # (text) -> token ids, with BOS

    def logprobs(self, texts: Sequence[str]) -> list[list[float]]:
        """For each text, the log-probability of each token after the first, ``len == len(tokenize(text)) - 1``.
        Texts longer than the scorer's context are scored in overlapping windows (every token keeps at least
        half a context of history)."""
        with self.lock:
            seqs = [self.tokenize(text) for text in texts]
            out: list[list[float]] = [[] for _ in seqs]
            for i in prefix_order(seqs):
                out[i] = self._score_tokens(seqs[i], 1)
                answered("logprobs", texts[i], out[i])  # kept by the call cache now; a bar moves (progress.answered)
            return out

    def continuation_logprobs(self, pairs: Sequence[tuple[str, str]]) -> list[list[float]]:
        """For each ``(prefix, continuation)``, the log-probability of every token of the continuation given the
        prefix (tokenised with BOS) and the continuation's earlier tokens (tokenised apart, without BOS, so the
        boundary is exact). Their sum is log P(continuation | prefix)."""
        out: list[list[float]] = [[] for _ in pairs]
        with self.lock:
            for i, _, lps in self._continuations(pairs):
                out[i] = lps
                answered("continuation_logprobs", pairs[i], lps)  # kept by the call cache now; a bar moves
        return out

    def continuation_token_spans(self, pairs: Sequence[tuple[str, str]]) -> list[list[tuple[int, int, float]]]:
        """:meth:`continuation_logprobs` with each token's character span in the continuation: one evaluation
        per text. Spans come from the tokens' own bytes (a token may end inside a UTF-8 character: its span
        then ends where the character ends); if the tokens do not spell the continuation byte for byte, the
        spans are clamped to its length. A model without BOS given an empty prefix cannot score the first token
        (as in ``continuation_logprobs``): the spans then start at the second."""
        out: list[list[tuple[int, int, float]]] = [[] for _ in pairs]
        with self.lock:
            llm = self._llm if self._llm is not None else self.scorer
            for i, tail, lps in self._continuations(pairs):
                raw = pairs[i][1].encode("utf-8")
                ends, pos = [], 0
                for t in tail:
                    pos += len(llm.detokenize([int(t)]))
                    ends.append(min(pos, len(raw)))
                char_at = lambda b: len(raw[:b].decode("utf-8", errors="ignore"))  # noqa: E731
                spans, start = [], 0
                for b in ends:
                    end = max(start, char_at(b))
                    spans.append((start, end))
                    start = end
                # without a BOS token and an empty prefix the first token has nothing to be scored after: the
                # log-probs are those of the last tokens
                spans = spans[len(spans) - len(lps) :]
                out[i] = [(s, e, float(lp)) for (s, e), lp in zip(spans, lps)]
                answered("continuation_token_spans", pairs[i], out[i])
        return out

    def _continuations(self, pairs: Sequence[tuple[str, str]]) -> Iterator[tuple[int, list[int], list[float]]]:
        """For each ``(prefix, continuation)``, in the order of their tokens (:func:`prefix_order`): its index, the
        continuation's tokens (tokenised apart, without BOS) and the log-probability of each given the prefix
        (tokenised with BOS) and the tokens before it. Called with the lock held."""
        llm = self._llm if self._llm is not None else self.scorer
        heads = [self.tokenize(prefix) for prefix, _ in pairs]
        tails = [list(llm.tokenize(continuation.encode("utf-8"), add_bos=False, special=False)) for _, continuation in pairs]
        for i in prefix_order([h + t for h, t in zip(heads, tails)]):
            yield i, tails[i], (self._score_tokens(heads[i] + tails[i], max(1, len(heads[i]))) if tails[i] else [])

    def _score_tokens(self, tokens: list[int], start: int) -> list[float]:
        """log P(tokens[i] | tokens[:i]) for i >= ``start``, in windows of the scorer's context."""
        scorer = self.scorer
        n_ctx = self.scorer_n_ctx
        n = len(tokens)
        lps: list[float] = []
        pos = start  # next token to score
        while pos < n:
            # the first window reaches back to the start when it can; later ones keep half a context of history
            end = min(n, max(n_ctx, pos + n_ctx // 2))
            begin = max(0, end - n_ctx)
            window = tokens[begin:end]
            held = getattr(scorer, "input_ids", None)  # (a stand-in Llama of the tests may keep no tokens: no reuse)
            keep = shared_prefix(held[: scorer.n_tokens], window) if self.reuse_scorer_prefix and held is not None else 0
            if keep:  # the KV cache and the logits of those positions are the scorer's already
                scorer.n_tokens = keep  # (eval drops the KV cache after n_tokens before it evaluates)
            else:
                scorer.reset()
            if keep < len(window):
                scorer.eval(window[keep:])
            # scores[j] (relative to begin) holds the logits that predict token begin+j+1
            rows = log_softmax(np.asarray(scorer.scores[pos - 1 - begin : end - 1 - begin]))
            ids = np.asarray(tokens[pos:end])
            lps.extend(rows[np.arange(len(ids)), ids].tolist())
            pos = end
        return lps
