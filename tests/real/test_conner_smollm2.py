"""CONNER on the real embedded SmolLM2-135M through llama.cpp: knowledge generated for three nq-500 questions, then
scored with all six measures (llm3 judge and LM: SmolLM2; relevance: the fake scorer, so only llama.cpp is
needed), evidence from an index of the NQ corpus (slow; runs in CI, where it never skips)."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from vericite.cli.main import cli

from tests.conftest import need, require_smollm2

pytestmark = [pytest.mark.slow, pytest.mark.shared]


def test_knowledge_generated_and_measured_with_smollm2(tmp_path):
    require_smollm2()
    from vericite.paths import shared_data_dir

    d = shared_data_dir(required=False)
    need(d is not None and (d / "conner" / "nq").is_dir(), "../shared/data/conner is not beside this checkout")
    run = CliRunner()
    r = run.invoke(cli, ["docs", "index", "nq-500", "--index", str(tmp_path / "idx")])
    assert r.exit_code == 0, r.output
    r = run.invoke(cli, ["generate", "--method", "conner-knowledge", "--dataset", "nq-500", "--model", "smollm2-135m", "--shot", "1",
                         "--max-tokens", "40", "--limit", "3", "--no-cache", "-q", "--out", str(tmp_path / "k")])
    assert r.exit_code == 0, r.output
    recs = [json.loads(x) for x in (tmp_path / "k" / "samples.jsonl").read_text().splitlines()]
    assert len(recs) == 3 and all(len(x["demonstrations"]) == 1 and x["id"] not in x["demonstrations"] for x in recs)
    r = run.invoke(cli, ["evaluate", "--task", "conner:evidence_k=2,shuffles=2,unrelated=1", "--input", str(tmp_path / "k"), "--index", str(tmp_path / "idx"),
                         "--judge", "llm3:smollm2-135m", "--relevance-model", "fake", "--no-cache", "-q", "--resamples", "50", "--out", str(tmp_path / "e")])
    assert r.exit_code == 0, r.output
    res = json.loads((tmp_path / "e" / "results.json").read_text())
    ev = res["evaluation"]["conner"]
    assert ev["lm"] == "smollm2-135m" and ev["judge"] == "llm3:smollm2-135m@1" and ev["evidence_index"] == str(tmp_path / "idx")
    for name in ("relevance", "coherence_sentence", "informativeness", "helpfulness"):
        m = res["metrics"][name]
        assert m["value"] is not None and 0.0 <= m["value"] <= 1.0, (name, m)
    # the knowledge may be one sentence (no order to test) or unjudgeable, but never silently zero
    for name in ("factuality", "coherence_paragraph", "validity"):
        m = res["metrics"][name]
        assert m["value"] is not None or m["reason"], (name, m)
