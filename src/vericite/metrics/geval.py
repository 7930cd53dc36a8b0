"""G-Eval text quality (KaLMA §4.1, Tables 14–17): coherence, consistency (against the given knowledge),
fluency and relevance, each 1–5, scored by an LLM.

Where the backend gives next-token log-probabilities, the score is G-Eval's expectation Σ p(i)·i over the
tokens "1"…"5" (probabilities renormalised over those five). Otherwise the first integer 1–5 of the reply is
used. A reply that gives neither is a failure: counted and shown, never a 3. A next-token row without a usable
digit (None, as a backend gives for a prompt without log-probabilities, or digits without a finite number) is
such a reply (``unparseable``), as the judges read one.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

from ..knowledge.render import flatten_knowledge
from ..types import GenParams, Triple
from .base import DEFAULT_RESAMPLES, DEFAULT_SEED, MetricResult, MetricSpec, Statistic, bootstrap_cis, point, ratio_of_sums

VERSION = "geval@1"  # name@N (files before the scheme wrote a bare "1": versions.py)
ASPECTS = ("coherence", "consistency", "fluency", "relevance")
METRIC_NAMES = tuple(f"geval_{a}" for a in ASPECTS)  # fixed result names
# each aspect's declaration (its results carry it: geval_results)
SPECS: dict[str, MetricSpec] = {
    f"geval_{a}": MetricSpec(
        f"geval_{a}", ("question", "answer") + (("knowledge",) if a == "consistency" else ()), True, VERSION,
        f"G-Eval {a}, 1-5, scored by an LLM", "Text quality (G-Eval, 1–5)", (1.0, 5.0),
    )
    for a in ASPECTS
}
DIGITS = ("1", "2", "3", "4", "5")

_PREAMBLE = (
    "You will be given one question and answer. Your task is to rate the answer on one metric. Please make sure "
    "you read and understand these instructions carefully. Please keep this document open while reviewing, and "
    "refer to it as needed.\n\nEvaluation Criteria:\n"
)
# The paper's criteria and steps (Tables 14-17).
_CRITERIA = {
    "coherence": (
        "Coherence (1-5) - the collective quality of all sentences. We align this dimension with the DUC quality "
        "question of structure and coherence whereby the answer should be well-structured and well-organized. The "
        "answer should not just be a heap of related information, but should build from sentence to sentence to a "
        "coherent body of information about a topic.",
        "1. Read the questions carefully and identify the main topic and key points.\n2. Read the answer and compare "
        "it to the question. Check if the answer covers the main topic and key points of the question, and if it "
        "presents them in a clear and logical order.",
    ),
    "consistency": (
        "Consistency (1-5) - the answer should be consistent with the given knowledge. The answer should also be "
        "self-consistent, without any contradiction to itself.",
        "1. Read the question and knowledge carefully.\n2. Read the answer and compare it to the knowledge. Check if "
        "the answer is consistent with the give knowledge.",
    ),
    "fluency": (
        "Fluency (1-5) - the answer should be written in fluent language. The answer should use appropriate "
        "vocabulary, grammar, and sentence structures that enable readers or listeners to comprehend the content "
        "effortlessly.",
        "1. Read the question carefully.\n2. Read the answer and check if the language in the answer is fluent.",
    ),
    "relevance": (
        "Relevance (1-5) - the answer should be relevant to the question. The answer should directly answers the "
        "question, without providing any irrelevant information.",
        "1. Read the question carefully.\n2. Read the answer and compare with the question to check if it fully "
        "answers the question and have no redundancies.",
    ),
}


def instruction(aspect: str) -> str:
    criteria, steps = _CRITERIA[aspect]
    return (
        f"{_PREAMBLE}{criteria}\n\nEvaluation Steps:\n{steps}\n3. Assign a score for {aspect} on a scale of 1 to 5, "
        "where 1 is the lowest and 5 is the highest based on the Evaluation Criteria."
    )


def messages(aspect: str, question: str, answer: str, knowledge: Sequence[Triple] = ()) -> list[dict[str, str]]:
    parts = [f"Question: {question}"]
    if aspect == "consistency":
        parts.append(f"Knowledge:\n{flatten_knowledge(knowledge)}")
    parts.append(f"Answer: {answer}")
    parts.append(f"Evaluation Form (scores ONLY):\n- {aspect.capitalize()} (1-5):")
    return [{"role": "system", "content": instruction(aspect)}, {"role": "user", "content": "\n\n".join(parts)}]


def geval_statistic(scores: Sequence[float | None]) -> Statistic:
    """One aspect's corpus statistic: the mean score of the answers that have one (a reply that could not be
    scored, None, is left out and counted by the caller, never read as a 3)."""
    ok = [s is not None for s in scores]
    return ratio_of_sums([s if s is not None else 0.0 for s in scores], ok)


@dataclass
class GEvalScore:
    aspect: str
    score: float | None
    raw: str
    status: str  # ok (expectation) | parsed (integer from text) | unparseable | failed
    probabilities: dict[str, float] | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"aspect": self.aspect, "score": self.score, "raw": self.raw, "status": self.status, "probabilities": self.probabilities}


def expectation(logprobs: Mapping[str, float] | None) -> tuple[float, dict[str, float]] | None:
    """Σ p(i)·i over the digits 1-5 found among the log-probs (keys compared stripped); None when there are none.
    A row that is no mapping (a backend's None for a prompt it has no log-probabilities for: a plugin may give
    one) has none, and so has a digit whose value is not a finite number: the reply is then read as the
    caller's design says (the next-token path: unparseable; the text path: the first digit of the reply)."""
    if not isinstance(logprobs, Mapping):
        return None
    best: dict[str, float] = {}
    for tok, lp in logprobs.items():
        d = tok.strip() if isinstance(tok, str) else None
        if d in DIGITS and isinstance(lp, (int, float)) and not isinstance(lp, bool) and math.isfinite(lp):
            best[d] = max(best.get(d, -math.inf), float(lp))
    if not best:
        return None
    m = max(best.values())
    weights = {d: math.exp(lp - m) for d, lp in best.items()}
    z = sum(weights.values())
    probs = {d: w / z for d, w in sorted(weights.items())}
    return sum(int(d) * p for d, p in probs.items()), probs


#: prompts per backend call (progress moves by this many)
CHUNK = 8

_FIRST_DIGIT = re.compile(r"(?<!\d)([1-5])(?!\d)")


class GEval:
    """Scores answers on the four aspects with one LLM backend."""

    def __init__(self, backend: Any, aspects: Sequence[str] = ASPECTS) -> None:
        unknown = [a for a in aspects if a not in ASPECTS]
        if unknown:
            raise ValueError(f"unknown G-Eval aspect(s): {', '.join(unknown)}")
        self.backend = backend
        self.aspects = tuple(aspects)
        self.id = VERSION

    def score(
        self, items: Sequence[tuple[str, str, Sequence[Triple]]], advance: Callable[[int], None] | None = None
    ) -> list[dict[str, GEvalScore]]:
        """items: (question, answer with citations removed, knowledge). One dict aspect -> score per item.
        The backend gets the prompts of one aspect in calls of :data:`CHUNK`; ``advance(n)`` is called after
        each with the number of prompts scored (len(items) x len(aspects) in all)."""
        out: list[dict[str, GEvalScore]] = [{} for _ in items]
        for aspect in self.aspects:
            prompts = [messages(aspect, q, a, k) for q, a, k in items]
            for start in range(0, len(prompts), CHUNK):
                part = prompts[start : start + CHUNK]
                for i, s in enumerate(self._score_prompts(aspect, part), start):
                    out[i][aspect] = s
                if advance is not None:
                    advance(len(part))
        return out

    def _score_prompts(self, aspect: str, prompts: list[list[dict[str, str]]]) -> list[GEvalScore]:
        from ..protocols import NextTokenScorer

        if isinstance(self.backend, NextTokenScorer):
            results = []
            for lp in self.backend.next_token_logprobs(prompts, list(DIGITS)):
                e = expectation(lp)
                if e is None:
                    results.append(GEvalScore(aspect, None, repr(lp), "unparseable"))
                else:
                    results.append(GEvalScore(aspect, round(e[0], 6), repr(lp), "ok", e[1]))
            return results
        completions = self.backend.generate(prompts, GenParams(max_tokens=3, temperature=0.0, top_logprobs=20))
        results = []
        for c in completions:
            e = expectation(c.top_logprobs[0]) if c.top_logprobs else None
            if e is not None:
                results.append(GEvalScore(aspect, round(e[0], 6), c.text, "ok", e[1]))
                continue
            m = _FIRST_DIGIT.search(c.text)
            if m:
                results.append(GEvalScore(aspect, float(m.group(1)), c.text, "parsed"))
            else:
                results.append(GEvalScore(aspect, None, c.text, "unparseable"))
        return results


def geval_results(
    inputs: Sequence[tuple[str, str, Sequence[Triple]]],
    backend: Any,
    *,
    aspects: Sequence[str] = ASPECTS,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
    advance: Callable[[int], None] | None = None,
) -> tuple[dict[str, MetricResult], list[dict[str, Any]]]:
    """G-Eval of a corpus: one result per aspect (``geval_<aspect>``: the mean score of the answers that got one,
    n = those answers, a bootstrap CI over answers; the replies that could not be scored are counted in
    ``details``), and per answer its scores (``{aspect: GEvalScore.to_dict()}``). ``inputs``: (question, answer
    with its citations removed, knowledge) per answer; ``advance`` as in :meth:`GEval.score`."""
    scorer = GEval(backend, aspects)
    scored = scorer.score(inputs, advance)
    judge = f"{scorer.id}:{backend.identity().name}"
    results: dict[str, MetricResult] = {}
    for aspect in scorer.aspects:
        name, spec = f"geval_{aspect}", SPECS[f"geval_{aspect}"]
        vals = [s[aspect].score for s in scored]
        n = sum(v is not None for v in vals)
        stat = geval_statistic(vals)
        lo, hi = bootstrap_cis({name: stat}, len(vals), resamples=resamples, seed=seed)[name]
        value = point(stat, len(vals)) if vals else None
        reason = None if value is not None else ("no reply could be scored" if vals else "no answers")
        results[name] = MetricResult(name, value, n, lo, hi, reason, spec.version, spec.higher_is_better, resamples if vals else 0, seed,
                                     {"unparseable": len(vals) - n, "scale": "1-5", "judge": judge}, spec)  # fmt: skip
    return results, [{k: v.to_dict() for k, v in s.items()} for s in scored]
