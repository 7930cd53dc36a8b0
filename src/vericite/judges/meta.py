"""Judge meta-evaluation: how far can a judge be trusted? Measured on labelled (evidence, claim, label) pairs.

The task is binary: does the evidence support the claim? Gold "supports" is the positive class; every other
label (VitaminC's "refutes" and "not_enough_info") is "not_supports". The judge predicts "supports" when its
probability is >= the threshold (0.5).

Figures (all over the ``n`` pairs judged):

* ``balanced_accuracy``: mean of the recall of supports and the recall of not_supports.
* ``roc_auc``: rank-based (Mann-Whitney U with average ranks, so tied scores count one half); ``None`` with a
  reason in ``roc_auc_note`` when the scored pairs hold only one class.
* ``per_class_f1``: precision / recall / F1 / support of supports and not_supports, plus ``label_counts`` (the
  gold 3-way labels) and ``by_label`` (how often the judge said "supports" for each gold 3-way label).
* ``unparseable``: the share of judgements the judge could not score (status "unparseable"; "failed" is
  counted in ``failed``).

An unparseable or failed judgement is a third prediction, "abstained": it is wrong for accuracy and F1 (a miss
of its gold class, a false positive of neither), and it is left out of the AUC, which needs a score
(``n_scored`` says how many pairs the AUC used).
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Sequence

from .. import jsonl
from ..errors import DataError
from ..stats import precision_recall_f1
from ..types import JudgePair, Judgement

THRESHOLD = 0.5
POSITIVE = "supports"
NEGATIVE = "not_supports"

#: gold labels read as the positive class (lower-cased); NEGATIVE_LABELS as the negative one
POSITIVE_LABELS = frozenset({"supports", "support", "supported", "entailment", "true", "1", "yes"})
NEGATIVE_LABELS = frozenset(
    {
        "refutes", "refuted", "not_enough_info", "not enough info", "nei", "not_supports", "not_supported",
        "unsupported", "contradiction", "neutral", "false", "0", "no",
    }
)


def binary_label(label: Any) -> bool:
    """True when a gold label means "supports". Raises ValueError on a label it does not know."""
    if isinstance(label, bool):
        return label
    s = str(label).strip().lower()
    if s in POSITIVE_LABELS:
        return True
    if s in NEGATIVE_LABELS:
        return False
    raise ValueError(f"unknown label {label!r} (want supports / refutes / not_enough_info, or a binary label)")


# --------------------------------------------------------------------------- the maths


def roc_auc(scores: Sequence[float], positives: Sequence[bool]) -> tuple[float | None, str]:
    """Rank-based ROC AUC (= P(score of a random positive > that of a random negative), ties count 1/2).

    Returns (auc, "") or (None, reason) when a class is missing."""
    if len(scores) != len(positives):
        raise ValueError("scores and labels differ in length")
    n_pos = sum(1 for p in positives if p)
    n_neg = len(positives) - n_pos
    if n_pos == 0 or n_neg == 0:
        which = "supports" if n_pos == 0 else "not_supports"
        return None, f"undefined: no scored pair is {which} (only one class among {len(scores)} scored pairs)"
    order = sorted(range(len(scores)), key=lambda i: scores[i])
    ranks = [0.0] * len(scores)
    i = 0
    while i < len(order):  # average 1-based ranks over runs of tied scores
        j = i
        while j + 1 < len(order) and scores[order[j + 1]] == scores[order[i]]:
            j += 1
        avg = (i + j) / 2 + 1
        for k in range(i, j + 1):
            ranks[order[k]] = avg
        i = j + 1
    rank_sum = sum(r for r, p in zip(ranks, positives) if p)
    u = rank_sum - n_pos * (n_pos + 1) / 2
    return u / (n_pos * n_neg), ""


def score_judgements(
    gold_labels: Sequence[Any], judgements: Sequence[Judgement], threshold: float = THRESHOLD
) -> dict[str, Any]:
    """The figures for judgements of pairs whose gold labels are given (same order)."""
    if len(gold_labels) != len(judgements):
        raise ValueError("gold labels and judgements differ in length")
    gold = [binary_label(g) for g in gold_labels]
    # prediction: True (supports), False (not_supports), None (abstained: unparseable or failed)
    preds: list[bool | None] = [
        None if (j.probability is None or j.status != "ok") else j.probability >= threshold for j in judgements
    ]
    per_class: dict[str, Any] = {}
    recalls: list[float] = []
    for name, cls in ((POSITIVE, True), (NEGATIVE, False)):
        tp = sum(1 for g, p in zip(gold, preds) if g is cls and p is cls)
        fp = sum(1 for g, p in zip(gold, preds) if g is not cls and p is cls)
        fn = sum(1 for g, p in zip(gold, preds) if g is cls and p is not cls)
        per_class[name] = precision_recall_f1(tp, fp, fn)
        if tp + fn:
            recalls.append(tp / (tp + fn))
    n = len(judgements)
    label_counts: dict[str, int] = {}
    by_label: dict[str, dict[str, Any]] = {}
    for g, p in zip(gold_labels, preds):
        key = str(g).strip().lower() if not isinstance(g, bool) else (POSITIVE if g else NEGATIVE)
        label_counts[key] = label_counts.get(key, 0) + 1
        b = by_label.setdefault(key, {"n": 0, "predicted_supports": 0, "abstained": 0})
        b["n"] += 1
        b["predicted_supports"] += 1 if p is True else 0
        b["abstained"] += 1 if p is None else 0
    for b in by_label.values():
        b["predicted_supports_share"] = b["predicted_supports"] / b["n"]
    per_class["label_counts"] = dict(sorted(label_counts.items()))
    per_class["by_label"] = dict(sorted(by_label.items()))
    scored = [(j.probability, g) for j, g, p in zip(judgements, gold, preds) if p is not None]
    auc, note = roc_auc([s for s, _ in scored], [g for _, g in scored]) if scored else (None, "undefined: no pair was scored")
    correct = sum(1 for g, p in zip(gold, preds) if p is not None and p == g)
    return {
        "n": n,
        "n_scored": len(scored),
        "threshold": threshold,
        "balanced_accuracy": (sum(recalls) / 2) if len(recalls) == 2 else None,
        "balanced_accuracy_note": "" if len(recalls) == 2 else "undefined: the gold labels hold only one class",
        "accuracy": correct / n if n else None,
        "roc_auc": auc,
        "roc_auc_note": note or "unparseable and failed judgements are left out of the AUC",
        "per_class_f1": per_class,
        "unparseable": (sum(1 for j in judgements if j.status == "unparseable") / n) if n else 0.0,
        "failed": (sum(1 for j in judgements if j.status not in ("ok", "unparseable")) / n) if n else 0.0,
        "unparseable_policy": "counted wrong for accuracy and F1, left out of the AUC",
    }


# --------------------------------------------------------------------------- running a judge


def as_pair(item: Any) -> tuple[JudgePair, Any]:
    """A labelled item (a :class:`LabelledPair` or an (evidence, claim, label) triple) as (its judge pair, its label)."""
    if isinstance(item, LabelledPair):
        return JudgePair(item.evidence, item.claim), item.label
    evidence, claim, label = item
    return JudgePair(str(evidence), str(claim)), label


def evaluate_judge(
    judge: Any,
    pairs: Iterable[Any],
    limit: int | None = None,
    batch_size: int = 16,
    *,
    threshold: float = THRESHOLD,
    on_batch: Callable[[list[tuple[JudgePair, Any, Judgement]]], None] | None = None,
) -> dict[str, Any]:
    """Judge up to ``limit`` labelled pairs ((evidence, claim, label) tuples or :class:`LabelledPair`) in
    batches of ``batch_size`` and return the figures (see the module doc). ``on_batch`` is called after each
    batch with its (pair, gold label, judgement) triples: for progress bars and writing judgements as they come.
    ``pairs_per_second`` counts the time spent inside ``judge.judge`` only."""
    if batch_size < 1:
        raise ValueError("batch_size must be at least 1")
    golds: list[Any] = []
    judgements: list[Judgement] = []
    seconds = 0.0

    def run(batch: list[tuple[JudgePair, Any]]) -> None:
        nonlocal seconds
        t0 = time.perf_counter()
        out = judge.judge([p for p, _ in batch])
        seconds += time.perf_counter() - t0
        if len(out) != len(batch):
            raise RuntimeError(f"judge {judge.id} returned {len(out)} judgements for {len(batch)} pairs")
        golds.extend(g for _, g in batch)
        judgements.extend(out)
        if on_batch is not None:
            on_batch([(p, g, j) for (p, g), j in zip(batch, out)])

    batch: list[tuple[JudgePair, Any]] = []
    for k, item in enumerate(pairs):
        if limit is not None and k >= limit:
            break
        pair, label = as_pair(item)
        binary_label(label)  # an unknown label fails before the judge spends time on it
        batch.append((pair, label))
        if len(batch) == batch_size:
            run(batch)
            batch = []
    if batch:
        run(batch)
    figures = score_judgements(golds, judgements, threshold)
    figures["judge"] = judge.id
    figures["seconds"] = round(seconds, 3)
    figures["pairs_per_second"] = (len(judgements) / seconds) if seconds > 0 else None
    figures["batch_size"] = batch_size
    return figures


# --------------------------------------------------------------------------- data


@dataclass(frozen=True)
class LabelledPair:
    evidence: str
    claim: str
    label: str
    id: str = ""


@dataclass
class PairFile:
    """Pairs read from a JSONL file, and the lines that could not be read (1-based number, reason)."""

    path: Path
    pairs: list[LabelledPair] = field(default_factory=list)
    bad_lines: list[tuple[int, str]] = field(default_factory=list)

    def __iter__(self) -> Iterator[LabelledPair]:
        return iter(self.pairs)

    def __len__(self) -> int:
        return len(self.pairs)


def _check_record(d: dict[str, Any]) -> LabelledPair:
    missing = [k for k in ("evidence", "claim", "label") if k not in d]
    if missing:
        raise ValueError(f"missing {', '.join(missing)}")
    for k in ("evidence", "claim"):
        if not isinstance(d[k], str) or not d[k].strip():
            raise ValueError(f"{k} must be a non-empty string")
    binary_label(d["label"])
    label = d["label"] if isinstance(d["label"], str) else str(d["label"]).lower()
    return LabelledPair(d["evidence"], d["claim"], label, str(d.get("id", "")))


def load_pairs(path: str | Path, limit: int | None = None) -> PairFile:
    """Read labelled pairs from a JSONL file with ``evidence``, ``claim`` and ``label`` on each line (VitaminC's
    form; other fields are ignored), or from a folder holding ``dev.jsonl``. Reading stops after ``limit`` good
    pairs. A bad line (not UTF-8, not JSON, a field missing or empty, an unknown label) is skipped and recorded
    with its line number in ``bad_lines``; blank lines are ignored."""
    p = Path(path).expanduser()
    if p.is_dir():
        candidates = [p / "dev.jsonl"] + sorted(p.glob("*.jsonl"))
        found = next((c for c in candidates if c.is_file()), None)
        if found is None:
            raise DataError(f"no .jsonl file of labelled pairs in {p}")
        p = found
    if not p.is_file():
        raise DataError(f"labelled pairs file not found: {p}")
    out = PairFile(p)
    unreadable = jsonl.ReadStats()
    lines = jsonl.read_numbered(
        p, policy="collect", torn="read", stats=unreadable,
        json_reason="not JSON ({msg} at column {column})", object_reason="not a JSON object",
    )  # fmt: skip
    bad: list[tuple[int, str]] = []
    for number, d in lines if limit is None or limit > 0 else ():
        try:
            out.pairs.append(_check_record(d))
        except ValueError as e:
            bad.append((number, str(e)))
        if limit is not None and len(out.pairs) >= limit:
            break  # lines after the last pair wanted are not read, so their problems are not reported
    out.bad_lines = sorted([(b.line, b.reason) for b in unreadable.bad] + bad)
    if not out.pairs:
        raise DataError(f"{p} holds no readable labelled pair ({len(out.bad_lines)} bad lines)")
    return out


def load_vitaminc(split: str = "dev", limit: int | None = None, root: str | Path | None = None) -> PairFile:
    """The VitaminC pairs that come with the shared data (``<shared data>/vitaminc/<split>.jsonl``)."""
    from ..paths import shared_data_dir

    base = Path(root) if root is not None else shared_data_dir() / "vitaminc"  # type: ignore[operator]
    return load_pairs(base / f"{split}.jsonl", limit)


# --------------------------------------------------------------------------- a whole evaluation run


def write_results(out_dir: str | Path, figures: dict[str, Any]) -> Path:
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    path = out / "results.json"
    jsonl.write_json_atomic(path, figures)
    return path


def run_judge_eval(
    judge: Any,
    data: str | Path,
    out_dir: str | Path,
    limit: int | None = None,
    batch_size: int = 16,
    *,
    progress: Callable[[int], None] | None = None,
    resamples: int = 1000,
    seed: int = 0,
    pairs: Any | None = None,
) -> dict[str, Any]:
    """Evaluate ``judge`` on the pairs in ``data`` (``pairs``: what ``load_pairs(data, limit)`` returned, when the
    caller has read them already); write ``results.json`` and ``judgements.jsonl`` (one line per
    pair: id, gold label, the judgement) into ``out_dir``. ``progress`` receives the number of pairs just done.

    Besides the figures (module doc), results.json records what was measured (``kind`` "judge-eval",
    ``vericite_version``, ``created``, ``config``, ``data`` and its ``data_sha256``, the judge's id, kind, version
    and options, and ``model``: its model's identity with sha256, null for a judge without a model), bootstrap
    95 % CIs over pairs (``ci``, ``resamples`` and ``seed``), the ``confusion`` counts, and ``data_fit``: how many pairs the judge cannot judge
    by its nature, and why (the triple judge reads only "property: value" claims), which explains an
    ``unparseable`` share. A three-way judge on three-way gold labels adds ``three_way`` (``judges/meta_three.py``):
    three-class balanced accuracy, per-class F1 and confusion counts, each with its CI."""
    from .. import __version__
    from ..paths import file_sha256
    from ..stats import DEFAULT_LEVEL
    from .meta_figures import confusion, data_fit, figure_cis, judge_identity
    from .meta_three import three_way_figures

    if pairs is None:
        pairs = load_pairs(data, limit)
    data_sha256 = file_sha256(pairs.path)  # the bytes judged: two paths of one file compare alike (compare_judges)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    ids = iter(pairs.pairs)
    golds: list[Any] = []
    judged: list[Judgement] = []
    with (out / "judgements.jsonl").open("w", encoding="utf-8") as jf:

        def on_batch(rows: list[tuple[JudgePair, Any, Judgement]]) -> None:
            for _pair, gold, j in rows:
                src = next(ids)
                jf.write(json.dumps({"id": src.id, "gold": gold, **j.to_dict()}, ensure_ascii=False) + "\n")
                golds.append(gold)
                judged.append(j)
            jf.flush()
            if progress is not None:
                progress(len(rows))

        figures = evaluate_judge(judge, pairs.pairs, limit, batch_size, on_batch=on_batch)
    prompt_version = getattr(judge, "prompt_version", None)
    identity = judge_identity(judge)
    results: dict[str, Any] = {
        "kind": "judge-eval",
        "vericite_version": __version__,
        "created": time.strftime("%Y-%m-%dT%H:%M:%S"),
        "config": {"judge": identity["judge"], "data": str(pairs.path), "limit": limit, "batch_size": batch_size,
                   "threshold": figures["threshold"], "resamples": resamples, "seed": seed},
        "seed": seed,
        **identity,
    }
    results.update(figures)
    results.update(
        {
            "ci": figure_cis(golds, judged, figures["threshold"], resamples=resamples, seed=seed),
            "ci_level": DEFAULT_LEVEL,
            "resamples": resamples,
            "confusion": confusion(golds, judged, figures["threshold"]),
            "data_fit": data_fit(judge, pairs.pairs),
            "data": str(pairs.path),
            "data_sha256": data_sha256,
            "limit": limit,
            "bad_lines": len(pairs.bad_lines),
            "bad_line_examples": [{"line": n, "reason": r} for n, r in pairs.bad_lines[:20]],
        }
    )
    three = three_way_figures(judge, golds, judged, resamples=resamples, seed=seed)
    if three is not None:
        results["three_way"] = three
    if prompt_version:
        results["prompt_version"] = prompt_version
    write_results(out, results)
    return results
