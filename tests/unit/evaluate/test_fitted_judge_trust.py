"""`vericite evaluate` with a fitted judge (``llm3f:``): the measurement judges/measured.json registers for its fit
file reaches results.json and the printed summary as the other judges' do; a fit with another sha256 is "accuracy
not measured". The judge is the real FittedLLM3Judge over the fake model, given the shipped fit's sha256."""

from __future__ import annotations

import json
import math

import pytest

from tests.unit.judges.test_trust import FIT_ID, FIT_SHA
from vericite.cli.evaluate import summary_lines
from vericite.evaluate import EvaluateConfig, evaluate_items, read_answers
from vericite.evaluate.inputs import load_task
from vericite.judges.fitted import FittedLLM3Judge
from vericite.types import ModelIdentity

KNOWLEDGE = [{"subject": "Q1", "subject_label": "Ann", "property": "place of birth", "value": "Rome"}]


@pytest.fixture()
def items(tmp_path):
    rec = {"id": "a", "question": "Where was Ann born?", "answer": "Ann was born in Rome [Q1, place of birth: Rome].", "knowledge": KNOWLEDGE}
    f = tmp_path / "in.jsonl"
    f.write_text(json.dumps(rec) + "\n", encoding="utf-8")
    return lambda: read_answers(f, load_task("kalma")).items


class Scorer:
    """A next-token scorer under the shipped fit's model name: every pair leans to Supports."""

    def identity(self) -> ModelIdentity:
        return ModelIdentity(name="qwen2.5-coder-1.5b", backend="test", model="q.gguf", sha256="a" * 64)

    def next_token_logprobs(self, prompts, candidates):
        return [{w: math.log(p) for w, p in (("Supports", 0.6), ("Refutes", 0.2), ("Neutral", 0.2)) if w in candidates} for _ in prompts]


def fitted(sha256: str) -> FittedLLM3Judge:
    backend = Scorer()
    fit = {"model": backend.identity().to_dict(), "bias": {"supports": 0.0, "refutes": -0.5, "not_enough_info": -1.0}}
    return FittedLLM3Judge(backend, fit, sha256, path="fit.json")


def test_the_measured_fit_is_shown_as_measured(items):
    judge = fitted(FIT_SHA)
    assert judge.id == FIT_ID
    body, _ = evaluate_items(items(), EvaluateConfig(resamples=0, cache=False), judge=judge)
    j = body["judges"]["alignment"]
    assert j["id"] == FIT_ID and j["calibration"]["fit_sha256"] == FIT_SHA
    assert j["measured"] is not None and j["measured"]["fit_sha256"] == FIT_SHA and j["measured"]["three_way"]["balanced_accuracy"] == 0.552
    line = next(x for x in summary_lines(body) if x.startswith("judge for alignment:"))
    assert "three-way balanced accuracy 0.552 [0.502, 0.599]" in line and "not measured" not in line


def test_another_fit_with_the_same_id_is_not_measured(items):
    judge = fitted(FIT_SHA[:12] + "f" * 52)  # the same first 12 hex: the same id, another fit file
    assert judge.id == FIT_ID
    body, _ = evaluate_items(items(), EvaluateConfig(resamples=0, cache=False), judge=judge)
    assert body["judges"]["alignment"]["measured"] is None
    assert "judge for alignment: " + FIT_ID + " — accuracy not measured" in summary_lines(body)
