"""What the judges that prompt a language model for one word share: ``llm:`` (yes/no), ``llm3:`` (three-way),
``llm4:`` (CAQA's four classes) and the judges built on them.

Each asks its model, per pair, for the next token after its own prompt and reads its labels from the
log-probabilities of that token's likeliest spellings (``log_mass.py``). :class:`PromptedJudge` holds the model,
checks the batch size, and reads a list of pairs in calls of ``batch_size`` prompts: from ``next_token_logprobs``
of the judge's candidate words when the backend is a ``NextTokenScorer`` (llama.cpp, the fake), else from the
``top_logprobs`` of a one-token generation (any OpenAI-compatible server or plugin), whose text is kept. A backend
that answers fewer prompts than it was given is one error naming it, never a judgement shifted to the wrong pair.
A prompt longer than the model's context (``PromptTooLongError``: a whole article judged as one "sentence") fails
alone: its call's other prompts are asked one at a time, and its pair is a failed judgement with the model's
message (:meth:`PromptedJudge.failed`), so an evaluation goes on.
"""

from __future__ import annotations

import json
import math
from typing import Any, Iterator, Mapping, Sequence

from ..errors import PromptTooLongError, VericiteError, checked_batch_size
from ..protocols import NextTokenScorer
from ..types import GenParams, Judgement, JudgePair, Message

#: how many of the likeliest first tokens a one-token generation is asked for (the fallback path)
TOP_LOGPROBS = 20


class PromptedJudge:
    """The model, the batch size and the reading of next tokens of a prompted judge (module docstring). A judge
    sets ``id``, ``candidates`` (the spellings of its label words asked of a ``NextTokenScorer``) and ``messages``."""

    id: str  # the judge's versioned id ("llm3:<model>@1"), set by each judge after this __init__
    candidates: Sequence[str] = ()

    def __init__(self, backend: Any, *, batch_size: int = 8) -> None:
        self.backend = backend
        self.batch_size = checked_batch_size(batch_size)
        ident = backend.identity()
        self.model_name = getattr(ident, "name", None) or str(ident)

    def messages(self, pair: JudgePair) -> list[Message]:
        raise NotImplementedError

    def next_token_maps(self, prompts: list[list[Message]]) -> list[tuple[dict[str, float], str]]:
        """Per prompt, in one backend call: a token -> log-probability map and the generated text ("" when read
        from ``next_token_logprobs``). The number of rows is the backend's: :meth:`read` checks it."""
        if isinstance(self.backend, NextTokenScorer):
            return [(dict(r or {}), "") for r in self.backend.next_token_logprobs(prompts, list(self.candidates))]
        done = self.backend.generate(prompts, GenParams(max_tokens=1, temperature=0.0, top_logprobs=TOP_LOGPROBS))
        return [(dict((c.top_logprobs or [{}])[0] or {}), c.text) for c in done]

    def read(self, pairs: Sequence[JudgePair], *, by_evidence: bool = True) -> Iterator[tuple[int, JudgePair, dict[str, float] | None, str]]:
        """``(index, pair, token map, text)`` for every pair, in calls of ``batch_size`` prompts. ``by_evidence``:
        pairs of the same evidence (one sentence, several citations) are asked one after another, so the backend's
        prefix reuse evaluates that evidence once; the index says where each belongs. A prompt too long for the
        model's context gives ``None`` for the map and the model's message as the text (module docstring)."""
        order = sorted(range(len(pairs)), key=lambda i: pairs[i].evidence) if by_evidence else list(range(len(pairs)))
        for start in range(0, len(order), self.batch_size):
            idx = order[start : start + self.batch_size]
            for i, (lps, text) in zip(idx, self._rows([self.messages(pairs[i]) for i in idx])):
                yield i, pairs[i], lps, text

    def _rows(self, prompts: list[list[Message]]) -> list[tuple[dict[str, float] | None, str]]:
        """:meth:`next_token_maps` of one call, checked; when a prompt is too long, each prompt on its own."""
        try:
            rows: list[tuple[dict[str, float] | None, str]] = list(self.next_token_maps(prompts))
        except PromptTooLongError as e:
            if len(prompts) == 1:
                return [(None, str(e))]
            return [row for p in prompts for row in self._rows([p])]
        if len(rows) != len(prompts):
            raise VericiteError(f"backend {self.model_name!r} answered {len(rows)} of {len(prompts)} judge prompts")
        return rows

    def failed(self, pair: JudgePair, why: str) -> Judgement:
        """The judgement of a pair the model could not be asked (its prompt too long for the context)."""
        return Judgement(self.id, pair.claim, pair.evidence, None, None, json.dumps({"error": why}, ensure_ascii=False), "failed")


def rounded(values: Mapping[str, Any]) -> dict[str, float | None]:
    """A token or label map as a judgement's ``raw`` records it: six decimals, a missing or non-finite value None."""
    return {k: (round(float(v), 6) if v is not None and math.isfinite(float(v)) else None) for k, v in values.items()}
