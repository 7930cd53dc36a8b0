"""The figures of ``judge-eval --task alce-human``: how far a judge's verdicts (or the file's automatic TRUE labels,
the reference row) agree with ALCE's human citation labels (``judges/meta_alce.py`` builds the items).

Three binary views, each over its own items:

* ``recall``: a sentence with citations; gold = the human ``sentence_recall_score`` is 1;
* ``precision`` (full vs rest): a citation; gold = the human ``citation_precision_score`` is 2 (full support);
* ``precision_any`` (any vs none): the same citations; gold = the human score is 1 or 2.

A judge answers one binary question per pair (does the premise support the hypothesis: P(supported) >= 0.5),
so its one verdict on (passage, sentence) is compared with both precision views. The reference row reads the
file's automatic labels on each view's scale: recall 1; precision 2 (the passage alone entails), or 1 or 2.

Per view (and per dataset, ``datasets``): ``balanced_accuracy`` (mean of the two class recalls), ``cohen_kappa``
(agreement beyond chance: (p_o - p_e) / (1 - p_e), p_e from the two sides' marginals), ``roc_auc`` (rank AUC,
ties one half, over the scored items) only when the judge gives graded probabilities — a judge (or the
reference) that gives only 0/1 has ``roc_auc`` null with a note — and ``n``. A judgement that is unparseable or
failed is a third answer, "abstained": wrong for balanced accuracy and kappa (it agrees with no gold class; in
p_e its share meets no gold class), left out of the AUC. Bootstrap 95 % CIs resample the view's items (1000
resamples, seed 0), each figure recomputed as its point value is (``vericite/stats.py``).
"""

from __future__ import annotations

from typing import Any, Callable, Mapping, Sequence

import numpy as np

from ..stats import DEFAULT_RESAMPLES, DEFAULT_SEED, Statistic, bootstrap_cis, ratio_of_sums
from ..types import JudgePair, Judgement
from .batches import judgement_verdict
from .meta import roc_auc
from .meta_alce import AlceHumanFile, AlceItem
from .meta_figures import auc_statistic

#: view -> which items it reads, and what a 0/1/2 score means on it
VIEWS: dict[str, tuple[str, Callable[[int], bool]]] = {
    "recall": ("recall", lambda s: s == 1),
    "precision": ("precision", lambda s: s == 2),
    "precision_any": ("precision", lambda s: s > 0),
}
#: what each view is, in words (tables, docs)
VIEW_WORDS = {
    "recall": "sentence recall (supported by its citations)",
    "precision": "citation precision, full vs rest",
    "precision_any": "citation precision, any vs none",
}
FIGURES = ("balanced_accuracy", "cohen_kappa", "roc_auc")


def balanced_accuracy(gold: Sequence[bool], said: Sequence[bool | None]) -> float | None:
    """Mean of the recalls of the two gold classes (an abstention is a miss); None with one class."""
    pos = [s for g, s in zip(gold, said) if g]
    neg = [s for g, s in zip(gold, said) if not g]
    if not pos or not neg:
        return None
    return (sum(1 for s in pos if s is True) / len(pos) + sum(1 for s in neg if s is False) / len(neg)) / 2


def cohen_kappa(gold: Sequence[bool], said: Sequence[bool | None]) -> float | None:
    """Cohen's kappa of the judge against gold; an abstention agrees with nothing. None when p_e is 1 (both sides
    give one class only)."""
    n = len(gold)
    if not n:
        return None
    po = sum(1 for g, s in zip(gold, said) if s is not None and s == g) / n
    g1 = sum(gold) / n
    s1 = sum(1 for s in said if s is True) / n
    s0 = sum(1 for s in said if s is False) / n
    pe = g1 * s1 + (1 - g1) * s0
    return None if pe >= 1 else (po - pe) / (1 - pe)


def _kappa_statistic(gold: np.ndarray, said_pos: np.ndarray, said_neg: np.ndarray) -> Statistic:
    agree = np.where(gold, said_pos, said_neg)

    def stat(w: np.ndarray) -> np.ndarray:
        n = w.sum(axis=1)
        po = (w @ agree) / n
        g1 = (w @ gold.astype(float)) / n
        pe = g1 * (w @ said_pos) / n + (1 - g1) * (w @ said_neg) / n
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(pe < 1, (po - pe) / np.where(pe < 1, 1 - pe, 1.0), np.nan)

    return stat


def agreement(
    gold: Sequence[bool],
    said: Sequence[bool | None],
    scores: Sequence[float | None] | None = None,
    *,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
) -> dict[str, Any]:
    """One view's figures: n, n_scored, balanced_accuracy, cohen_kappa, roc_auc (+ roc_auc_note), confusion and
    bootstrap CIs (module docstring). ``scores``: P(supported) of each item (None: abstained); the AUC is given
    only when some scored item has a score other than 0 and 1."""
    n = len(gold)
    scored = [(s, g) for s, g, v in zip(scores or [None] * n, gold, said) if v is not None and s is not None]
    graded = any(s not in (0.0, 1.0) for s, _ in scored)
    if not graded:
        auc, note = None, "not computed: the verdicts are 0 or 1 only (no graded probability to rank by)"
    else:
        auc, note = roc_auc([s for s, _ in scored], [g for _, g in scored])
        note = note or "unparseable and failed judgements are left out of the AUC"
    confusion = {g: {"supported": 0, "not_supported": 0, "abstained": 0} for g in ("supports", "not_supports")}
    for g, v in zip(gold, said):
        confusion["supports" if g else "not_supports"]["abstained" if v is None else ("supported" if v else "not_supported")] += 1
    g_arr = np.array(gold, dtype=bool)
    said_pos = np.array([v is True for v in said], dtype=float)
    said_neg = np.array([v is False for v in said], dtype=float)
    rec_pos = ratio_of_sums(g_arr * said_pos, g_arr.astype(float))
    rec_neg = ratio_of_sums((~g_arr) * said_neg, (~g_arr).astype(float))
    stats: dict[str, Statistic] = {
        "balanced_accuracy": lambda w: (rec_pos(w) + rec_neg(w)) / 2,
        "cohen_kappa": _kappa_statistic(g_arr, said_pos, said_neg),
    }
    if graded:
        s_arr = np.array([np.nan if s is None else s for s in (scores or [])], dtype=float)
        stats["roc_auc"] = auc_statistic(s_arr, g_arr, np.array([v is not None and s is not None for v, s in zip(said, scores or [])]))
    cis = bootstrap_cis(stats, n, resamples=resamples, seed=seed)
    ci = {k: (list(cis[k]) if k in cis and None not in cis[k] else None) for k in FIGURES}
    return {
        "n": n,
        "n_scored": len(scored),
        "positives": int(sum(gold)),
        "balanced_accuracy": balanced_accuracy(gold, said),
        "cohen_kappa": cohen_kappa(gold, said),
        "roc_auc": auc,
        "roc_auc_note": note,
        "confusion": confusion,
        "ci": ci,
    }


Verdict = Callable[[AlceItem, Callable[[int], bool]], tuple[bool | None, float | None]]


def judge_verdict(judged: Mapping[JudgePair, Judgement]) -> Verdict:
    """A judge's verdict on an item: its judgement of the item's pair (P(supported) >= 0.5), the same on every view."""

    def verdict(item: AlceItem, _scale: Callable[[int], bool]) -> tuple[bool | None, float | None]:
        j = judged[item.pair]
        v = judgement_verdict(j)
        return v, (j.probability if v is not None else None)

    return verdict


def reference_verdict(item: AlceItem, scale: Callable[[int], bool]) -> tuple[bool | None, float | None]:
    """The file's automatic label read on the view's scale."""
    if item.automatic is None:
        return None, None
    v = scale(item.automatic)
    return v, 1.0 if v else 0.0


def view_figures(f: AlceHumanFile, verdict: Verdict, *, datasets: str | None = None, resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED) -> dict[str, Any]:
    """The flat figures of every view (``recall_balanced_accuracy``, ``recall_cohen_kappa``, ``recall_roc_auc``,
    ``recall_n``, ... ``precision_*``, ``precision_any_*``), with ``ci`` and ``confusion`` keyed the same way, over
    the items of ``datasets`` (one dataset's name) or all."""
    out: dict[str, Any] = {}
    ci: dict[str, Any] = {}
    confusion: dict[str, Any] = {}
    for view, (kind, scale) in VIEWS.items():
        items = [i for i in (f.recall if kind == "recall" else f.precision) if datasets is None or i.dataset == datasets]
        said, scores = zip(*(verdict(i, scale) for i in items)) if items else ((), ())
        a = agreement([scale(i.human) for i in items], list(said), list(scores), resamples=resamples, seed=seed)
        for k in ("balanced_accuracy", "cohen_kappa", "roc_auc", "roc_auc_note", "n", "n_scored", "positives"):
            out[f"{view}_{k}"] = a[k]
        for k in FIGURES:
            ci[f"{view}_{k}"] = a["ci"][k]
        confusion[view] = a["confusion"]
    out["ci"] = ci
    out["confusion"] = confusion
    return out


def all_figures(f: AlceHumanFile, verdict: Verdict, *, resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED) -> dict[str, Any]:
    """:func:`view_figures` over the whole file, and per dataset under ``datasets``."""
    out = view_figures(f, verdict, resamples=resamples, seed=seed)
    out["datasets"] = {d: view_figures(f, verdict, datasets=d, resamples=resamples, seed=seed) for d in f.systems}
    return out


#: the rows a table shows: (label, key)
ROWS = [
    ("recall balanced accuracy", "recall_balanced_accuracy"),
    ("recall Cohen's kappa", "recall_cohen_kappa"),
    ("recall ROC AUC", "recall_roc_auc"),
    ("recall n (sentences)", "recall_n"),
    ("precision full-vs-rest balanced accuracy", "precision_balanced_accuracy"),
    ("precision full-vs-rest Cohen's kappa", "precision_cohen_kappa"),
    ("precision full-vs-rest ROC AUC", "precision_roc_auc"),
    ("precision any-vs-none balanced accuracy", "precision_any_balanced_accuracy"),
    ("precision any-vs-none Cohen's kappa", "precision_any_cohen_kappa"),
    ("precision any-vs-none ROC AUC", "precision_any_roc_auc"),
    ("precision n (citations)", "precision_n"),
]


def comparison_rows(results: Mapping[str, Any], scope: str | None = None) -> list[dict[str, Any]]:
    """One row per figure: the judge's value and CI beside the reference's (ALCE's TRUE), for the whole file or one
    dataset (``scope``)."""
    judge = results if scope is None else (results.get("datasets") or {}).get(scope) or {}
    ref_all = results.get("reference") or {}
    ref = ref_all if scope is None else (ref_all.get("datasets") or {}).get(scope) or {}
    rows = []
    for label, key in ROWS:
        rows.append({
            "figure": label, "metric": key,
            "value": judge.get(key), "ci": (judge.get("ci") or {}).get(key),
            "reference": ref.get(key), "reference_ci": (ref.get("ci") or {}).get(key),
        })  # fmt: skip
    return rows


__all__ = [
    "FIGURES", "ROWS", "VIEWS", "VIEW_WORDS", "agreement", "all_figures", "balanced_accuracy", "cohen_kappa",
    "comparison_rows", "judge_verdict", "reference_verdict", "view_figures",
]
