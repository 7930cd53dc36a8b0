"""The bootstrap CIs of bench/conner_agreement.py's statistics (issue 14, part 4): paired resampling of items,
seeded, recorded; the resampled statistics are those of the drawn sample itself."""

from __future__ import annotations

import json

import numpy as np
import pytest

from vericite.bench.conner_agreement import agreement, alce_utility, conner_nq, main, somers_d, spearman
from vericite.fakes.scoring import FakePairScorer
from vericite.models.fake import FakeBackend
from vericite.stats import resample_weights, somers_d_of, spearman_of


def test_perfectly_concordant_data_has_the_ci_1_1_and_records_n_and_the_bootstrap():
    x = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]
    y = [10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0]
    for name in ("spearman", "somers_d"):
        out = agreement(name, x, y, resamples=200, seed=3)
        assert out[name] == pytest.approx(1.0) and out["ci95"] == [pytest.approx(1.0), pytest.approx(1.0)] and out["n"] == 8
        assert out["bootstrap"]["resamples"] == 200 and out["bootstrap"]["seed"] == 3 and out["bootstrap"]["level"] == 0.95
        rev = agreement(name, x, y[::-1], resamples=200, seed=3)
        assert rev["ci95"] == [pytest.approx(-1.0), pytest.approx(-1.0)]


def test_the_ci_is_seeded_and_holds_the_point_estimate():
    rng = np.random.default_rng(7)
    x = rng.normal(size=40)
    y = x + rng.normal(size=40)
    u = rng.integers(1, 6, size=40).astype(float)  # ratings, with ties
    for name, b in (("spearman", y), ("somers_d", u)):
        one, two = agreement(name, list(x), list(b), seed=1), agreement(name, list(x), list(b), seed=1)
        assert one == two and one["bootstrap"]["resamples"] == 1000
        lo, hi = one["ci95"]
        assert lo < one[name] < hi
        assert agreement(name, list(x), list(b), seed=2)["ci95"] != one["ci95"]


def _mean_ranks(v):
    """Plain average ranks (ties share their mean rank): the oracle's, written apart from stats.py's."""
    order = sorted(range(len(v)), key=lambda i: v[i])
    out = [0.0] * len(v)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and v[order[j + 1]] == v[order[i]]:
            j += 1
        for k in order[i : j + 1]:
            out[k] = (i + j) / 2 + 1
        i = j + 1
    return np.array(out)


def _spearman_oracle(x, y):
    if len(x) < 3:
        return None
    rx, ry = _mean_ranks(list(x)), _mean_ranks(list(y))
    return None if rx.std() == 0 or ry.std() == 0 else float(np.corrcoef(rx, ry)[0, 1])


def _somers_d_oracle(x, y):
    pairs = [(i, j) for i in range(len(x)) for j in range(i + 1, len(x)) if x[i] != x[j]]
    if not pairs:
        return None
    return sum(np.sign(x[i] - x[j]) * np.sign(y[i] - y[j]) for i, j in pairs) / len(pairs)


def test_a_resampled_statistic_is_the_statistic_of_the_drawn_sample_itself():
    """Paired: item i drawn k times is its pair (x_i, y_i) k times; ties (copies, ratings) share their mean rank.
    Checked against plain pairwise and rank computations of the expanded samples for the weights the bootstrap
    draws, the point functions on the corpus, and one hand case."""
    rng = np.random.default_rng(11)
    x = np.round(rng.normal(size=12), 1)
    y = rng.integers(1, 4, size=12).astype(float)
    for w in resample_weights(12, resamples=50, seed=5):
        got_s, got_d = spearman_of(x, y)(w), somers_d_of(x, y)(w)
        for b, row in enumerate(w):
            idx = np.repeat(np.arange(12), row.astype(int))
            want_s, want_d = _spearman_oracle(x[idx], y[idx]), _somers_d_oracle(x[idx], y[idx])
            assert (np.isnan(got_s[b]) if want_s is None else got_s[b] == pytest.approx(want_s))
            assert (np.isnan(got_d[b]) if want_d is None else got_d[b] == pytest.approx(want_d))
    assert spearman(list(x), list(y)) == pytest.approx(_spearman_oracle(x, y))
    assert somers_d(list(x), list(y)) == pytest.approx(_somers_d_oracle(x, y))
    # by hand: items (1,1), (2,2), (3,1) drawn 2, 1, 0 times: pairs untied on x are the two (1,1)-(2,2), both concordant
    assert somers_d_of([1, 2, 3], [1, 2, 1])(np.array([[2.0, 1.0, 0.0]]))[0] == pytest.approx(1.0)
    assert np.isnan(somers_d_of([1, 2, 3], [1, 2, 1])(np.array([[3.0, 0.0, 0.0]]))[0])  # one item thrice: no pair
    assert np.isnan(spearman_of([1, 2, 3], [1, 2, 1])(np.array([[0.0, 3.0, 0.0]]))[0])  # a constant side


def test_an_undefined_statistic_has_no_ci():
    out = agreement("spearman", [1.0, 1.0, 1.0], [1.0, 2.0, 3.0])
    assert out["spearman"] is None and out["ci95"] == [None, None] and out["n"] == 3
    assert agreement("somers_d", [], [])["ci95"] == [None, None]


def test_every_statistic_of_the_benchmark_has_n_and_a_ci(tmp_path, monkeypatch):
    from .test_conner_agreement import _nq_folder

    d = _nq_folder(tmp_path / "nq", "t", n=6)
    (d / "nq_ref").write_text("".join(f"Passage {i} says {'much ' * i}here. It ends.\n" for i in range(6)), encoding="utf-8")
    out = conner_nq(FakePairScorer(), FakeBackend(), None, data_path=d, resamples=100, seed=4)
    for k in ("relevance", "sentence_perplexity", "coherence_sentence"):
        assert {"spearman", "n", "ci95", "bootstrap"} <= set(out[k]) and out[k]["bootstrap"]["resamples"] == 100
        lo, hi = out[k]["ci95"]
        assert -1 <= lo <= hi <= 1 and out[k]["spearman"] is not None  # (a percentile interval of 6 need not hold it)
    # the command records its --resamples and --seed
    monkeypatch.setattr("vericite.registry.create", lambda kind, name: FakePairScorer())
    res = tmp_path / "out.json"
    assert main(["--data-path", str(d), "--skip-alce", "--resamples", "50", "--seed", "9", "--out", str(res)]) == 0
    rel = json.loads(res.read_text())["conner_nq_reference"]["relevance"]
    assert rel["bootstrap"]["resamples"] == 50 and rel["bootstrap"]["seed"] == 9 and rel["ci95"][0] is not None


def test_alce_somers_d_have_n_and_a_ci(tmp_path, monkeypatch):
    rated = {"asqa": {"sys": {str(i): {"question": f"q{i}", "output": f"Answer {i} is {'long ' * i}here. Yes.", "utility_score": 1 + i % 5} for i in range(10)}}}
    f = tmp_path / "data" / "alce" / "human_eval" / "human_eval_utility_completed.json"
    f.parent.mkdir(parents=True)
    f.write_text(json.dumps(rated), encoding="utf-8")
    monkeypatch.setenv("VERICITE_DATA", str(tmp_path / "data"))
    out = alce_utility(LengthScorer(), FakeBackend(), None, resamples=100, seed=2)
    for k in ("relevance", "coherence_sentence", "informativeness"):
        assert out[k]["n"] == 10 and out[k]["bootstrap"]["resamples"] == 100
        lo, hi = out[k]["ci95"]
        assert -1 <= lo <= hi <= 1 and out[k]["somers_d"] is not None


class LengthScorer(FakePairScorer):
    """A relevance logit that grows with the text's length (the fake's word overlap is 0 for these pairs)."""

    def score(self, pairs):
        return [len(text) / 20 - 2 for _, text in pairs]
