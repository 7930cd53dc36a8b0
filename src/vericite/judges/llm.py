"""The LLM judge: a prompted language model answers "Does the evidence support the claim?" with Yes or No.

The verdict is never parsed from free text. P(supported) is the softmax over two numbers, the log-probability
mass of "Yes" and of "No" as the model's next token, each summed over its spellings ("Yes", " Yes", "yes"...):

    P(yes) = exp(lp_yes) / (exp(lp_yes) + exp(lp_no)),   lp_yes = logsumexp over the Yes spellings

The log-probabilities come from ``backend.next_token_logprobs(prompts, candidates)`` when the backend is a
``NextTokenScorer`` (one forward pass over the prompt; no sampling), else from the first generated token's
``top_logprobs`` of ``generate(..., GenParams(max_tokens=1, top_logprobs=20))``. When neither a Yes nor a No
spelling is among them, the judgement is ``status="unparseable"`` with ``probability=None`` and the raw
numbers kept: never a default verdict. (On the ``top_logprobs`` path a spelling missing from the top 20 counts
as zero mass, so one missing side gives P = 0 or 1.)

Prompts are versioned (:data:`PROMPTS`) in vericite's one scheme, ``name@N`` (``judge-support@2``); the judge id
is ``llm:<model name>@<N>`` and the full prompt id is :attr:`LLMJudge.prompt_version`. The ids before that scheme,
``judge.support.vN``, are still accepted wherever a prompt id is taken, and read as ``judge-support@N``. The system message and the start of the user message
are the same for every pair, so a backend that reuses a shared prompt prefix evaluates them once; pairs that
share their evidence are sent one after another, so the evidence is evaluated once too.
"""

from __future__ import annotations

import json
import re
from typing import Any, Mapping, Sequence

from ..errors import VericiteError
from ..types import NOT_SUPPORTED, SUPPORTED, JudgePair, Judgement, Message
from .log_mass import label_probabilities
from .prompted import PromptedJudge, rounded

PROMPT_NAME = "judge-support"

#: versioned judge prompts (``judge-support@N``): the text is fixed once released; a change is a new version
PROMPTS: dict[str, dict[str, str]] = {
    "judge-support@1": {
        "system": (
            "You are a careful fact-checker. You are given a piece of evidence and a claim. "
            "Decide whether the evidence, on its own, supports the claim. Answer with one word: Yes or No."
        ),
        "user": "Evidence: {evidence}\n\nClaim: {claim}\n\nDoes the evidence support the claim? Answer Yes or No.",
    },
    # v2: the same words, the question moved before the evidence, so that only the claim (and the chat
    # markup after it) is new from one pair to the next when pairs share their evidence
    "judge-support@2": {
        "system": (
            "You are a careful fact-checker. You are given a piece of evidence and a claim. "
            "Decide whether the evidence, on its own, supports the claim. Answer with one word: Yes or No."
        ),
        "user": "Does the evidence support the claim? Answer Yes or No.\n\nEvidence: {evidence}\n\nClaim: {claim}",
    },
}
DEFAULT_PROMPT = "judge-support@2"

#: the spelling of judge prompt ids before the one version scheme (results files written then hold it)
_OLD_PROMPT_ID = re.compile(r"judge\.support\.v(\d+)")


def prompt_id(version: str) -> str:
    """A judge prompt id as written now: the old spelling ``judge.support.v2`` reads as ``judge-support@2``;
    anything else is returned stripped and unchanged (whether it is known is checked where it is used)."""
    v = str(version).strip()
    m = _OLD_PROMPT_ID.fullmatch(v)
    return f"{PROMPT_NAME}@{m.group(1)}" if m else v

#: spellings asked for on the next_token_logprobs path (each a single token in common vocabularies)
YES_CANDIDATES = ("Yes", " Yes", "yes", " yes")
NO_CANDIDATES = ("No", " No", "no", " no")



def build_messages(evidence: str, claim: str, prompt_version: str = DEFAULT_PROMPT) -> list[Message]:
    """The chat messages the judge sends for one pair (``prompt_version``: a prompt id, old spelling accepted)."""
    p = PROMPTS[prompt_id(prompt_version)]
    return [
        {"role": "system", "content": p["system"]},
        {"role": "user", "content": p["user"].format(evidence=evidence, claim=claim)},
    ]


def _answer_word(token: str) -> str | None:
    """'yes' / 'no' when the token is a spelling of that answer (case and surrounding space ignored)."""
    w = token.strip().lower()
    return w if w in ("yes", "no") else None


def yes_probability(logprobs: Mapping[str, float | None]) -> tuple[float | None, dict[str, float]]:
    """P(yes) from a token -> log-probability map, and the summed log-mass of each answer found.

    Tokens that spell neither answer are ignored; non-finite or missing values count as absent. The same
    number listed under two spellings (a backend that maps " Yes" and "Yes" to one token) is counted once.
    Returns (None, {}) when neither answer is present."""
    probs, mass = label_probabilities(logprobs, _answer_word, ("yes", "no"))
    return (None if probs is None else probs["yes"]), mass


def _prompt_number(version: str) -> str:
    """``judge-support@2`` -> ``2`` (the ``@<n>`` of the judge id)."""
    return prompt_id(version).rpartition("@")[2]


def prompt_version(number: int | str) -> str:
    """The judge prompt with this number (the ``@<n>`` of a judge id): ``2`` -> ``"judge-support@2"``; an
    unknown number is a one-line error listing the known ones."""
    version = f"{PROMPT_NAME}@{str(number).strip()}"
    if version not in PROMPTS:
        known = ", ".join(sorted((_prompt_number(v) for v in PROMPTS), key=lambda x: (len(x), x)))
        raise VericiteError(f"unknown judge prompt number {str(number)!r} (known: {known})")
    return version


class LLMJudge(PromptedJudge):
    """Judge support with a prompted language model (any :class:`~vericite.protocols.LLMBackend`).

    ``label`` is "supported" when P(yes) >= ``threshold``, else "not_supported"; ``raw`` keeps the answer
    log-masses and the candidate log-probabilities as JSON."""

    labels = ("supported", "not_supported")
    candidates = YES_CANDIDATES + NO_CANDIDATES

    def __init__(
        self,
        backend: Any,
        prompt_version: str = DEFAULT_PROMPT,
        *,
        batch_size: int = 8,
        threshold: float = 0.5,
    ) -> None:
        prompt_version = prompt_id(prompt_version)
        if prompt_version not in PROMPTS:
            known = ", ".join(sorted(PROMPTS))
            raise VericiteError(f"unknown judge prompt version {prompt_version!r} (known: {known})")
        super().__init__(backend, batch_size=batch_size)
        self.prompt_version = prompt_version
        self.threshold = threshold
        self.id = f"llm:{self.model_name}@{_prompt_number(prompt_version)}"

    def messages(self, pair: JudgePair) -> list[Message]:
        return build_messages(pair.evidence, pair.claim, self.prompt_version)

    def judge(self, pairs: Sequence[JudgePair]) -> list[Judgement]:
        results: list[Judgement | None] = [None] * len(pairs)
        for i, pair, lps, text in self.read(pairs):
            if lps is None:
                results[i] = self.failed(pair, text)
                continue
            p, mass = yes_probability(lps)
            raw: dict[str, Any] = {"answer_logmass": rounded(mass), "candidates": rounded(lps)}
            if text:
                raw["text"] = text
            results[i] = Judgement(
                judge=self.id,
                claim=pair.claim,
                evidence=pair.evidence,
                probability=p,
                label=None if p is None else (SUPPORTED if p >= self.threshold else NOT_SUPPORTED),
                raw=json.dumps(raw, ensure_ascii=False),
                status="ok" if p is not None else "unparseable",
            )
        return [j for j in results if j is not None]


def split_prompt_suffix(arg: str) -> tuple[str, str | None]:
    """``"qwen2.5-coder-1.5b@2"`` -> ("qwen2.5-coder-1.5b", "judge-support@2"): the number after "@" picks the
    judge prompt, so the id a results file shows (``llm:<model>@<n>``) can be passed back as a spec; no "@"
    -> the default prompt."""
    name, at, number = arg.rpartition("@")
    if not at:
        return arg, None
    if not name.strip():
        raise VericiteError(f"llm:{arg} names no model: want llm:<model name>@<prompt number>")
    return name.strip(), prompt_version(number)


def from_spec(arg: str, *, ctx: Any, **options: Any) -> LLMJudge:
    """Registry factory: ``llm:<model name>[@<prompt number>]``; the model is loaded the way ``ctx`` says
    (``vericite.models.model_loader``: threads, cache, server, key, time limits)."""
    if not arg:
        raise VericiteError("the llm judge needs a model: llm:<model name> (see `vericite models`)")
    name, version = split_prompt_suffix(arg)
    if version is not None:
        options = {**options, "prompt_version": version}
    from ..models import model_loader  # lazy: importing the judges loads no model code

    return LLMJudge(model_loader(ctx)(name), **options)
