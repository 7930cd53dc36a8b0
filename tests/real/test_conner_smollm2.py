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


@pytest.fixture(scope="module")
def nq_index(tmp_path_factory):
    """SmolLM2 is there, ../shared/data/conner beside the checkout, and nq-500's index, built once for the module."""
    require_smollm2()
    from vericite.paths import shared_data_dir

    d = shared_data_dir(required=False)
    need(d is not None and (d / "conner" / "nq").is_dir(), "../shared/data/conner is not beside this checkout")
    idx = tmp_path_factory.mktemp("conner") / "idx"
    r = CliRunner().invoke(cli, ["docs", "index", "nq-500", "--index", str(idx)])
    assert r.exit_code == 0, r.output
    return str(idx)


def test_knowledge_generated_and_measured_with_smollm2(tmp_path, nq_index):
    run = CliRunner()
    r = run.invoke(cli, ["generate", "--method", "conner-knowledge", "--dataset", "nq-500", "--model", "smollm2-135m", "--shot", "1",
                         "--max-tokens", "40", "--limit", "3", "--no-cache", "-q", "--out", str(tmp_path / "k")])
    assert r.exit_code == 0, r.output
    recs = [json.loads(x) for x in (tmp_path / "k" / "samples.jsonl").read_text().splitlines()]
    assert len(recs) == 3 and all(len(x["demonstrations"]) == 1 and x["id"] not in x["demonstrations"] for x in recs)
    r = run.invoke(cli, ["evaluate", "--task", "conner:evidence_k=2,shuffles=2,unrelated=1", "--input", str(tmp_path / "k"), "--index", nq_index,
                         "--judge", "llm3:smollm2-135m", "--relevance-model", "fake", "--no-cache", "-q", "--resamples", "50", "--out", str(tmp_path / "e")])
    assert r.exit_code == 0, r.output
    res = json.loads((tmp_path / "e" / "results.json").read_text())
    ev = res["evaluation"]["conner"]
    assert ev["lm"] == "smollm2-135m" and ev["judge"] == "llm3:smollm2-135m@1" and ev["evidence_index"] == nq_index
    for name in ("relevance", "coherence_sentence", "informativeness", "helpfulness"):
        m = res["metrics"][name]
        assert m["value"] is not None and 0.0 <= m["value"] <= 1.0, (name, m)
    # the knowledge may be one sentence (no order to test) or unjudgeable, but never silently zero
    for name in ("factuality", "coherence_paragraph", "validity"):
        m = res["metrics"][name]
        assert m["value"] is not None or m["reason"], (name, m)


def test_knowledge_selection_by_q_know_with_smollm2(tmp_path, nq_index):
    """configs/conner-select.yaml's levels 2-3 on the first question, small: r = 2 SmolLM2 samples (top-p 0.9), each
    scored by Q_know (SmolLM2's llm3 judge against the top passage of the NQ index, the fake scorer), the best
    kept; the baseline level keeps one sample."""
    run = CliRunner()
    idx = nq_index
    cfg = tmp_path / "select.yaml"
    cfg.write_text(
        "name: t\ndataset: nq-500\nmodel: smollm2-135m\nlimit: 1\nmethod: conner-knowledge\n"
        f"method_args: {{candidates: 2, temperature: 1.0, top_p: 0.9, index: {idx}, select_evidence_k: 1, select_relevance_model: fake, max_tokens: 40}}\n"
        f"task: 'conner:evidence_k=1,shuffles=2,unrelated=1'\njudge: llm3:smollm2-135m\nrelevance_model: fake\nevidence_index: {idx}\n"
        "resamples: 20\nexperiment: conner-selection\nlevels: [2, 3]\n",
        encoding="utf-8",
    )
    r = run.invoke(cli, ["run", str(cfg), "-o", str(tmp_path / "run"), "--no-cache", "-q"])
    assert r.exit_code == 0, r.output
    [rec] = [json.loads(x) for x in (tmp_path / "run" / "level-3" / "samples.jsonl").read_text().splitlines()]
    [base] = [json.loads(x) for x in (tmp_path / "run" / "level-2" / "samples.jsonl").read_text().splitlines()]
    sel = rec["selection"]
    # (the baseline's text is candidate 0 through the call cache; without it, as here, llama.cpp resamples it)
    assert [c["seed"] for c in sel["candidates"]] == [0, 1] and base["output"] and "selection" not in base
    assert rec["output"] == sel["candidates"][sel["chosen"]]["knowledge"]
    assert all(c["q_know"] is not None or c["not_computed"] for c in sel["candidates"])  # scored, or says why not
    res = json.loads((tmp_path / "run" / "results.json").read_text())
    rows = res["experiments"]["conner-selection"]["rows"]
    assert [row["level"] for row in rows] == [2, 3] and all(row["metrics"]["answer_em"]["n"] == 1 for row in rows)
