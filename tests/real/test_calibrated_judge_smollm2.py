"""The calibrated three-way judge (``llm3c:``) on the real embedded SmolLM2-135M through llama.cpp: its prior is the
mean of the uncalibrated judge's label probabilities on the content-free pairs, and every pair's calibrated scores
are its uncalibrated ones divided by that prior (slow; runs in CI, where it never skips)."""

from __future__ import annotations

import json

import pytest

from vericite.judges import load_judge
from vericite.judges.calibrated import CONTENT_FREE, CalibratedLLM3Judge, calibrate
from vericite.judges.three_way import LABELS, LLM3Judge
from vericite.types import JudgePair

from tests.support.guards import require_smollm2

pytestmark = pytest.mark.slow

PAIRS = [
    JudgePair("Rome is the capital city of Italy.", "Rome is the capital of Italy."),
    JudgePair("The bridge was opened to traffic in 1932 after six years of work.", "The bridge opened in 1975."),
]


def test_llm3c_on_smollm2_divides_out_the_content_free_prior():
    require_smollm2()
    judge = load_judge("llm3c:smollm2-135m", threads=1, cache=False)
    assert isinstance(judge, CalibratedLLM3Judge) and judge.id == "llm3c:smollm2-135m@1"
    out = judge.judge(PAIRS)
    assert [j.status for j in out] == ["ok", "ok"]
    prior = judge.content_free_prior()
    assert sum(prior.values()) == pytest.approx(1.0) and all(v > 0 for v in prior.values())
    # the prior is the uncalibrated judge's mean on the content-free pairs, asked of the same model
    plain = LLM3Judge(judge.backend).judge([JudgePair(x, x) for x in CONTENT_FREE])
    assert prior == pytest.approx({k: sum(j.scores[k] for j in plain) / 3 for k in LABELS}, abs=1e-4)
    for j in out:
        raw = json.loads(j.raw)
        assert j.scores == pytest.approx(calibrate(raw["uncalibrated"], prior), abs=1e-4)
        assert raw["content_free_prior"] == pytest.approx(prior, abs=1e-6) and j.label == max(LABELS, key=j.scores.get)
