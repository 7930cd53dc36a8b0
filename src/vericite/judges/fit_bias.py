"""Fitting the ``llm3f:`` judge's class biases (``vericite train llm3f``): per-label log-bias terms added to the
three-way LLM judge's (``llm3:``) label log-probabilities, fitted on labelled pairs.

The fitted probabilities of a pair are ``softmax(log p(label) + b(label))`` (bias-only vector scaling; the same as
``p(label) * exp(b(label))`` renormalised). Only differences count, so ``b(supports)`` is fixed at 0. The biases
minimise the **class-balanced log loss** on the fit pairs: the mean over the three gold classes of the mean negative
log fitted probability of the gold label (each class weighs the same however often it occurs, as three-way
balanced accuracy does), plus a ridge of ``RIDGE * |b|^2`` so the minimum is unique even where a label never has
mass. The loss is convex in ``b``; Newton's method with backtracking finds it.

The pairs are scored by ``LLM3Judge`` through the backend given (behind the call cache, so fitting again, or
judging the same pairs later, asks the model nothing). Unparseable pairs (none of the three words) and pairs whose
gold label has no mass at all (only on the ``top_logprobs`` path) cannot move the loss and are left out of it; they
are counted. A gold class with no usable pair is an error: its bias would be undefined.

:func:`fit_record` gives the JSON the ``llm3f:<file>`` judge loads (``judges/fitted.py``): the model's identity,
the prompt, the data (its file's sha256, which pairs), the biases, and the fitted split's three-way balanced
accuracy and balanced log loss before and after. Nothing of a pair's text is written.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

from ..errors import VericiteError
from ..types import JudgePair, Judgement
from .three_way import LABELS, PROMPT_ID

#: the fit file's kind and format version; the rule below is ``FIT_ID`` (a change is a new number, a new judge id)
FIT_KIND = "vericite-llm3-fit"
FIT_FORMAT = 1
FIT_ID = "class-bias@1"
OBJECTIVE = "class-balanced log loss"
RIDGE = 1e-6
#: gold labels (lower-cased) as the three classes (the same readings as judge-eval's three-way figures)
GOLD = {
    **{k: "supports" for k in ("supports", "support", "supported", "entailment")},
    **{k: "refutes" for k in ("refutes", "refuted", "refute", "contradiction")},
    **{k: "not_enough_info" for k in ("not_enough_info", "not enough info", "nei", "neutral")},
}


def logits_of(judgements: Sequence[Judgement]) -> list[list[float] | None]:
    """Each judgement's three label log-masses (``raw.label_logmass``; -inf for a label with none), None when
    unparseable or failed."""
    out: list[list[float] | None] = []
    for j in judgements:
        mass = (json.loads(j.raw or "{}") or {}).get("label_logmass") if j.status == "ok" else None
        out.append([float(mass[k]) if k in mass else -math.inf for k in LABELS] if mass else None)
    return out


def _log_probs(z: np.ndarray) -> np.ndarray:
    """Each row's log-probabilities (``models.llamacpp_scoring.log_softmax``), quiet on rows with ``-inf`` entries."""
    from ..models.llamacpp_scoring import log_softmax

    with np.errstate(invalid="ignore", divide="ignore"):
        return log_softmax(z)


def balanced_log_loss(z: np.ndarray, gold: np.ndarray, bias: np.ndarray) -> float:
    """The class-balanced log loss of logits ``z`` (pairs x 3) shifted by ``bias``, gold class indices ``gold``."""
    lp = _log_probs(z + bias)[np.arange(len(gold)), gold]
    return float(np.mean([-lp[gold == c].mean() for c in range(len(LABELS)) if np.any(gold == c)]))


def balanced_accuracy(z: np.ndarray, gold: np.ndarray, bias: np.ndarray, abstained: np.ndarray | None = None) -> float | None:
    """Three-way balanced accuracy of the argmax of ``z + bias`` (an abstained pair is wrong); None unless every
    class occurs."""
    right = np.argmax(z + bias, axis=1) == gold
    if abstained is not None:
        right = right & ~abstained
    if not all(np.any(gold == c) for c in range(len(LABELS))):
        return None
    return float(np.mean([right[gold == c].mean() for c in range(len(LABELS))]))


def fit_biases(z: np.ndarray, gold: np.ndarray) -> np.ndarray:
    """The biases (``b[0]`` = 0) minimising the class-balanced log loss plus the ridge (module doc)."""
    weight = np.zeros(len(gold))
    for c in range(len(LABELS)):
        weight[gold == c] = 1.0 / (len(LABELS) * max(1, int(np.sum(gold == c))))
    onehot = np.eye(len(LABELS))[gold]

    def loss(b: np.ndarray) -> float:
        full = np.concatenate([[0.0], b])
        lp = _log_probs(z + full)[np.arange(len(gold)), gold]
        return float(-(weight * lp).sum() + RIDGE * (b @ b))

    b = np.zeros(len(LABELS) - 1)
    for _ in range(100):
        q = np.exp(_log_probs(z + np.concatenate([[0.0], b])))
        grad = (weight[:, None] * (q - onehot)).sum(axis=0)[1:] + 2 * RIDGE * b
        qs = q[:, 1:]
        hess = (weight[:, None, None] * (qs[:, :, None] * (np.eye(len(b))[None] - qs[:, None, :]))).sum(axis=0)
        hess += 2 * RIDGE * np.eye(len(b))
        step = np.linalg.solve(hess, grad)
        now, t = loss(b), 1.0
        while loss(b - t * step) > now - 1e-4 * t * (grad @ step) and t > 1e-10:
            t /= 2
        b = b - t * step
        if np.max(np.abs(t * step)) < 1e-10:
            break
    return np.concatenate([[0.0], b])


def fit_record(
    judgements: Sequence[Judgement],
    gold_labels: Sequence[Any],
    *,
    model: dict[str, Any],
    judge_id: str,
    data: dict[str, Any],
) -> dict[str, Any]:
    """Fit the biases on judged pairs with their gold labels and give the fit file's content (module doc).
    ``data`` says where the pairs come from (file, sha256, skip, n); ``model`` is the backend's identity."""
    gold_all = []
    for g in gold_labels:
        c = GOLD.get(str(g).strip().lower())
        if c is None:
            raise VericiteError(f"the fit pairs need three-way gold labels (supports / refutes / not_enough_info): got {g!r}")
        gold_all.append(LABELS.index(c))
    gold = np.array(gold_all, dtype=int)
    rows = logits_of(judgements)
    unparseable = np.array([r is None for r in rows])
    z_all = np.array([r if r is not None else [0.0, 0.0, 0.0] for r in rows], dtype=float)
    gold_mass = np.isfinite(z_all[np.arange(len(gold)), gold]) & ~unparseable
    usable = gold_mass
    missing = [LABELS[c] for c in range(len(LABELS)) if not np.any(usable & (gold == c))]
    if missing:
        raise VericiteError(
            f"the fit pairs hold no usable {', '.join(missing)} pair (gold label with mass under {judge_id}): "
            f"its bias cannot be fitted; fit on more pairs"
        )
    bias = np.round(fit_biases(z_all[usable], gold[usable]), 6)  # as the file gives them to the judge
    zero = np.zeros(len(LABELS))

    def figures(b: np.ndarray) -> dict[str, Any]:
        pred = np.argmax(z_all + b, axis=1)
        said = {LABELS[c]: int(np.sum((pred == c) & ~unparseable)) for c in range(len(LABELS))}
        said["abstained"] = int(np.sum(unparseable))
        return {
            "balanced_accuracy_3way": _round(balanced_accuracy(z_all, gold, b, unparseable)),
            "balanced_log_loss": _round(balanced_log_loss(z_all[usable], gold[usable], b)),
            "said": said,
        }

    return {
        "kind": FIT_KIND,
        "format": FIT_FORMAT,
        "fit": FIT_ID,
        "objective": OBJECTIVE,
        "ridge": RIDGE,
        "judge": judge_id,
        "prompt": PROMPT_ID,
        "model": model,
        "data": data,
        "labels": list(LABELS),
        "bias": {k: float(v) for k, v in zip(LABELS, bias)},
        "pairs": {
            "n": len(gold),
            "used": int(np.sum(usable)),
            "unparseable": int(np.sum(unparseable)),
            "gold_without_mass": int(np.sum(~gold_mass & ~unparseable)),
            "gold": {LABELS[c]: int(np.sum(gold == c)) for c in range(len(LABELS))},
        },
        "before": figures(zero),
        "after": figures(bias),
    }


def fit_on_pairs(
    backend: Any,
    data_path: str | Path,
    *,
    skip: int = 0,
    limit: int | None = None,
    batch_size: int = 8,
    progress: Callable[[int], None] | None = None,
) -> dict[str, Any]:
    """Judge readable pairs ``skip`` .. ``skip + limit - 1`` of ``data_path`` (judge-eval's reading of a pairs file)
    with ``LLM3Judge(backend)`` and fit the biases on them (:func:`fit_record`)."""
    from ..paths import display_path, file_sha256
    from .meta import load_pairs
    from .three_way import LLM3Judge

    pairs = load_pairs(data_path, None if limit is None else skip + limit)
    chosen = pairs.pairs[skip:]
    if not chosen:
        raise VericiteError(f"{pairs.path} holds {len(pairs.pairs)} readable pairs: none after the first {skip} (--skip) to fit on")
    judge = LLM3Judge(backend, batch_size=batch_size)
    judgements: list[Judgement] = []
    for start in range(0, len(chosen), batch_size):
        batch = chosen[start : start + batch_size]
        judgements += judge.judge([JudgePair(evidence=p.evidence, claim=p.claim) for p in batch])
        if progress is not None:
            progress(len(batch))
    ident = backend.identity()
    data = {"path": display_path(pairs.path), "sha256": file_sha256(pairs.path), "skip": skip, "n": len(chosen)}
    return fit_record(judgements, [p.label for p in chosen], model=ident.to_dict() if hasattr(ident, "to_dict") else {"name": str(ident)},
                      judge_id=judge.id, data=data)


def _round(x: float | None) -> float | None:
    return None if x is None else round(float(x), 6)


__all__ = ["FIT_FORMAT", "FIT_ID", "FIT_KIND", "balanced_accuracy", "balanced_log_loss", "fit_biases", "fit_on_pairs", "fit_record", "logits_of"]
