"""Three-way figures of a judge-eval: for a three-way judge (``labels`` = supports, refutes, not_enough_info:
``llm3:``, ``nli3:``, ``fake-3way``) on data whose gold labels are three-way (VitaminC's supports / refutes /
not_enough_info, or NLI's entailment / contradiction / neutral), beside the binary figures of ``judges/meta.py``.

CONNER's factuality reads the refutes-vs-not_enough_info distinction (factual_inconsistent vs non_verified), which
the binary figures (supports vs the rest) cannot show. The judge's three-way prediction is its ``label`` (the
likeliest of its three scores, not P(supports) against the threshold); an unparseable or failed judgement is
"abstained", counted wrong (a miss of its gold class, a false positive of none), as in the binary figures.

Figures: ``balanced_accuracy`` (mean of the three per-class recalls; null unless all three gold classes occur),
``per_class_f1`` (precision / recall / F1 / support per class), ``confusion`` (gold -> said -> pairs), each with
a percentile bootstrap 95 % CI over pairs drawn exactly as the binary figures' (same resamples, same seed), so
both sets of intervals come from the same samples. Nothing here calls the judge: the figures are computed from
the judgements the binary figures use, so a folder judged before these figures existed gets them from the call
cache.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from ..stats import DEFAULT_RESAMPLES, DEFAULT_SEED, Statistic, bootstrap_cis, f1_of_counts, precision_recall_f1, ratio_of_sums
from ..types import Judgement

LABELS = ("supports", "refutes", "not_enough_info")
ABSTAINED = "abstained"

#: gold labels (lower-cased) read as each three-way class; binary-only labels (not_supports, 0, false ...) are not
GOLD3 = {
    **{k: "supports" for k in ("supports", "support", "supported", "entailment")},
    **{k: "refutes" for k in ("refutes", "refuted", "refute", "contradiction")},
    **{k: "not_enough_info" for k in ("not_enough_info", "not enough info", "nei", "neutral")},
}


def gold_three(label: Any) -> str | None:
    """The three-way class of a gold label, or None for a label that is only binary."""
    if isinstance(label, bool):
        return None
    return GOLD3.get(str(label).strip().lower())


def is_three_way(judge: Any) -> bool:
    """Does the judge declare the three labels (the Judge protocol's ``labels``)?"""
    return set(getattr(judge, "labels", ()) or ()) == set(LABELS)


def predicted(judgements: Sequence[Judgement]) -> list[str | None]:
    """Each judgement's three-way label, None when abstained (not ok, or a label outside the three)."""
    return [j.label if j.status == "ok" and j.label in LABELS else None for j in judgements]


def balanced_statistic(gold: Sequence[str | None], preds: Sequence[str | None]) -> Statistic:
    """Three-way balanced accuracy (the mean of the three per-class recalls; NaN where a class was not drawn) over
    pairs of gold class (:func:`gold_three`) and label said (:func:`predicted`; None: abstained, counted wrong):
    :func:`three_way_figures` bootstraps it, ``vericite compare`` of two judge-evals pairs it."""
    rec = [
        ratio_of_sums(np.array([g == c and p == c for g, p in zip(gold, preds)], dtype=float), np.array([g == c for g in gold], dtype=float))
        for c in LABELS
    ]

    def balanced(w: np.ndarray) -> np.ndarray:
        return (rec[0](w) + rec[1](w) + rec[2](w)) / 3

    return balanced


def three_way_figures(
    judge: Any,
    gold_labels: Sequence[Any],
    judgements: Sequence[Judgement],
    *,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
) -> dict[str, Any] | None:
    """The three-way figures (module doc), or None when the judge is not three-way or a gold label is not."""
    if not is_three_way(judge) or not gold_labels:
        return None
    gold = [gold_three(g) for g in gold_labels]
    if any(g is None for g in gold):
        return None
    preds = predicted(judgements)
    n = len(preds)
    per_class: dict[str, Any] = {}
    recalls: list[float] = []
    for c in LABELS:
        tp = sum(1 for g, p in zip(gold, preds) if g == c and p == c)
        fp = sum(1 for g, p in zip(gold, preds) if g != c and p == c)
        fn = sum(1 for g, p in zip(gold, preds) if g == c and p != c)
        per_class[c] = precision_recall_f1(tp, fp, fn)
        if tp + fn:
            recalls.append(tp / (tp + fn))
    missing = [c for c in LABELS if c not in gold]
    conf = {g: {p: 0 for p in (*LABELS, ABSTAINED)} for g in LABELS}
    for g, p in zip(gold, preds):
        conf[g][p or ABSTAINED] += 1

    # bootstrap: the same resamples (seed) as the binary figures' figure_cis
    g_is = {c: np.array([g == c for g in gold], dtype=float) for c in LABELS}
    p_is = {c: np.array([p == c for p in preds], dtype=float) for c in (*LABELS, None)}

    def count(v: np.ndarray) -> Statistic:
        return lambda w: w @ v

    stats: dict[str, Statistic] = {"balanced_accuracy": balanced_statistic(gold, preds)}
    for c in LABELS:
        stats[f"f1_{c}"] = f1_of_counts(g_is[c] * p_is[c], (1 - g_is[c]) * p_is[c], g_is[c] * (1 - p_is[c]))  # as the point figure
    for g in LABELS:
        for p in (*LABELS, None):
            stats[f"confusion/{g}/{p or ABSTAINED}"] = count(g_is[g] * p_is[p])
    raw = bootstrap_cis(stats, n, resamples=resamples, seed=seed, counts=[k for k in stats if k.startswith("confusion/")])
    cis = {k: ([lo, hi] if lo is not None and hi is not None else None) for k, (lo, hi) in raw.items()}
    ci: dict[str, Any] = {k: v for k, v in cis.items() if not k.startswith("confusion/")}
    ci["confusion"] = {g: {p: cis[f"confusion/{g}/{p}"] for p in (*LABELS, ABSTAINED)} for g in LABELS}
    return {
        "labels": list(LABELS),
        "prediction": "the judge's label (likeliest of its three scores); unparseable or failed: abstained, counted wrong",
        "n": n,
        "balanced_accuracy": (sum(recalls) / 3) if not missing else None,
        "balanced_accuracy_note": "" if not missing else f"undefined: no gold pair is {', '.join(missing)}",
        "per_class_f1": per_class,
        "confusion": conf,
        "ci": ci,
    }


__all__ = ["GOLD3", "LABELS", "balanced_statistic", "gold_three", "is_three_way", "predicted", "three_way_figures"]
