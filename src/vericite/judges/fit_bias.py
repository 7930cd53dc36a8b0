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

The fit pairs (:func:`read_fit_pairs`) come from a file of labelled pairs (judge-eval's reading: ``evidence``,
``claim``, a three-way ``label``) or from a ``vericite build caqa`` dataset, recognised by its fields (the first JSON
object has ``question``, ``answer``, ``citation`` and ``label`` and no ``evidence`` or ``claim``). A CAQA item is
the pair judge-eval --task caqa judges (``meta_caqa.item_pair``: the citation is the evidence, the answer statement
the claim), of one split (``train`` unless said), its four classes read as three by :data:`CAQA_TO_3WAY`. The fit
file's ``data`` says which: ``kind`` (``pairs`` or ``caqa``), and for CAQA the ``split``, the ``mapping`` and the
four-class counts (``classes``); ``skip`` and ``n`` count readable pairs, or the split's items.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

from .. import jsonl
from ..errors import DataError, VericiteError
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
#: CAQA's four classes (``vericite build caqa``) as the three labels a CAQA dataset is fitted on
CAQA_TO_3WAY = {"supportive": "supports", "contradictory": "refutes", "insufficient": "not_enough_info", "irrelevant": "not_enough_info"}
CAQA_FIELDS = ("question", "answer", "citation", "label")


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


@dataclass
class FitPairs:
    """The pairs to fit on, their three-way gold labels, and the fit file's ``data`` (module doc)."""

    pairs: list[JudgePair]
    gold: list[str]
    data: dict[str, Any]


def data_kind(path: str | Path) -> str:
    """``caqa`` for a ``vericite build caqa`` dataset (its first JSON object has question, answer, citation and label
    and no evidence or claim), else ``pairs`` (a folder or a missing file too: the pairs reader says what is wrong)."""
    p = Path(path).expanduser()
    if not p.is_file():
        return "pairs"
    for _n, d in jsonl.read_numbered(p, policy="skip", torn="ignore", stats=jsonl.ReadStats()):
        caqa = all(isinstance(d.get(k), str) for k in CAQA_FIELDS) and "evidence" not in d and "claim" not in d
        return "caqa" if caqa else "pairs"
    return "pairs"


def read_fit_pairs(data_path: str | Path, *, split: str | None = None, skip: int = 0, limit: int | None = None) -> FitPairs:
    """Readable pairs ``skip`` .. ``skip + limit - 1`` of ``data_path``: labelled pairs, or the items of ``split``
    (default ``train``) of a CAQA dataset, mapped to three labels (module doc). ``split`` with a pairs file, or a
    CAQA dataset with no item of the split, is an error saying so."""
    from ..paths import display_path, file_sha256

    want = None if limit is None else skip + limit
    if data_kind(data_path) == "pairs":
        if split is not None:
            raise VericiteError(f"--split is for a `vericite build caqa` dataset; {data_path} is read as labelled pairs (evidence, claim, label)")
        from .meta import load_pairs

        found = load_pairs(data_path, want)
        chosen = found.pairs[skip:]
        if not chosen:
            raise VericiteError(f"{found.path} holds {len(found.pairs)} readable pairs: none after the first {skip} (--skip) to fit on")
        data = {"kind": "pairs", "path": display_path(found.path), "sha256": file_sha256(found.path), "skip": skip, "n": len(chosen)}
        return FitPairs([JudgePair(evidence=p.evidence, claim=p.claim) for p in chosen], [p.label for p in chosen], data)
    from .meta_caqa import gold_class, item_pair, read_items

    split = split or "train"
    try:
        items = read_items(data_path, split, want)
    except DataError:
        splits = Counter(str(it.get("split")) for it in read_items(data_path, None).items)  # no item at all: its own error
        raise VericiteError(f"the CAQA dataset {data_path} holds no item of split {split!r} (its items: "
                            + ", ".join(f"{k} {v}" for k, v in sorted(splits.items())) + "): give --split one of those") from None
    chosen = items.items[skip:]
    if not chosen:
        raise VericiteError(f"the CAQA dataset {data_path} holds {len(items.items)} items of split {split!r}: none after the first {skip} (--skip) to fit on")
    classes = [str(gold_class(it["label"])) for it in chosen]
    data = {"kind": "caqa", "path": display_path(items.path), "sha256": file_sha256(items.path), "split": split, "skip": skip,
            "n": len(chosen), "mapping": dict(CAQA_TO_3WAY), "classes": {c: classes.count(c) for c in CAQA_TO_3WAY}}
    return FitPairs([item_pair(it) for it in chosen], [CAQA_TO_3WAY[c] for c in classes], data)


def fit_judged(backend: Any, fit_pairs: FitPairs, *, batch_size: int = 8, progress: Callable[[int], None] | None = None) -> dict[str, Any]:
    """Judge the fit pairs with ``LLM3Judge(backend)`` and fit the biases on them (:func:`fit_record`)."""
    from .three_way import LLM3Judge

    judge = LLM3Judge(backend, batch_size=batch_size)
    judgements: list[Judgement] = []
    for start in range(0, len(fit_pairs.pairs), batch_size):
        batch = fit_pairs.pairs[start : start + batch_size]
        judgements += judge.judge(batch)
        if progress is not None:
            progress(len(batch))
    ident = backend.identity()
    return fit_record(judgements, fit_pairs.gold, model=ident.to_dict() if hasattr(ident, "to_dict") else {"name": str(ident)},
                      judge_id=judge.id, data=fit_pairs.data)


def fit_on_pairs(
    backend: Any,
    data_path: str | Path,
    *,
    skip: int = 0,
    limit: int | None = None,
    batch_size: int = 8,
    progress: Callable[[int], None] | None = None,
    split: str | None = None,
) -> dict[str, Any]:
    """Judge pairs ``skip`` .. ``skip + limit - 1`` of ``data_path`` (:func:`read_fit_pairs`: labelled pairs, or a
    CAQA dataset's ``split``) with ``LLM3Judge(backend)`` and fit the biases on them (:func:`fit_record`)."""
    chosen = read_fit_pairs(data_path, split=split, skip=skip, limit=limit)
    return fit_judged(backend, chosen, batch_size=batch_size, progress=progress)


def _round(x: float | None) -> float | None:
    return None if x is None else round(float(x), 6)


__all__ = ["CAQA_TO_3WAY", "FIT_FORMAT", "FIT_ID", "FIT_KIND", "FitPairs", "balanced_accuracy", "balanced_log_loss", "data_kind", "fit_biases",
           "fit_judged", "fit_on_pairs", "fit_record", "logits_of", "read_fit_pairs"]
