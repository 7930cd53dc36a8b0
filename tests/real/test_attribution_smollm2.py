"""``vericite evaluate --attribution-judge llm4:smollm2-135m`` on the real embedded SmolLM2 through llama.cpp (slow;
runs in CI, where it never skips): real answers of both tasks, every pair judged by the model's class-word
log-probabilities, the shares per answer and per run consistent with the judgements written."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from tests.support.guards import require_smollm2
from vericite.cli.main import cli

pytestmark = pytest.mark.slow

KNOWLEDGE = [{"subject": "Q1", "subject_label": "Marie Curie", "property": "place of birth", "value": "Warsaw"},
             {"subject": "Q1", "subject_label": "Marie Curie", "property": "field of work", "value": "chemistry"}]  # fmt: skip
KALMA = {"id": "k1", "question": "Who was Marie Curie?", "knowledge": KNOWLEDGE,
         "answer": "Marie Curie was born in Warsaw [Q1, place of birth: Warsaw]. She worked in physics [Q1, field of work: chemistry]."}  # fmt: skip
DOCS = [{"title": "Rome", "text": "Rome is the capital city of Italy."}, {"title": "Bridge", "text": "The bridge opened in 1932."}]
ALCE = {"args": {"dataset_name": "eli5"}, "data": [{"sample_id": "a1", "question": "What is Rome?", "docs": DOCS, "claims": ["Rome is a capital."],
                                                    "output": "Rome is the capital of Italy [1]. The bridge opened in 1975 [2]."}]}  # fmt: skip


@pytest.mark.parametrize("task", ["kalma", "alce"])
def test_real_four_class_diagnosis_through_the_cli(tmp_path, task):
    require_smollm2()
    if task == "kalma":
        f = tmp_path / "in.jsonl"
        f.write_text(json.dumps(KALMA) + "\n", encoding="utf-8")
    else:
        f = tmp_path / "in.json"
        f.write_text(json.dumps(ALCE), encoding="utf-8")
    r = CliRunner().invoke(cli, ["evaluate", "--task", task, "-i", str(f), "-o", str(tmp_path / "ev"), "-q", "--no-cache", "--threads", "1",
                                 "--resamples", "50", "--attribution-judge", "llm4:smollm2-135m"])  # fmt: skip
    assert r.exit_code == 0, r.output
    res = json.loads((tmp_path / "ev" / "results.json").read_text())
    rec = json.loads((tmp_path / "ev" / "samples.jsonl").read_text().splitlines()[0])
    four = [j for j in rec["judgements"] if j["purpose"] == "attribution"]
    assert len(four) == 2 and res["counts"]["attribution_pairs"] == 2
    for j in four:  # a real verdict: four class probabilities from the class words' log-probabilities
        assert j["status"] == "ok" and j["judge"] == "llm4:smollm2-135m@1" and set(j["scores"]) == {"supportive", "insufficient", "contradictory", "irrelevant"}
        assert sum(j["scores"].values()) == pytest.approx(1.0, abs=1e-4) and j["label"] == max(j["scores"], key=j["scores"].get)
    shares = {k.removeprefix("attribution_"): m["value"] for k, m in res["metrics"].items() if k.startswith("attribution_")}
    assert sum(shares.values()) == pytest.approx(1.0)
    for c in ("supportive", "insufficient", "contradictory", "irrelevant"):
        assert shares[c] == sum(1 for j in four if j["label"] == c) / 2 == rec["scores"]["attribution"]["shares"][c]
