"""Contract of Experiment: levels, samples per level, nothing changed in place, the same draw every time."""

from __future__ import annotations

import copy
import json

import pytest

from vericite.protocols import Experiment
from vericite.types import Sample

from .impls import experiment_samples, params


@pytest.fixture(params=params("experiments"))
def experiment(request, tmp_path):
    return request.param.build(tmp_path)


def test_declares_its_levels(experiment):
    assert isinstance(experiment, Experiment) and experiment.name and experiment.x_label
    assert isinstance(experiment.levels, tuple) and len(experiment.levels) >= 2
    assert isinstance(experiment.section, str)
    shown = experiment.presentation()  # results.json's experiments entry carries it beside the rows
    assert isinstance(shown, dict) and json.loads(json.dumps(shown)) == shown


def test_each_level_says_what_it_left_out(experiment):
    samples = experiment_samples()
    for level in experiment.levels:
        out = experiment.samples_at(samples, level, seed=0)
        assert isinstance(out.n_skipped, int) and out.n_skipped >= 0 and isinstance(out.skip_reason, str)
        assert len(out) + out.n_skipped <= len(samples)
        assert (out.n_skipped == 0) or out.skip_reason  # a level that leaves samples out says why


def test_samples_of_each_level_leave_the_input_alone(experiment):
    samples = experiment_samples()
    before = copy.deepcopy([s.to_dict() for s in samples])
    for level in experiment.levels:
        out = experiment.samples_at(samples, level, seed=0)
        assert out and all(isinstance(s, Sample) for s in out)
        assert {s.id for s in out} <= {s.id for s in samples}
        assert [s.to_dict() for s in experiment.samples_at(samples, level, seed=0)] == [s.to_dict() for s in out]
        assert not any(o is s for o in out for s in samples)
    assert [s.to_dict() for s in samples] == before
    first = [s.to_dict() for s in experiment.samples_at(samples, experiment.levels[0], seed=0, levels=experiment.levels)]
    assert first == [s.to_dict() for s in experiment.samples_at(samples, experiment.levels[0], seed=0)]
