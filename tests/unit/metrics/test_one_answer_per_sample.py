"""Every metric family refuses unequal samples and answers in one line (metrics/base.check_one_answer_per_sample)."""

from __future__ import annotations

import pytest

from vericite.errors import VericiteError
from vericite.metrics.base import check_one_answer_per_sample
from vericite.metrics.conner import ConnerMetric


def test_unequal_lengths_are_one_error():
    check_one_answer_per_sample([1, 2], ["a", "b"])
    with pytest.raises(VericiteError, match="2 samples but 1 answers: a metric scores one answer per sample"):
        check_one_answer_per_sample([1, 2], ["a"])


def test_a_family_checks_before_it_scores():
    with pytest.raises(VericiteError, match="1 samples but 0 answers"):
        ConnerMetric().score_answers([object()], [])
