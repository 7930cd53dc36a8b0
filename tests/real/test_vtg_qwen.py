"""VTG with the real embedded Qwen (answers and the verifiers' judge) on ALCE's first ELI5 question, its own
documents, T = 1, at most 2 sentences, then ``evaluate --task alce`` with the same judge (slow: several minutes
on two cores; take the model lock, ``flock /tmp/vericite-model.lock``, when others share the machine)."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from vericite.cli.main import cli

from tests.support.guards import need, require_qwen

pytestmark = [pytest.mark.slow, pytest.mark.shared]


def test_vtg_on_one_eli5_question_with_qwen(tmp_path):
    require_qwen()
    from vericite.paths import shared_data_dir

    d = shared_data_dir(required=False)
    need(d is not None and (d / "alce" / "samples").is_dir(), "../shared/data/alce is not beside this checkout")
    out = tmp_path / "vtg"
    args = ["generate", "--method", "vtg", "--dataset", "alce-eli5-30", "--model", "qwen2.5-coder-1.5b", "--judge", "llm:qwen2.5-coder-1.5b",
            "--k", "5", "--queries", "2", "--docs-per-query", "2", "--trials", "1", "--method-arg", "max_sentences=2", "--limit", "1", "-q", "--out", str(out)]  # fmt: skip
    r = CliRunner().invoke(cli, args)
    assert r.exit_code == 0, r.output
    rec = json.loads((out / "samples.jsonl").read_text().splitlines()[0])
    trace = rec["vtg"]
    kept = [s for s in trace["sentences"] if s["kept"]]
    assert 1 <= len(kept) <= 2 and rec["output"] == " ".join(s["kept"] for s in kept)
    assert rec["answer"]["parser"] == "alce-citation@1" and rec["passages"]
    for s in kept:  # every trial has its verdicts; every citation is in the final list
        for t in s["trials"]:
            assert t["generation_verifier"] is not None and all(1 <= c <= len(rec["passages"]) for c in t["citations"])
    assert trace["components"]["sentence"]["calls"] >= 1 and trace["judge"]["calls"] >= 1 and rec["usage"]["calls"] >= 3
    r = CliRunner().invoke(cli, ["evaluate", "--task", "alce", "--input", str(out), "--judge", "llm:qwen2.5-coder-1.5b",
                                 "--metrics", "alce_citation_recall,alce_citation_precision,rouge_lsum", "--resamples", "50", "-q", "--out", str(tmp_path / "e")])  # fmt: skip
    assert r.exit_code == 0, r.output
    res = json.loads((tmp_path / "e" / "results.json").read_text())
    assert res["metrics"]["alce_citation_recall"]["n"] == 1 and 0.0 <= res["metrics"]["alce_citation_recall"]["value"] <= 1.0
