"""The llama.cpp scorer's prefix reuse (``reuse_scorer_prefix``): a text keeps the prefix it shares with what the
scorer holds, the texts of a call are scored in the order of their tokens, and the log-probabilities are those of
a fresh evaluation of each text, in the order asked. A stand-in Llama (no llama_cpp import) computes each
position's logits from the tokens its context holds up to it at evaluation time, so a kept prefix that was not
the text's own would give other numbers."""

from __future__ import annotations

import re
import threading
import zlib

import numpy as np

from vericite.models.llamacpp import LlamaCppBackend, prefix_order, shared_prefix

VOCAB = 50


class StandInLlama:
    """What ``_score_tokens`` and the continuation methods use of a ``logits_all`` Llama."""

    def __init__(self, n_ctx: int) -> None:
        self.input_ids = np.zeros(n_ctx, dtype=np.intc)
        self.scores = np.zeros((n_ctx, VOCAB), dtype=np.single)
        self.n_tokens = 0
        self.evaluated_tokens = 0
        self.pieces: dict[bytes, int] = {}
        self.texts: dict[int, bytes] = {}

    def tokenize(self, text: bytes, add_bos: bool = True, special: bool = False) -> list[int]:
        out = [1] if add_bos else []
        for piece in re.findall(rb"\s*\S+", text):
            if piece not in self.pieces:
                self.pieces[piece] = len(self.pieces) + 2
                self.texts[self.pieces[piece]] = piece
            out.append(self.pieces[piece])
        return out

    def detokenize(self, tokens: list[int]) -> bytes:
        return b"".join(self.texts.get(t, b"") for t in tokens)

    def reset(self) -> None:
        self.n_tokens = 0

    def eval(self, tokens: list[int]) -> None:
        for t in tokens:
            p = self.n_tokens
            self.input_ids[p] = t
            seed = zlib.crc32(self.input_ids[: p + 1].tobytes())
            self.scores[p] = np.random.default_rng(seed).normal(size=VOCAB)
            self.n_tokens += 1
            self.evaluated_tokens += 1


def backend(reuse: bool, n_ctx: int = 16) -> LlamaCppBackend:
    b = object.__new__(LlamaCppBackend)
    b.lock, b._llm, b._scorer = threading.RLock(), None, StandInLlama(n_ctx)
    b.scorer_n_ctx, b.reuse_scorer_prefix = n_ctx, reuse
    return b


KNOWLEDGE = ["Rome is old. Rome has seven hills.", "Paris is big.", "Rome is old. Rome has seven gates and walls."]


def test_shared_prefix_and_prefix_order():
    assert shared_prefix(np.array([1, 5, 6, 7]), [1, 5, 9]) == 2 and shared_prefix(np.array([1, 5]), [1, 5, 9]) == 2
    assert shared_prefix(np.array([], dtype=int), [1]) == 0 and shared_prefix(np.array([1, 2, 3]), [1, 2]) == 2
    assert prefix_order([[1, 5, 9], [1, 2], [1, 5, 6, 7], [1, 5]]) == [1, 3, 2, 0]


def test_reused_prefixes_give_the_fresh_log_probs_in_the_order_asked_for_fewer_tokens():
    texts = [f"{k}\nQuestion: how many hills?\nAnswer:" for k in KNOWLEDGE] + KNOWLEDGE
    pairs = [(t, " seven") for t in texts] + [("", k) for k in KNOWLEDGE]
    fresh, reused = backend(False), backend(True)
    want = fresh.continuation_logprobs(pairs)
    got = reused.continuation_logprobs(pairs)
    assert got == want and all(got)
    assert reused._scorer.evaluated_tokens < fresh._scorer.evaluated_tokens
    assert reused.logprobs(texts) == fresh.logprobs(texts)
    assert reused.continuation_token_spans(pairs) == fresh.continuation_token_spans(pairs)


def test_each_text_is_evaluated_once_where_it_begins_another():
    b = backend(True, n_ctx=64)
    help_prompt = KNOWLEDGE[0] + "\nQuestion: how many hills?\nAnswer:"
    # another text between the two: the call's order puts the knowledge and its question together
    b.continuation_logprobs([("", KNOWLEDGE[0]), ("", KNOWLEDGE[1]), (help_prompt, " seven")])
    n_knowledge, n_other = len(b.tokenize(KNOWLEDGE[0])), len(b.tokenize(KNOWLEDGE[1]))
    n_help = len(b.tokenize(help_prompt)) + 1
    # the knowledge once, not twice (and every text after the first shares the BOS token)
    assert b._scorer.evaluated_tokens == n_help + n_other - 1 < n_knowledge + n_help + n_other - 2


def test_texts_longer_than_the_context_are_scored_in_windows_as_before():
    long = " ".join(f"w{k}" for k in range(40))
    texts = [long, long + " end", "short text"]
    assert backend(True, n_ctx=8).logprobs(texts) == backend(False, n_ctx=8).logprobs(texts)
