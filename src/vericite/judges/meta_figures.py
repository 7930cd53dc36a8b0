"""What a judge-eval ``results.json`` holds besides the point figures of ``judges/meta.py``: what was measured
(the judge's id, kind, version and its model's identity with sha256), how sure the figures are (percentile
bootstrap 95 % CIs over pairs, seeded), the confusion counts, whether the data fits the judge at all, and the
rows a metric table shows (``vericite judge-eval`` on stdout, ``vericite report``).

The bootstrap resamples pairs, the independent unit, and recomputes each figure exactly as the point figure is
computed (vericite/stats.py): balanced accuracy as the mean of the two class recalls, ROC AUC by ranks with ties
counting one half over the scored pairs drawn, F1 from the class's counts as the point F1 (2tp / (2tp + fp + fn):
0 on a resample where the class was drawn but never said, as the point figure of a class never said is 0). A
resample where a figure is undefined (one class missing; for F1, neither drawn nor said) is left out of that
figure's interval.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any, Mapping, Sequence

import numpy as np

from ..stats import DEFAULT_RESAMPLES, DEFAULT_SEED, Statistic, bootstrap_cis, f1_of_counts, ratio_of_sums
from ..types import NOT_SUPPORTED, SUPPORTED, Judgement
from .meta import NEGATIVE, POSITIVE, THRESHOLD, binary_label

ABSTAINED = "abstained"


# --------------------------------------------------------------------------- what was measured


def judge_model_identity(judge: Any) -> dict[str, Any] | None:
    """The identity of the model behind a judge (name, backend, file or model id, sha256), or None for a judge
    without a model (``triple``). A judge says it with ``model_identity()``; an LLM judge's backend with
    ``identity()``."""
    own = getattr(judge, "model_identity", None)
    if callable(own):
        return own()
    ident = getattr(getattr(judge, "backend", None), "identity", None)
    if callable(ident):
        i = ident()
        return i.to_dict() if hasattr(i, "to_dict") else {"name": str(i)}
    return None


def judge_identity(judge: Any) -> dict[str, Any]:
    """``judge`` (id), ``judge_kind``, ``judge_version``, ``judge_options``, ``prompt`` (an LLM judge's prompt
    version) and ``model`` (:func:`judge_model_identity`), as judge-eval's results.json records them; a calibrated
    judge (``llm3c:``, ``llm3f:``) adds ``calibration`` (its ``calibration()``: the content-free prior, the fitted biases)."""
    jid = str(getattr(judge, "id", "") or type(judge).__name__)
    head, at, version = jid.rpartition("@")
    kind = (head if at else jid).split(":", 1)[0]
    options = getattr(judge, "options", None)
    calibration = getattr(judge, "calibration", None)  # llm3c: its content-free prior (judges/calibrated.py)
    return {
        "judge": jid,
        "judge_kind": kind,
        "judge_version": version if at else None,
        "judge_options": options() if callable(options) else None,
        "prompt": getattr(judge, "prompt_version", None),
        "model": judge_model_identity(judge),
        **({"calibration": calibration()} if callable(calibration) else {}),
    }


def folder_sha256(files: Mapping[str, str]) -> str:
    """One sha256 for a model folder: of the sorted ``{relative path: file sha256}`` map as JSON."""
    return hashlib.sha256(json.dumps(dict(sorted(files.items())), separators=(",", ":")).encode("utf-8")).hexdigest()


# --------------------------------------------------------------------------- does the data fit the judge?


def data_fit(judge: Any, pairs: Sequence[Any]) -> dict[str, Any] | None:
    """How many pairs the judge says it cannot judge (a judge with ``cannot_judge(pair) -> reason | None``, such
    as the triple judge, which reads only "property: value" claims), why, and a first example; None for a judge
    that judges anything."""
    check = getattr(judge, "cannot_judge", None)
    if not callable(check):
        return None
    from .meta import as_pair

    unfit, reason, example = 0, "", ""
    for item in pairs:
        pair, _ = as_pair(item)
        why = check(pair)
        if why:
            unfit += 1
            if not reason:
                reason, example = str(why), pair.claim
    return {"pairs": len(pairs), "unfit": unfit, "reason": reason, "example_claim": example[:200]}


# --------------------------------------------------------------------------- confusion counts and CIs


def predictions(judgements: Sequence[Judgement], threshold: float = THRESHOLD) -> list[bool | None]:
    """True (supports), False (not_supports), None (abstained: unparseable or failed), as meta.score_judgements."""
    return [None if (j.probability is None or j.status != "ok") else j.probability >= threshold for j in judgements]


def confusion(gold_labels: Sequence[Any], judgements: Sequence[Judgement], threshold: float = THRESHOLD) -> dict[str, dict[str, int]]:
    """Gold class (the data's supports / not_supports) -> what the judge said (the judges' labels supported /
    not_supported, or abstained: unparseable or failed) -> number of pairs."""
    out = {g: {SUPPORTED: 0, NOT_SUPPORTED: 0, ABSTAINED: 0} for g in (POSITIVE, NEGATIVE)}
    for g, p in zip(gold_labels, predictions(judgements, threshold)):
        out[POSITIVE if binary_label(g) else NEGATIVE][ABSTAINED if p is None else (SUPPORTED if p else NOT_SUPPORTED)] += 1
    return out


def auc_statistic(scores: np.ndarray, positive: np.ndarray, scored: np.ndarray) -> Statistic:
    """Rank AUC (ties count 1/2) of the scored pairs, each counted as often as it was drawn."""
    idx = np.flatnonzero(scored)
    order = idx[np.argsort(scores[idx], kind="stable")]
    s = scores[order]
    pos = positive[order].astype(float)
    starts = np.flatnonzero(np.r_[True, s[1:] != s[:-1]]) if s.size else np.array([], dtype=int)

    def stat(w: np.ndarray) -> np.ndarray:
        if not s.size:
            return np.full(w.shape[0], np.nan)
        ws = w[:, order]
        wp = np.add.reduceat(ws * pos, starts, axis=1)  # drawn positives per tied score group
        wn = np.add.reduceat(ws * (1.0 - pos), starts, axis=1)
        below = np.cumsum(wn, axis=1) - wn  # drawn negatives scored strictly lower
        num = (wp * (below + 0.5 * wn)).sum(axis=1)
        den = wp.sum(axis=1) * wn.sum(axis=1)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan)

    return stat


def figure_statistics(gold_labels: Sequence[Any], judgements: Sequence[Judgement], preds: Sequence[bool | None]) -> dict[str, Statistic]:
    """The statistics of balanced_accuracy, accuracy, roc_auc, f1_supports, f1_not_supports and unparseable over
    the pairs (gold label, judgement, prediction: :func:`predictions`), each computed as the point figure of
    ``meta.score_judgements``: :func:`figure_cis` bootstraps them, ``vericite compare`` of two judge-evals
    pairs them (over both runs' pairs, each prediction at its own run's threshold)."""
    gold = np.array([binary_label(g) for g in gold_labels], dtype=bool)
    said_pos = np.array([p is True for p in preds], dtype=float)
    said_neg = np.array([p is False for p in preds], dtype=float)
    g_pos, g_neg = gold.astype(float), (~gold).astype(float)
    ones = np.ones(len(preds))
    rec_pos = ratio_of_sums(g_pos * said_pos, g_pos)
    rec_neg = ratio_of_sums(g_neg * said_neg, g_neg)

    def balanced(w: np.ndarray) -> np.ndarray:
        return (rec_pos(w) + rec_neg(w)) / 2  # NaN when a class was not drawn

    scores = np.array([j.probability if j.probability is not None else np.nan for j in judgements], dtype=float)
    return {
        "balanced_accuracy": balanced,
        "accuracy": ratio_of_sums(np.where(gold, said_pos, said_neg), ones),
        "roc_auc": auc_statistic(scores, gold, np.array([p is not None for p in preds])),
        # as the point figure (stats.precision_recall_f1): 0 on a sample where the class was drawn but never said
        "f1_supports": f1_of_counts(g_pos * said_pos, g_neg * said_pos, g_pos * (1 - said_pos)),
        "f1_not_supports": f1_of_counts(g_neg * said_neg, g_pos * said_neg, g_neg * (1 - said_neg)),
        "unparseable": ratio_of_sums(np.array([j.status == "unparseable" for j in judgements], dtype=float), ones),
    }


def figure_cis(
    gold_labels: Sequence[Any],
    judgements: Sequence[Judgement],
    threshold: float = THRESHOLD,
    *,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
) -> dict[str, list[float] | None]:
    """Bootstrap 95 % CIs of balanced_accuracy, accuracy, roc_auc, f1_supports, f1_not_supports and unparseable."""
    preds = predictions(judgements, threshold)
    stats = figure_statistics(gold_labels, judgements, preds)
    cis = bootstrap_cis(stats, len(preds), resamples=resamples, seed=seed)
    return {k: ([lo, hi] if lo is not None and hi is not None else None) for k, (lo, hi) in cis.items()}


# --------------------------------------------------------------------------- the rows of a metric table

#: (row name, how to read the value from results.json, which CI, higher is better)
_ROWS: list[tuple[str, tuple[str, ...], str | None, bool]] = [
    ("balanced_accuracy", ("balanced_accuracy",), "balanced_accuracy", True),
    ("roc_auc", ("roc_auc",), "roc_auc", True),
    ("accuracy", ("accuracy",), "accuracy", True),
    ("f1_supports", ("per_class_f1", POSITIVE, "f1"), "f1_supports", True),
    ("f1_not_supports", ("per_class_f1", NEGATIVE, "f1"), "f1_not_supports", True),
    ("unparseable", ("unparseable",), "unparseable", False),
    ("failed", ("failed",), None, False),
    ("pairs_per_second", ("pairs_per_second",), None, True),
]


def _dig(d: Any, path: Sequence[str]) -> Any:
    for k in path:
        d = d.get(k) if isinstance(d, Mapping) else None
    return d


def judge_eval_rows(results: Mapping[str, Any]) -> list[dict[str, Any]]:
    """One row per figure of a judge-eval results.json: name, value, ci, n, judge, higher_is_better, reason
    (why a figure is missing). Results written before CIs were recorded give ``ci`` None."""
    cis = results.get("ci") if isinstance(results.get("ci"), Mapping) else {}
    rows = []
    for name, path, ci_key, hib in _ROWS:
        value = _dig(results, path)
        if not isinstance(value, (int, float)) or isinstance(value, bool):
            value = None
        ci = cis.get(ci_key) if ci_key else None
        reason = None
        if value is None:
            reason = str(results.get(f"{name}_note") or "not recorded")
        n = results.get("n_scored") if name == "roc_auc" else results.get("n")
        rows.append({"metric": name, "value": value, "ci": ci if value is not None else None, "n": n,
                     "judge": results.get("judge"), "higher_is_better": hib, "reason": reason})
    return rows + three_way_rows(results)


#: the three-way rows (a three-way judge on three-way gold labels): (row name, path in ``three_way``, CI key)
_ROWS_3: list[tuple[str, tuple[str, ...], str]] = [
    ("balanced_accuracy_3way", ("balanced_accuracy",), "balanced_accuracy"),
    ("f1_supports_3way", ("per_class_f1", "supports", "f1"), "f1_supports"),
    ("f1_refutes_3way", ("per_class_f1", "refutes", "f1"), "f1_refutes"),
    ("f1_not_enough_info_3way", ("per_class_f1", "not_enough_info", "f1"), "f1_not_enough_info"),
]


def three_way_rows(results: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The rows of results.json's ``three_way`` figures (none when it has none: a judge with other labels)."""
    three = results.get("three_way")
    if not isinstance(three, Mapping):
        return []
    cis = three.get("ci") if isinstance(three.get("ci"), Mapping) else {}
    rows = []
    for name, path, ci_key in _ROWS_3:
        value = _dig(three, path)
        if not isinstance(value, (int, float)) or isinstance(value, bool):
            value = None
        reason = None if value is not None else str(three.get(f"{path[0]}_note") or "undefined: no pair is of the class nor was said to be")
        rows.append({"metric": name, "value": value, "ci": cis.get(ci_key) if value is not None else None,
                     "n": three.get("n"), "judge": results.get("judge"), "higher_is_better": True, "reason": reason})
    return rows


__all__ = [
    "confusion", "data_fit", "figure_cis", "figure_statistics", "folder_sha256", "judge_eval_rows", "judge_identity",
    "judge_model_identity", "predictions", "three_way_rows",
]
