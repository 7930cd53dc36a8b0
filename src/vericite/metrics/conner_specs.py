"""What the ``conner`` family declares, apart from how it computes (``conner.py``): its version, its measures
and their specs, CONNER's prompts and prefixes, Q_know (§5), and reading an item's gold answer or response."""

from __future__ import annotations

import math
from typing import Any, Sequence

from ..errors import VericiteError
from .base import MetricSpec

VERSION = "conner@1"
FAMILY = "CONNER knowledge quality"
AGGREGATIONS = ("min", "mean", "max")
LABELS = ("supports", "refutes", "not_enough_info")
CLASS_OF = {"supports": "factual_consistent", "not_enough_info": "non_verified", "refutes": "factual_inconsistent"}

#: CONNER's informativeness prefix (Appendix): the knowledge is scored after it
INFO_PREFIX = "Generate a Wikipedia to answer the given question. {topic}Question: {query} Wikipedia: "
HELP_PREFIX = "{knowledge}\nQuestion: {query}\nAnswer:"
READER_PROMPT = "Answer the question in a few words, using the knowledge.\n\nKnowledge: {knowledge}\n\nQuestion: {query}"

#: Q_know's measures (§5), in γ's order
Q_KNOW = ("factuality", "relevance", "coherence_paragraph", "informativeness")


def q_know(scores: dict[str, Any], gamma: Sequence[float] = (0.25, 0.25, 0.25, 0.25)) -> float | None:
    """CONNER's Q_know = γᵀ[S_fact, S_rel, S_coh_para, S_info] (§5) of one item's scores; None when one is missing."""
    if len(gamma) != len(Q_KNOW):
        raise VericiteError(f"gamma needs {len(Q_KNOW)} weights ({', '.join(Q_KNOW)}), not {len(gamma)}")
    vals = [scores.get(k) for k in Q_KNOW]
    if any(v is None for v in vals):
        return None
    return round(sum(g * float(v) for g, v in zip(gamma, vals)), 6)  # type: ignore[arg-type]


MEASURES = ("factuality", "relevance", "coherence_sentence", "coherence_paragraph", "informativeness", "helpfulness", "validity", "answer_em")
SHARES = ("factual_consistent", "non_verified", "factual_inconsistent")
NAMES = (*MEASURES, *SHARES)


def _spec(name: str, inputs: tuple[str, ...], description: str, short: str = "") -> MetricSpec:
    return MetricSpec(name, inputs, True, "1", description, FAMILY, (0.0, 1.0), short)


SPECS: dict[str, MetricSpec] = {
    "factuality": _spec("factuality", ("answer", "passages", "judge"), "mean aggregated P(supports) of the knowledge's sentences against their best evidence (Eq. 1)"),
    "relevance": _spec("relevance", ("answer",), "cross-encoder probability that the knowledge is relevant to the query (Eq. 2)"),
    "coherence_sentence": _spec("coherence_sentence", ("answer",), "mean over sentences of 1/PPL under the LM, PPL capped at 200 (Eq. 3)", "coh. sentence"),
    "coherence_paragraph": _spec("coherence_paragraph", ("answer",), "the discourse model's probability that the paragraph is coherent (Eq. 4; coherence_model), by default the share of shuffled sentence orders the LM finds less likely than the paragraph's own (a deviation: no discourse model offline)", "coh. paragraph"),
    "informativeness": _spec("informativeness", ("answer", "meta"), "1 − exp(mean log P(knowledge token | CONNER's prefix, earlier tokens)) (Eq. 5)"),
    "helpfulness": _spec("helpfulness", ("answer", "answers"), "max(0, 1 − L(q, k, a) / mean L(q, unrelated k, a)), L the gold answer's cross-entropy (Eq. 6)"),
    "validity": _spec("validity", ("answer", "answers", "passages", "judge"), "P(supports) of the LM's answer read from the knowledge against the gold answer, or the best evidence (Eq. 7–8)"),
    "answer_em": _spec("answer_em", ("answer", "answers"), "the validity reader's answer read from the knowledge equals a gold short answer (SQuAD normalisation, best alias): §5's downstream accuracy", "EM"),
    "factual_consistent": _spec("factual_consistent", ("answer", "passages", "judge"), "share of items whose aggregated verdict is supports", "consistent"),
    "non_verified": _spec("non_verified", ("answer", "passages", "judge"), "share of items whose aggregated verdict is not enough info", "non-verified"),
    "factual_inconsistent": _spec("factual_inconsistent", ("answer", "passages", "judge"), "share of items whose aggregated verdict is refutes", "inconsistent"),
}
for _name in ("non_verified", "factual_inconsistent"):  # lower is better
    s = SPECS[_name]
    SPECS[_name] = MetricSpec(s.name, s.inputs, False, s.version, s.description, s.family, s.range, s.short_name)


def sigmoid(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-x)) if x > -700 else 0.0


def gold_answer(sample: Any) -> str | None:
    """The first gold short answer (``answers``), or None."""
    for group in sample.answers or []:
        for a in group or []:
            if str(a).strip():
                return str(a).strip()
    return None


def gold_response(sample: Any) -> str | None:
    """What helpfulness scores: the gold short answer, else an open answer's gold response (``meta.response``,
    WoW)."""
    r = (sample.meta or {}).get("response")
    return gold_answer(sample) or (str(r).strip() if r and str(r).strip() else None)
