"""Corpus statistics and percentile bootstrap confidence intervals, for metrics and judge meta-evaluation alike.

A statistic is computed once per corpus from small per-item records; the bootstrap resamples *items* (answers,
judged pairs), the unit that is independent, and recomputes the statistic exactly as the point estimate does:
the ratio of sums for micro metrics, the mean of per-item ratios for macro metrics. ``metrics/base.py`` builds
metric results on these; ``judges/meta_figures.py`` the CIs of a judge's figures.
"""

from __future__ import annotations

import math
from typing import Callable, Collection, Iterator, Mapping, Sequence

import numpy as np

DEFAULT_RESAMPLES = 1000
DEFAULT_SEED = 0
DEFAULT_LEVEL = 0.95


# A statistic maps a weight matrix W (samples x items; W[b, i] = how often item i was drawn in bootstrap sample b,
# the original corpus being a row of ones) to one value per row; NaN where it is undefined for that sample
# (no citation drawn, say). Weights rather than index lists make every micro and macro statistic a
# matrix-vector product, so all of a corpus's metrics cost milliseconds. A statistic touches W only through
# ``W @ vector`` (metrics/paired.py's per-item values rely on it).
Statistic = Callable[[np.ndarray], np.ndarray]


def ratio_of_sums(num: Sequence[float] | np.ndarray, den: Sequence[float] | np.ndarray) -> Statistic:
    """sum(num) / sum(den) over the drawn items. Micro metrics pass counts (correct, citations); macro
    metrics pass per-item ratios and a 0/1 "counts" mask, which makes them the mean of the drawn ratios."""
    num_a = np.asarray(num, dtype=float)
    den_a = np.asarray(den, dtype=float)

    def stat(w: np.ndarray) -> np.ndarray:
        d = w @ den_a
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(d > 0, (w @ num_a) / np.where(d > 0, d, 1.0), np.nan)

    return stat


def harmonic(p: np.ndarray, r: np.ndarray) -> np.ndarray:
    """F1 of matching precision and recall arrays; 0 where both are 0, NaN where either is NaN."""
    p = np.asarray(p, dtype=float)
    r = np.asarray(r, dtype=float)
    s = p + r
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(s > 0, 2 * p * r / np.where(s > 0, s, 1.0), np.where(np.isnan(s), np.nan, 0.0))


def f1_of(precision: Statistic, recall: Statistic) -> Statistic:
    """F1 recomputed from precision and recall on each bootstrap sample."""

    def stat(w: np.ndarray) -> np.ndarray:
        return harmonic(precision(w), recall(w))

    return stat


def f1_of_counts(tp: Sequence[float] | np.ndarray, fp: Sequence[float] | np.ndarray, fn: Sequence[float] | np.ndarray) -> Statistic:
    """One class's F1 from per-item 0/1 counts (true positive, false positive, false negative) on each bootstrap
    sample, as :func:`precision_recall_f1` computes the point figure: 2tp / (2tp + fp + fn), so 0 when the class was
    drawn but never predicted (or predicted but never drawn), NaN only when all three counts are 0. (``f1_of``
    leaves a sample where precision or recall is undefined out, where the point figure says 0.)"""
    a, b, c = (np.asarray(v, dtype=float) for v in (tp, fp, fn))

    def stat(w: np.ndarray) -> np.ndarray:
        t = w @ a
        d = 2 * t + w @ b + w @ c
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(d > 0, 2 * t / np.where(d > 0, d, 1.0), np.nan)

    return stat


def _drawn_ranks(w: np.ndarray, x: np.ndarray) -> np.ndarray:
    """Each item's average rank among the items each row of ``w`` drew (its copies tie with one another)."""
    below = (x[:, None] < x[None, :]).astype(float)  # below[j, i]: item j ranks under item i
    tied = (x[:, None] == x[None, :]).astype(float)
    return w @ below + (w @ tied + 1.0) / 2.0


def spearman_of(x: Sequence[float] | np.ndarray, y: Sequence[float] | np.ndarray) -> Statistic:
    """Spearman's rank correlation of paired values over the drawn items (a pair drawn k times counts k times,
    ties share their mean rank), as the correlation of the ranks of the drawn sample itself: on the corpus it is
    the plain Spearman. NaN where a side is constant in the sample or fewer than 3 items are drawn. A rank
    statistic reads W beyond ``W @ vector``: it is for :func:`bootstrap_cis`, not metrics/paired.py."""
    xa, ya = np.asarray(x, dtype=float), np.asarray(y, dtype=float)

    def stat(w: np.ndarray) -> np.ndarray:
        n = w.sum(axis=1)
        rx, ry = _drawn_ranks(w, xa), _drawn_ranks(w, ya)
        dx = rx - ((w * rx).sum(axis=1) / n)[:, None]
        dy = ry - ((w * ry).sum(axis=1) / n)[:, None]
        vx, vy = (w * dx * dx).sum(axis=1), (w * dy * dy).sum(axis=1)
        ok = (n >= 3) & (vx > 1e-9) & (vy > 1e-9)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(ok, (w * dx * dy).sum(axis=1) / np.sqrt(np.where(ok, vx * vy, 1.0)), np.nan)

    return stat


def somers_d_of(x: Sequence[float] | np.ndarray, y: Sequence[float] | np.ndarray) -> Statistic:
    """Somers' D of y given x over the drawn items: (concordant - discordant) / pairs not tied on x, counting the
    pairs of the drawn sample itself (two copies of one item tie on x: they are no pair). NaN where no pair is
    untied on x. Reads W beyond ``W @ vector`` (as :func:`spearman_of`)."""
    xa, ya = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    sx = np.sign(xa[:, None] - xa[None, :])
    concordance = sx * np.sign(ya[:, None] - ya[None, :])
    untied = np.abs(sx)

    def stat(w: np.ndarray) -> np.ndarray:
        num = ((w @ concordance) * w).sum(axis=1)
        den = ((w @ untied) * w).sum(axis=1)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan)

    return stat


def precision_recall_f1(tp: int, fp: int, fn: int) -> dict[str, float | int | None]:
    """One class's precision, recall, F1 and support (tp + fn) from its counts: precision null when the class was
    never predicted (tp + fp = 0), recall null when it never occurs (tp + fn = 0); F1 then 0.0 when the other
    count is not empty (a class missed or only said wrongly), null when all three counts are 0. The binary and the
    three-way judge-eval figures share it (``judges/meta.py``, ``judges/meta_three.py``)."""
    precision = tp / (tp + fp) if tp + fp else None
    recall = tp / (tp + fn) if tp + fn else None
    if precision is None or recall is None:
        f1 = None if (tp + fp + fn) == 0 else 0.0
    else:
        f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {"precision": precision, "recall": recall, "f1": f1, "support": tp + fn}


def point(statistic: Statistic, n_items: int) -> float | None:
    """The statistic on the corpus itself (every item once); None where undefined."""
    v = float(statistic(np.ones((1, n_items)))[0])
    return None if np.isnan(v) else v


def resample_weights(n_items: int, *, resamples: int, seed: int, max_cells: int = 4_000_000) -> Iterator[np.ndarray]:
    """The bootstrap samples of ``n_items`` items as weight matrices (see :data:`Statistic`), in blocks of at most
    ``max_cells`` weights, drawn with ``numpy.random.default_rng(seed)``: the same seed gives the same samples to
    :func:`bootstrap_cis` and to the paired comparison of two runs (metrics/paired.py)."""
    if n_items <= 0 or resamples <= 0:
        return
    rng = np.random.default_rng(seed)
    probs = np.full(n_items, 1.0 / n_items)
    block = max(1, min(resamples, max_cells // n_items))
    done = 0
    while done < resamples:
        rows = min(block, resamples - done)
        yield rng.multinomial(n_items, probs, size=rows).astype(float)
        done += rows


def bootstrap_cis(
    statistics: Mapping[str, Statistic],
    n_items: int,
    *,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
    level: float = DEFAULT_LEVEL,
    max_cells: int = 4_000_000,
    counts: Collection[str] = (),
) -> dict[str, tuple[float | None, float | None]]:
    """Percentile bootstrap intervals of several statistics over the same resamples of items.

    Every statistic sees the same samples (drawn with ``numpy.random.default_rng(seed)``), so the intervals of
    one evaluation are consistent and the same seed reproduces them. Samples are drawn in blocks of at most
    ``max_cells`` weights, so memory stays flat however large the corpus. Samples where a statistic is undefined
    are left out of its interval; (None, None) when none is defined or there are no items. The statistics named
    in ``counts`` are whole numbers (a confusion count): their interval is of values drawn, the lower bound the
    nearest drawn value at or below the lower percentile and the upper at or above the upper one (numpy's
    ``lower`` / ``higher`` quantiles), as ints, where the interpolated percentiles would be fractions."""
    empty: tuple[float | None, float | None] = (None, None)
    if n_items <= 0 or resamples <= 0:
        return {k: empty for k in statistics}
    values: dict[str, list[np.ndarray]] = {k: [] for k in statistics}
    for w in resample_weights(n_items, resamples=resamples, seed=seed, max_cells=max_cells):
        for k, stat in statistics.items():
            values[k].append(stat(w))
    alpha = (1.0 - level) / 2.0
    out: dict[str, tuple[float | None, float | None]] = {}
    for k, parts in values.items():
        v = np.concatenate(parts)
        v = v[~np.isnan(v)]
        if v.size == 0:
            out[k] = empty
        elif k in counts:
            lo, hi = np.quantile(v, alpha, method="lower"), np.quantile(v, 1.0 - alpha, method="higher")
            out[k] = (int(round(float(lo))), int(round(float(hi))))
        else:
            lo, hi = np.quantile(v, [alpha, 1.0 - alpha])
            out[k] = (float(lo), float(hi))
    return out


# The small numeric helpers on lists of floats, one of each for every floor above (judges' log-mass, the OpenAI wire's
# log-probabilities, ALCE's QA spans, the BioKaLMA builder's weights).


def logsumexp(values: Sequence[float]) -> float:
    """log(sum(exp(v))), computed stably; -inf for no values or only -inf ones."""
    m = max(values, default=-math.inf)
    if m == -math.inf:
        return m
    return m + math.log(sum(math.exp(v - m) for v in values))


def softmax(values: Sequence[float]) -> list[float]:
    """exp(v) / sum(exp(v)) for each value, computed stably; [] for no values."""
    if not values:
        return []
    m = max(values)
    exps = [math.exp(v - m) for v in values]
    total = sum(exps)
    return [e / total for e in exps]
