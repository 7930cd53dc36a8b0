"""The agreement statistics of bench/conner_agreement.py, checked by hand."""

from __future__ import annotations

import pytest

from vericite.bench.conner_agreement import _floats, ranks, somers_d, spearman


def test_ranks_share_ties():
    assert list(ranks([3, 1, 3, 2])) == [3.5, 1.0, 3.5, 2.0]


def test_spearman():
    assert spearman([1, 2, 3, 4], [10, 20, 30, 40]) == pytest.approx(1.0)
    assert spearman([1, 2, 3, 4], [4, 3, 2, 1]) == pytest.approx(-1.0)
    assert spearman([1, 1, 1], [1, 2, 3]) is None and spearman([1, 2], [1, 2]) is None


def test_somers_d_of_y_given_x():
    # pairs untied on x: (1,2) concordant, (1,3) concordant, (2,3) tied on y -> (2 - 0) / 3
    assert somers_d([1, 2, 3], [1, 2, 2]) == pytest.approx(2 / 3)
    assert somers_d([1, 1], [1, 2]) is None


def test_floats_reads_lines_and_a_json_list_with_nan():
    assert _floats("0.5\n0.25\n") == [0.5, 0.25]
    got = _floats("[1.0, NaN, 2.5]\n3.0\t1.0")
    assert got[0] == 1.0 and got[1] != got[1] and got[2] == 2.5
