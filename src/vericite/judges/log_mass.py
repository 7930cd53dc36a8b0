"""Class probabilities from next-token log-probabilities, shared by the yes/no, three-way and four-class LLM judges.

A judge asks for one word; the backend returns the log-probabilities of the likeliest first tokens. Each token is
mapped to a label by the judge's own ``label_of`` (spellings, case, partial first tokens are the judge's rule); a
label's log-mass is the logsumexp over its spellings found, and the probabilities are the softmax over the labels'
masses, a label with no spelling present getting 0."""

from __future__ import annotations

import math
from typing import Callable, Mapping, Sequence

from ..stats import logsumexp, softmax


def label_log_mass(logprobs: Mapping[str, float | None], label_of: Callable[[str], str | None], labels: Sequence[str]) -> dict[str, float]:
    """Each label's summed log-mass over the tokens that spell it. Tokens of no label, missing and non-finite
    values are ignored; the same number listed under two spellings (a backend that maps " Yes" and "Yes" to one
    token) is counted once. Labels with no spelling present are absent from the result."""
    groups: dict[str, list[float]] = {k: [] for k in labels}
    for token, lp in logprobs.items():
        label = label_of(token)
        if label is None or lp is None:
            continue
        lp = float(lp)
        if not math.isfinite(lp) or lp in groups[label]:
            continue
        groups[label].append(lp)
    return {k: logsumexp(v) for k, v in groups.items() if v}


def label_probabilities(
    logprobs: Mapping[str, float | None], label_of: Callable[[str], str | None], labels: Sequence[str]
) -> tuple[dict[str, float] | None, dict[str, float]]:
    """(P(label) for every label, the masses found), or (None, {}) when no label is spelt among the tokens."""
    mass = label_log_mass(logprobs, label_of, labels)
    if not mass:
        return None, {}
    probs = dict(zip(mass, softmax(list(mass.values()))))
    return {k: probs.get(k, 0.0) for k in labels}, mass
