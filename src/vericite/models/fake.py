"""A deterministic fake language model for unit tests, registered as backend ``fake``.

Replies come from a callable ``(messages, params) -> str``, or from a dict of canned replies keyed by a
substring of the last user message (first key that matches, in insertion order), else a default that echoes
the question. Tokens are whitespace-separated words. Log-probabilities are derived from a hash of the text, so
they are the same in every process and on every machine. Every call is counted.
"""

from __future__ import annotations

import hashlib
import threading
from typing import Any, Callable, Mapping, Sequence

from ..progress import answered
from ..types import Completion, GenParams, Message, ModelIdentity, Usage

Reply = Callable[[Sequence[Message], GenParams], str]

DEFAULT_PREFIX = "fake answer to: "


def _unit(*parts: str) -> float:
    """A stable number in [0, 1) from text (hash-based; Python's hash() is salted per process)."""
    h = hashlib.sha256("\x1f".join(parts).encode("utf-8")).digest()
    return int.from_bytes(h[:8], "big") / 2**64


def last_user_message(messages: Sequence[Message]) -> str:
    for m in reversed(messages):
        if m.get("role") == "user":
            return str(m.get("content", ""))
    return str(messages[-1].get("content", "")) if messages else ""


class FakeBackend:
    """``FakeBackend(name="fake", replies=None, default=None)``.

    ``replies``: a callable ``(messages, params) -> str`` or a mapping ``substring -> reply``.
    ``default``: the reply when nothing matches (default: ``"fake answer to: <last user message>"``).
    ``calls`` counts calls per method; ``prompts`` keeps every prompt given to ``generate`` or
    ``next_token_logprobs``, in order.
    """

    def __init__(
        self,
        name: str = "fake",
        *,
        replies: Reply | Mapping[str, str] | None = None,
        default: str | None = None,
        **_ignored: object,
    ) -> None:
        self.name = name if name.startswith("fake") else f"fake:{name}"
        self.replies = replies
        self.default = default
        self.calls: dict[str, int] = {"generate": 0, "logprobs": 0, "next_token_logprobs": 0, "continuation_logprobs": 0, "continuation_token_spans": 0}
        self.prompts: list[list[dict[str, str]]] = []
        self._lock = threading.Lock()

    # ------------------------------------------------------------------ Protocol

    def identity(self) -> ModelIdentity:
        return ModelIdentity(name=self.name, backend="fake", model=self.name, sha256=None)

    @property
    def n_calls(self) -> int:
        return sum(self.calls.values())

    def reply_for(self, messages: Sequence[Message], params: GenParams | None = None) -> str:
        params = params or GenParams()
        if callable(self.replies):
            return str(self.replies(messages, params))
        question = last_user_message(messages)
        if self.replies:
            for key, reply in self.replies.items():
                if key in question:
                    return reply
        if self.default is not None:
            return self.default
        return DEFAULT_PREFIX + " ".join(question.split()[:40])

    def generate(self, prompts: Sequence[Sequence[Message]], params: GenParams) -> list[Completion]:
        out = []
        for messages in prompts:
            with self._lock:
                self.calls["generate"] += 1
                self.prompts.append([dict(m) for m in messages])
            text = self.reply_for(messages, params)
            finish = "stop"
            for s in params.stop:
                if s and s in text:
                    text = text[: text.index(s)]
            words = text.split()
            if len(words) > params.max_tokens:
                words = words[: params.max_tokens]
                text = " ".join(words)
                finish = "length"
            top = None
            if params.top_logprobs > 0:
                top = [self._alternatives(w, i, params.top_logprobs) for i, w in enumerate(words)]
            prompt_tokens = sum(len(str(m.get("content", "")).split()) for m in messages)
            out.append(
                Completion(
                    text=text,
                    prompt_tokens=prompt_tokens,
                    completion_tokens=len(words),
                    top_logprobs=top,
                    finish_reason=finish,
                )
            )
        return out

    def logprobs(self, texts: Sequence[str]) -> list[list[float]]:
        with self._lock:
            self.calls["logprobs"] += 1
        out = []
        for text in texts:
            words = text.split()
            # each token after the first: in [-6, -0.05), depending on the token and its predecessor
            out.append([-0.05 - 5.95 * _unit(words[i - 1], w) for i, w in enumerate(words) if i > 0])
            answered("logprobs", text, out[-1])  # one by one, as llama.cpp's scorer says them (progress.answered)
        return out

    def continuation_logprobs(self, pairs: Sequence[tuple[str, str]]) -> list[list[float]]:
        """One log-prob per word of each continuation, from the same hash as :meth:`logprobs`: for a non-empty
        prefix, ``continuation_logprobs([(p, c)])[0] == logprobs([p + " " + c])[0][-len(c.split()):]``. A
        continuation's first word after an empty prefix is scored against "" (a model has its BOS token)."""
        with self._lock:
            self.calls["continuation_logprobs"] += 1
        out = []
        for prefix, continuation in pairs:
            before = prefix.split()[-1:] or [""]
            words = continuation.split()
            out.append([-0.05 - 5.95 * _unit(prev, w) for prev, w in zip(before + words, words)])
            answered("continuation_logprobs", (prefix, continuation), out[-1])  # as llama.cpp's scorer (progress.answered)
        return out

    def continuation_token_spans(self, pairs: Sequence[tuple[str, str]]) -> list[list[tuple[int, int, float]]]:
        """The log-probs of :meth:`continuation_logprobs`, each with its word's character span in the
        continuation (a token is a whitespace-separated word)."""
        import re

        with self._lock:
            self.calls["continuation_token_spans"] += 1
        out = []
        for prefix, continuation in pairs:
            before = prefix.split()[-1:] or [""]
            spans = [(m.start(), m.end(), m.group()) for m in re.finditer(r"\S+", continuation)]
            words = [w for _, _, w in spans]
            out.append([(s, e, -0.05 - 5.95 * _unit(prev, w)) for (s, e, w), prev in zip(spans, before + words)])
            answered("continuation_token_spans", (prefix, continuation), out[-1])
        return out

    def tokenize(self, text: str) -> list[int]:
        """Whitespace words as stable ids (hash-based)."""
        return [int(_unit(w) * 2**31) for w in text.split()]

    def next_token_logprobs(
        self, prompts: Sequence[Sequence[Message]], candidates: Sequence[str]
    ) -> list[dict[str, float]]:
        """The canned reply's first word is the likely next token (log-prob -0.05); other candidates get a
        hash-based log-prob below -1. Without canned replies every candidate is hash-based."""
        out = []
        for messages in prompts:
            with self._lock:
                self.calls["next_token_logprobs"] += 1
                self.prompts.append([dict(m) for m in messages])
            canned = self.replies is not None or self.default is not None
            first = self.reply_for(messages).split()[:1] if canned else []
            question = last_user_message(messages)
            scores = {}
            for c in candidates:
                if first and first[0].lower().strip(".,!:;") == c.strip().lower():
                    scores[c] = -0.05
                else:
                    scores[c] = -1.0 - 4.0 * _unit(question, c)
            out.append(scores)
        return out

    def next_token_logprobs_usage(
        self, prompts: Sequence[Sequence[Message]], candidates: Sequence[str]
    ) -> list[tuple[dict[str, float], Usage]]:
        """:meth:`next_token_logprobs` (a subclass's too) with each prompt's usage, counted as ``generate``
        counts: the words of the messages' contents as prompt tokens, and one completion token (the one whose
        distribution is read)."""
        scores = self.next_token_logprobs(prompts, candidates)
        return [(s, Usage(sum(len(str(m.get("content", "")).split()) for m in msgs), 1, 1)) for s, msgs in zip(scores, prompts)]

    # ------------------------------------------------------------------ helpers

    @staticmethod
    def _alternatives(word: str, position: int, k: int) -> dict[str, float]:
        alts = {word: -0.01 - 0.1 * _unit(word, str(position))}
        for j in range(1, k):
            alts[f"{word}~{j}"] = -2.0 - j - _unit(word, str(position), str(j))
        return alts

    def close(self) -> None:
        pass


def from_spec(arg: str, *, ctx: Any, **options: Any) -> FakeBackend:
    """Registry factory: ``fake`` or ``fake:<anything>`` (the argument only names it)."""
    return FakeBackend(f"fake:{arg}" if arg else "fake", **options)
