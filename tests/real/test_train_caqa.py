"""``vericite train caqa`` for real: all-MiniLM-L6-v2 fine-tuned on a few items of a built CAQA file, exported
to ONNX, judged through ``caqa:<folder>`` (onnxruntime) and ``judge-eval --task caqa``; a changed model file is
refused. Slow (torch, about a minute on two cores)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner

from tests.support.caqa import write_pool
from tests.support.guards import requires
from vericite.bench import train_caqa as tc
from vericite.cli.main import cli
from vericite.errors import VericiteError
from vericite.registry import BuildContext, create
from vericite.types import JudgePair

pytestmark = pytest.mark.slow


def test_train_then_judge(tmp_path):
    requires("train")
    pool = write_pool(tmp_path)
    data = tmp_path / "caqa.jsonl"
    assert CliRunner().invoke(cli, ["build", "caqa", "--pool", str(pool), "--n", "40", "--verbalise", "template", "--out", str(data), "-q"]).exit_code == 0
    out = tmp_path / "judge"
    kept = {}
    real_export = tc.export_onnx

    def export_and_keep(model, tok, path, max_length):
        kept["model"], kept["tok"] = model, tok
        real_export(model, tok, path, max_length)

    tc.export_onnx = export_and_keep
    try:
        r = CliRunner().invoke(cli, ["train", "caqa", "--data", str(data), "--split", "train", "--limit", "16", "--epochs", "1",
                                     "--max-length", "64", "--out", str(out), "-q"])
    finally:
        tc.export_onnx = real_export
    assert r.exit_code == 0, r.output
    card = json.loads((out / "caqa_judge.json").read_text())
    assert card["labels"] == ["supportive", "insufficient", "contradictory", "irrelevant"] and card["training"]["items"] == 16
    assert card["version"] == 2 and card["recipe"]["head"] == "mean"
    judge = create("judges", f"caqa:{out}", BuildContext(cache=False))
    assert judge.id.endswith("@2")
    pairs = [JudgePair("Leeds is where John was born.", "John was born in Leeds.", question="Where was John born?")] * 3
    got = judge.judge(pairs)
    assert len(got) == 3 and all(j.status == "ok" and j.label in judge.labels for j in got)
    assert sum(got[0].scores.values()) == pytest.approx(1.0, abs=1e-4) and got[0].scores == got[2].scores
    # the ONNX graph gives the torch model's probabilities, on items of different lengths batched together
    items = [json.loads(line) for line in data.read_text().splitlines()][:5]
    some = [JudgePair(it["citation"], it["answer"], question=it["question"]) for it in items]  # evidence, claim
    onnx = np.array([[j.scores[c] for c in judge.labels] for j in judge.judge(some)])
    torch_probs = tc.predict(kept["model"], kept["tok"], [f"{p.question} {p.claim}" for p in some], [p.evidence for p in some], max_length=64)
    assert np.allclose(onnx, torch_probs, atol=1e-4), (onnx, torch_probs)
    e = CliRunner().invoke(cli, ["judge-eval", "--task", "caqa", "--judge", f"caqa:{out}", "--data", str(data), "--out", str(tmp_path / "e"), "-q"])
    assert e.exit_code == 0, e.output
    with open(out / "model.onnx", "ab") as f:
        f.write(b"x")
    with pytest.raises(VericiteError, match="sha256"):
        create("judges", f"caqa:{out}", BuildContext(cache=False))


def test_a_folder_without_a_model_is_one_error(tmp_path):
    from vericite.errors import ModelUnavailableError

    with pytest.raises(ModelUnavailableError, match="train caqa"):
        create("judges", f"caqa:{tmp_path}", BuildContext(cache=False))
