"""How CONNER's factuality and validity talk to the three-way judge: the order of factuality's pairs (grouped by
passage, so a backend that reuses the prompt's prefix evaluates each passage once) and reading a judgement's
three probabilities (or a failed one's reason). Split out of conner.py, which had grown past what a reader holds."""

from __future__ import annotations

import json
import numbers
from typing import Any, Sequence

from ..types import JudgePair
from .conner_specs import LABELS


def passage_major(pairs: Sequence[JudgePair]) -> list[JudgePair]:
    """``pairs`` grouped by their evidence, the groups in the order their evidence first appears, each group's pairs
    in their own order. Factuality's pairs come sentence by sentence (each sentence's top passages), and one passage
    is often among the top passages of several sentences: grouped, the judge gets that passage's pairs one after
    another (``judge_corpus`` cuts its calls only where the evidence changes), so a backend that reuses the prompt's
    prefix (llama.cpp; the judge's prompt puts the evidence before the claim) evaluates the passage once rather than
    once per call that holds it. Every pair is judged as before; only the order of the calls changes."""
    groups: dict[str, list[JudgePair]] = {}
    for p in pairs:
        groups.setdefault(p.evidence, []).append(p)
    return [p for group in groups.values() for p in group]


def is_probability(v: Any) -> bool:
    """Whether ``v`` is a real number in [0, 1] (not a bool, not NaN)."""
    return not isinstance(v, bool) and isinstance(v, numbers.Real) and 0.0 <= v <= 1.0  # NaN fails too


def three_way(j: Any) -> dict[str, float] | None:
    """A judgement's probabilities of :data:`LABELS` (a class it does not give: 0), or None when it cannot be read:
    its status not ok, no ``supports`` score, or a score that is not a number in [0, 1] (a plugin judge's logits
    were reported as factuality 7.0)."""
    sc = j.class_scores()
    if j.status != "ok" or "supports" not in sc:
        return None
    out = {k: sc.get(k, 0.0) for k in LABELS}
    return {k: float(v) for k, v in out.items()} if all(is_probability(v) for v in out.values()) else None


def unusable(j: Any, counts: Any) -> str | None:
    """A judgement that gave no probability, counted in ``counts`` as ``failed_judgements`` (the judge could not be
    asked) or ``unparseable_judgements``; returns :func:`failed_why`, the reason of a failed one."""
    counts["failed_judgements" if j.status == "failed" else "unparseable_judgements"] += 1
    return failed_why(j)


def failed_why(j: Any) -> str | None:
    """A failed judgement's reason (the judge could not be asked: its prompt too long for the model's context), from
    its ``raw`` ``{"error": ...}``; None for any other judgement."""
    if j.status != "failed":
        return None
    try:
        err = json.loads(j.raw or "{}").get("error")
    except (ValueError, AttributeError):
        err = None
    return f"judge failed: {err or j.raw or 'no reason given'}"[:300]
