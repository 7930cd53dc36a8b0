"""Four-class judge meta-evaluation on CAQA items (CAQA §5.3, Tables 5-6; metrics.md §3).

Figures over the ``n`` items scored: per-class precision / recall / F1 (precision = correct / predicted as the
class, recall = correct / gold of the class, F1 0 when both are 0), ``micro_f1`` (correct / all items),
``macro_f1`` (mean of the four F1), ``micro_f1_<complexity>`` (single, union, intersection, concatenation),
``binary_micro_f1`` (supportive vs the rest), ``unparseable`` (share), and ``cohen_kappa`` of the dataset's labels
against ``human_label`` where items carry one (§6.3). An unparseable prediction is counted wrong in every figure,
never dropped (the released code drops it from the confusion matrix). Bootstrap 95% CIs resample items.

Two inputs: a judge run over a CAQA dataset (:func:`run_caqa_eval`), or a predictions file made elsewhere
(:func:`read_predictions`: lines ``{"label", "prediction", "complexity", "human_label"?}``, ``prediction`` a class
name or an evaluator's raw text, read by :func:`parse_prediction`). Lines with an unknown gold label are counted
and reported, never a crash.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

from .. import jsonl
from ..errors import DataError
from ..stats import bootstrap_cis
from ..types import JudgePair, Judgement

CLASSES = ("supportive", "insufficient", "contradictory", "irrelevant")
COMPLEXITIES = ("single", "union", "intersection", "concatenation")

#: metrics.md §3: an evaluator's text maps to the class whose keyword occurs first (case-insensitive)
KEYWORDS: tuple[tuple[str, str], ...] = (
    ("support", "supportive"),
    ("insufficient", "insufficient"),
    ("partial", "insufficient"),
    ("missing", "insufficient"),
    ("contradict", "contradictory"),
    ("irrelevant", "irrelevant"),
)


def parse_prediction(text: Any) -> str | None:
    """The class an evaluator's output names: the keyword that occurs first wins; None (unparseable) when none
    does. A class name is its own keyword."""
    if not isinstance(text, str):
        return None
    low = text.lower()
    best: tuple[int, str] | None = None
    for kw, cls in KEYWORDS:
        i = low.find(kw)
        if i >= 0 and (best is None or i < best[0]):
            best = (i, cls)
    return best[1] if best else None


def gold_class(label: Any) -> str | None:
    """A gold label as one of the four classes (``partially_supportive`` reads as insufficient), else None."""
    if not isinstance(label, str):
        return None
    s = label.strip().lower().replace(" ", "_")
    if s in CLASSES:
        return s
    if s in ("partially_supportive", "partial"):
        return "insufficient"
    return None


@dataclass
class Scored:
    gold: list[str] = field(default_factory=list)
    pred: list[str | None] = field(default_factory=list)
    complexity: list[str] = field(default_factory=list)
    human: list[str | None] = field(default_factory=list)


def _prf(tp: float, fp: float, fn: float) -> dict[str, float]:
    p = tp / (tp + fp) if tp + fp else 0.0
    r = tp / (tp + fn) if tp + fn else 0.0
    return {"precision": p, "recall": r, "f1": (2 * p * r / (p + r)) if p + r else 0.0}


def _f1_stat(g: np.ndarray, pr: np.ndarray) -> Callable[[np.ndarray], np.ndarray]:
    tp, fp, fn = (g & pr).astype(float), (~g & pr).astype(float), (g & ~pr).astype(float)

    def stat(w: np.ndarray) -> np.ndarray:
        a, b, c = w @ tp, w @ fp, w @ fn
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(2 * a + b + c > 0, 2 * a / np.maximum(2 * a + b + c, 1e-12), 0.0)

    return stat


def kappa(a: Sequence[str], b: Sequence[str]) -> float | None:
    """Cohen's kappa of two labelings of the same items (None when undefined)."""
    n = len(a)
    if n == 0:
        return None
    labels = sorted(set(a) | set(b))
    po = sum(1 for x, y in zip(a, b) if x == y) / n
    pe = sum((sum(1 for x in a if x == k) / n) * (sum(1 for y in b if y == k) / n) for k in labels)
    return None if pe >= 1.0 else (po - pe) / (1 - pe)


def score(s: Scored, *, resamples: int = 1000, seed: int = 0) -> dict[str, Any]:
    """The figures of the module docstring, each with a CI where it has one."""
    n = len(s.gold)
    g = np.array(s.gold, dtype=object)
    p = np.array([x if x is not None else "" for x in s.pred], dtype=object)
    cx = np.array(s.complexity, dtype=object)
    correct = (g == p).astype(float)
    out: dict[str, Any] = {"n": n, "per_class": {}, "label_counts": {c: int((g == c).sum()) for c in CLASSES},
                           "prediction_counts": {c: int((p == c).sum()) for c in CLASSES} | {"unparseable": int((p == "").sum())}}
    stats: dict[str, Callable[[np.ndarray], np.ndarray]] = {}
    f1s = []
    for c in CLASSES:
        gc, pc = g == c, p == c
        tp, fp, fn = float((gc & pc).sum()), float((~gc & pc).sum()), float((gc & ~pc).sum())
        out["per_class"][c] = _prf(tp, fp, fn) | {"support": int(gc.sum())}
        out[f"f1_{c}"] = out["per_class"][c]["f1"]
        f1s.append(out[f"f1_{c}"])
        stats[f"f1_{c}"] = _f1_stat(gc, pc)
    out["micro_f1"] = float(correct.mean()) if n else None
    stats["micro_f1"] = lambda w: (w @ correct) / np.maximum(w.sum(axis=1), 1e-12)
    out["macro_f1"] = float(np.mean(f1s)) if n else None
    per = [stats[f"f1_{c}"] for c in CLASSES]
    stats["macro_f1"] = lambda w: np.mean([f(w) for f in per], axis=0)
    for k in COMPLEXITIES:
        m = (cx == k).astype(float)
        out[f"n_{k}"] = int(m.sum())
        out[f"micro_f1_{k}"] = float((correct * m).sum() / m.sum()) if m.sum() else None
        stats[f"micro_f1_{k}"] = (lambda m_: lambda w: np.where(w @ m_ > 0, (w @ (correct * m_)) / np.maximum(w @ m_, 1e-12), np.nan))(m)
    bin_ok = ((g == "supportive") == (p == "supportive")) & (p != "")
    out["binary_micro_f1"] = float(bin_ok.mean()) if n else None
    b = bin_ok.astype(float)
    stats["binary_micro_f1"] = lambda w: (w @ b) / np.maximum(w.sum(axis=1), 1e-12)
    unp = (p == "").astype(float)
    out["unparseable"] = float(unp.mean()) if n else None
    stats["unparseable"] = lambda w: (w @ unp) / np.maximum(w.sum(axis=1), 1e-12)
    out["confusion"] = {gc: {pc or "unparseable": int(((g == gc) & (p == pc)).sum()) for pc in (*CLASSES, "")} for gc in CLASSES}
    human = [(x, h) for x, h in zip(s.gold, s.human) if h is not None]
    out["n_human"] = len(human)
    out["cohen_kappa"] = kappa([x for x, _ in human], [h for _, h in human]) if human else None
    out["ci"] = {k: list(v) for k, v in bootstrap_cis(stats, n, resamples=resamples, seed=seed).items()} if n else {}
    return out


# --------------------------------------------------------------------------- inputs


@dataclass
class CaqaItems:
    path: Path
    items: list[dict[str, Any]]
    bad_lines: int = 0
    bad_examples: list[dict[str, Any]] = field(default_factory=list)
    unknown_labels: dict[str, int] = field(default_factory=dict)
    other_split: int = 0


def read_items(path: str | Path, split: str | None = None, limit: int | None = None) -> CaqaItems:
    """The items of a CAQA dataset (``vericite build caqa``), of one ``split`` (None: all); lines that are not
    items and labels that are not classes are counted, not fatal. Refuses a file with no usable item."""
    p = Path(path)
    if not p.is_file():
        raise DataError(f"no CAQA dataset at {p}")
    out = CaqaItems(p, [])
    stats = jsonl.ReadStats()
    for n, r in jsonl.read_numbered(p, policy="skip", torn="ignore", stats=stats):
        if not isinstance(r, dict) or not all(isinstance(r.get(k), str) for k in ("question", "answer", "citation", "label")):
            out.bad_lines += 1
            if len(out.bad_examples) < 5:
                out.bad_examples.append({"line": n, "reason": "not a CAQA item (question, answer, citation, label)"})
            continue
        if split and r.get("split") != split:
            out.other_split += 1
            continue
        if gold_class(r["label"]) is None:
            out.unknown_labels[r["label"]] = out.unknown_labels.get(r["label"], 0) + 1
            continue
        out.items.append(r)
        if limit and len(out.items) >= limit:
            break
    out.bad_lines += stats.unreadable
    if not out.items:
        raise DataError(f"no CAQA item in {p}" + (f" with split {split!r}" if split else "") + (f" ({out.bad_lines} bad lines)" if out.bad_lines else ""))
    return out


def read_predictions(path: str | Path) -> tuple[Scored, dict[str, Any]]:
    """A predictions file: lines ``{"label", "prediction", "complexity", "human_label"?}``; a gold label that is no
    class is counted and the line left out; an unparseable prediction is kept (counted wrong)."""
    p = Path(path)
    if not p.is_file():
        raise DataError(f"no predictions file at {p}")
    s = Scored()
    info: dict[str, Any] = {"bad_lines": 0, "unknown_labels": {}, "unknown_human_labels": 0, "bad_examples": []}
    stats = jsonl.ReadStats()
    for n, r in jsonl.read_numbered(p, policy="skip", torn="ignore", stats=stats):
        if not isinstance(r, dict) or "label" not in r or "prediction" not in r:
            info["bad_lines"] += 1
            if len(info["bad_examples"]) < 5:
                info["bad_examples"].append({"line": n, "reason": "needs label and prediction"})
            continue
        gold = gold_class(r["label"])
        if gold is None:
            k = str(r["label"])
            info["unknown_labels"][k] = info["unknown_labels"].get(k, 0) + 1
            continue
        s.gold.append(gold)
        s.pred.append(gold_class(r["prediction"]) or parse_prediction(r["prediction"]))
        s.complexity.append(str(r.get("complexity") or ""))
        h = r.get("human_label")
        hc = gold_class(h) if h is not None else None
        if h is not None and hc is None:
            info["unknown_human_labels"] += 1
        s.human.append(hc)
    info["bad_lines"] += stats.unreadable
    if not s.gold:
        raise DataError(f"no scorable line in {p}: each needs a label (one of {', '.join(CLASSES)}) and a prediction")
    return s, info


def item_pair(it: dict[str, Any]) -> JudgePair:
    return JudgePair(evidence=it["citation"], claim=it["answer"], question=it["question"])


def judgement_line(j: Judgement, pair: JudgePair) -> dict[str, Any]:
    """A line of judgements.jsonl: the judgement and the question it was asked with (what ``--resume`` matches on)."""
    return {**j.to_dict(), "question": pair.question}


def resumed_judgements(path: Path, judge_id: str) -> dict[JudgePair, Judgement]:
    """The judgements of ``judge_id`` already in ``path`` (judgements.jsonl of an earlier, perhaps interrupted,
    run), keyed by their (citation, answer statement, question); status ok only: an unparseable or failed one is
    asked again. Lines that are not such judgements are passed over."""
    done: dict[JudgePair, Judgement] = {}
    if not path.is_file():
        return done
    for _n, d in jsonl.read_numbered(path, policy="collect", torn="read", stats=jsonl.ReadStats()):
        if not isinstance(d, dict) or not isinstance(d.get("question"), str):
            continue
        try:
            j = Judgement.from_dict(d)
        except (KeyError, TypeError, ValueError):
            continue
        if j.judge == judge_id and j.status == "ok":
            done[JudgePair(j.evidence, j.claim, question=d["question"])] = j
    return done


def run_caqa_eval(judge: Any, items: Sequence[dict[str, Any]], *, batch_size: int = 16,
                  progress: Callable[[int], None] | None = None, out: str | Path | None = None,
                  resume: bool = False) -> tuple[Scored, list[Judgement], dict[str, Any]]:
    """Judge every item in batches; returns the scored predictions, the judgements (in the items' order) and the
    timing. With ``out``, each judgement is appended to ``out/judgements.jsonl`` as it comes (:func:`judgement_line`),
    so an interrupted run keeps what it judged; ``resume`` keeps the judge's ok judgements already there and asks
    only the rest (``progress`` gets the resumed ones at once). The caller rewrites the file in the items' order."""
    from .batches import judge_id

    jid = judge_id(judge)
    pairs = [item_pair(it) for it in items]
    jpath = Path(out) / "judgements.jsonl" if out is not None else None
    kept = resumed_judgements(jpath, jid) if resume and jpath is not None else {}
    got: dict[int, Judgement] = {i: kept[p] for i, p in enumerate(pairs) if p in kept}
    if progress and got:
        progress(len(got))
    todo = [i for i in range(len(items)) if i not in got]
    secs = 0.0
    sink = None
    if jpath is not None:
        jpath.parent.mkdir(parents=True, exist_ok=True)
        sink = jpath.open("w", encoding="utf-8")
    try:
        if sink is not None:
            for i in sorted(got):  # resumed judgements first: the file always holds every judgement made so far
                sink.write(json.dumps(judgement_line(got[i], pairs[i]), ensure_ascii=False) + "\n")
            sink.flush()
        for start in range(0, len(todo), batch_size):
            chunk = todo[start : start + batch_size]
            t0 = time.perf_counter()
            answer = judge.judge([pairs[i] for i in chunk])
            secs += time.perf_counter() - t0
            if len(answer) != len(chunk):
                raise DataError(f"{jid} gave {len(answer)} judgements for {len(chunk)} pairs")
            for i, j in zip(chunk, answer):
                got[i] = j
                if sink is not None:
                    sink.write(json.dumps(judgement_line(j, pairs[i]), ensure_ascii=False) + "\n")
            if sink is not None:
                sink.flush()
            if progress:
                progress(len(chunk))
    finally:
        if sink is not None:
            sink.close()
    s = Scored()
    judgements = [got[i] for i in range(len(items))]
    for it, j in zip(items, judgements):
        s.gold.append(gold_class(it["label"]))  # type: ignore[arg-type]
        s.pred.append(gold_class(j.label) if j.status == "ok" else None)
        s.complexity.append(str(it.get("complexity") or ""))
        h = it.get("human_label")
        s.human.append(gold_class(h) if h is not None else None)
    timing = {"seconds": round(secs, 3), "pairs_per_second": round(len(todo) / secs, 3) if secs > 0 else None, "resumed_pairs": len(items) - len(todo)}
    return s, judgements, timing
