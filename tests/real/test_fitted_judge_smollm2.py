"""The fitted three-way judge (``llm3f:``) on the real embedded SmolLM2-135M through llama.cpp: ``vericite train
llm3f``'s fit on a few hand-written pairs records the model file's sha256 and biases that lower the fit pairs'
class-balanced log loss, and the judge built from the file gives llm3's probabilities times exp(bias),
renormalised (slow; runs in CI, where it never skips)."""

from __future__ import annotations

import json

import pytest

from vericite.judges import load_judge
from vericite.judges.fit_bias import fit_on_pairs
from vericite.judges.fitted import FittedLLM3Judge, apply_bias
from vericite.judges.three_way import LABELS
from vericite.models import load_model
from vericite.types import JudgePair

from tests.support.guards import require_smollm2

pytestmark = pytest.mark.slow

PAIRS = [
    ("Rome is the capital city of Italy.", "Rome is the capital of Italy.", "supports"),
    ("The bridge was opened to traffic in 1932 after six years of work.", "The bridge opened in 1975.", "refutes"),
    ("The novel was published in London in 1851.", "The author owned a farm in Ohio.", "not_enough_info"),
    ("Water boils at 100 degrees Celsius at sea level.", "At sea level water boils at 100 C.", "supports"),
    ("The team won the cup three times, in 1990, 1994 and 2002.", "The team never won the cup.", "refutes"),
    ("She studied chemistry at Oxford.", "She speaks four languages.", "not_enough_info"),
]


def test_llm3f_on_smollm2_fits_biases_and_applies_them(tmp_path):
    require_smollm2()
    data = tmp_path / "pairs.jsonl"
    data.write_text("".join(json.dumps({"evidence": e, "claim": c, "label": g}) + "\n" for e, c, g in PAIRS), encoding="utf-8")
    backend = load_model("smollm2-135m", threads=1, cache=False)
    rec = fit_on_pairs(backend, data, skip=0, limit=len(PAIRS))
    assert rec["model"]["name"] == "smollm2-135m" and len(rec["model"]["sha256"] or "") == 64
    assert rec["pairs"]["used"] == len(PAIRS) and rec["bias"]["supports"] == 0.0
    assert rec["after"]["balanced_log_loss"] <= rec["before"]["balanced_log_loss"]
    fit = tmp_path / "fit.json"
    fit.write_text(json.dumps(rec), encoding="utf-8")
    judge = load_judge(f"llm3f:{fit}", threads=1, cache=False)
    assert isinstance(judge, FittedLLM3Judge) and judge.id.startswith("llm3f:smollm2-135m:")
    out = judge.judge([JudgePair(e, c) for e, c, _ in PAIRS[:2]])
    for j in out:
        raw = json.loads(j.raw)
        assert j.status == "ok" and raw["bias"] == rec["bias"]
        assert j.scores == pytest.approx(apply_bias(raw["uncalibrated"], rec["bias"]), abs=1e-4)
        assert j.label == max(LABELS, key=j.scores.get)
