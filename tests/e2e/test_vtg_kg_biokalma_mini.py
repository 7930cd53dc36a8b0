"""Issue 12's VTG-KG in the issue's own shape, end to end: ``vericite kg load`` of the shared BioKaLMA graph (the
store the recorded runs used, ``configs/vtg-kg.yaml``) into a real Oxigraph store, ``vericite generate --method vtg
--dataset biokalma-mini --store DIR`` with a scripted fake model, the fake (keyword) judge as the verifiers and
spaCy's NER in KaLMA's retrieval, then ``vericite evaluate --task kalma`` with the model-free triple judge. A
sentence the verifiers accept cites the memory's triples as KaLMA does, ``[QID, property: value]``; a sentence
they reject is kept with ``[NA]``."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from click.testing import CliRunner

from vericite import registry
from vericite.cli.generate import VTG_K_WITH_STORE
from vericite.cli.main import cli
from vericite.models.fake import FakeBackend, last_user_message

from tests.support.guards import requires
from tests.support.paths import REPO
from tests.support.vtg import answer_so_far, citation_sentence

#: a memory item of a sentence prompt: a triple shown as ``Document [n](Title: label): property: value``
DOC = re.compile(r"^Document \[\d+\]\(Title: (.*?)\): ([^:\n]+): (.*)$", re.MULTILINE)
#: what no triple says: the keyword judge rejects it against any memory, so it is kept with [NA]
UNSUPPORTED = "The moon is made of green cheese."
TRIPLE_CITATION = re.compile(r"\[(Q\d+), ([^:\]]+): ([^\]]+)\]")


def kg_script(messages: Any, params: Any) -> str:
    """First sentence: the memory's first triple other than a name, in words (label, property, value), or
    :data:`UNSUPPORTED` when there is none; then :data:`UNSUPPORTED`; then ``End.``. A citation prompt gets ``[1]``."""
    prompt = last_user_message(messages)
    sentence = citation_sentence(prompt)
    if sentence is not None:
        return f"{sentence} [1]"
    if "Generated questions:" in prompt:
        return "1. Who is Cao Cao?"
    so_far = answer_so_far(prompt)
    if "cheese" in so_far:
        return "End."
    if so_far:
        return UNSUPPORTED
    triple = next((m for m in DOC.finditer(prompt) if m.group(2) != "name"), None)
    return f"{triple.group(1)} {triple.group(2)} {triple.group(3)}." if triple else UNSUPPORTED


@pytest.fixture()
def store(tmp_path, shared_data):
    """``vericite kg load`` of the shared BioKaLMA graph into ``tmp_path/runs/kg``, as configs/vtg-kg.yaml says."""
    requires("spacy")  # KaLMA's retrieval finds the question's entities with spaCy's NER
    d = tmp_path / "runs" / "kg"
    r = CliRunner().invoke(cli, ["kg", "load", str(shared_data / "biokalma" / "dataset" / "complex_question_graph.json"), "--store", str(d)])
    assert r.exit_code == 0, r.output
    return d


@pytest.fixture()
def fake_kg_model():
    registry.backends.register("fake-kg", lambda arg, *, ctx, **o: FakeBackend("fake-kg", replies=kg_script), replace=True)
    yield "fake-kg"
    registry.backends.unregister("fake-kg")


def test_generate_vtg_on_biokalma_mini_with_a_store_then_evaluate_as_kalma(tmp_path, store, fake_kg_model):
    out = tmp_path / "vtg-kg"
    r = CliRunner().invoke(cli, ["generate", "--method", "vtg", "--dataset", "biokalma-mini", "--store", str(store), "--model", fake_kg_model,
                                 "--judge", "fake", "--limit", "3", "--out", str(out), "-q", "--no-cache"])  # fmt: skip
    assert r.exit_code == 0, r.output
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["method"] == "vtg@1" and manifest["judge"] == "fake@1"
    assert manifest["config"]["dataset"] == "biokalma-mini" and manifest["config"]["store"] == str(store)
    records = [json.loads(line) for line in (out / "samples.jsonl").read_text().splitlines()]
    assert len(records) == 3
    cited = 0
    for rec in records:
        memory = {(t["subject"], t["property"], t["value"]) for t in rec["knowledge"]}  # the memory's triples
        output = rec["output"]
        assert not re.search(r"\[\d+\]", output), output  # no document numbers: KaLMA's citations only
        for qid, prop, value in TRIPLE_CITATION.findall(output):
            assert (qid, prop, value) in memory, (qid, prop, value)
            cited += 1
        if memory:
            assert TRIPLE_CITATION.search(output.split(UNSUPPORTED[:-1])[0]), output  # the first sentence cites a triple
        assert output.endswith(f"{UNSUPPORTED[:-1]} [NA].") and rec["na_count"] == 1, output
        rejected = next(s for s in rec["vtg"]["sentences"] if "cheese" in (s["kept"] or ""))
        # the fake verifiers rejected it in every trial: the citations generated, then the memory
        assert all(not t["generation_verifier"]["entailed"] and not (t.get("memory_verifier") or {}).get("entailed") for t in rejected["trials"])
        assert rec["citation_status"].get("ok", 0) == len(TRIPLE_CITATION.findall(output))  # each parsed as a triple of the memory
    assert cited >= 2 and sum(1 for rec in records if rec["knowledge"]) >= 2  # triples from the store, cited
    # D_L is KaLMA's retrieval from the store (not the triples the entries carry); the evidence finder searches it too
    long_term = [rec["vtg"]["sentences"][0]["trials"][0]["memory"]["long"] for rec in records]
    assert long_term == [rec["retrieval"]["n_triples"] for rec in records] and long_term[1] > 0
    found = [sum(len(v) for s in rec["vtg"]["sentences"] for t in s["trials"] for v in (t.get("retrieved") or {}).values()) for rec in records]
    assert long_term[0] == 0 < found[0]  # question 1 names no one the store knows; "Who is Cao Cao?" finds him there

    ev = tmp_path / "eval"
    r = CliRunner().invoke(cli, ["evaluate", "--task", "kalma", "--input", str(out), "--judge", "triple", "--out", str(ev), "-q"])
    assert r.exit_code == 0, r.output
    metrics = json.loads((ev / "results.json").read_text())["metrics"]
    assert metrics["citation_correctness"]["value"] == 1.0  # each cited sentence states its triple's value
    # scored against biokalma-mini's minimum knowledge sets (question 3's holds Cao Cao's ancestral home)
    assert metrics["citation_precision_micro"]["n"] == 3 and metrics["citation_precision_micro"]["value"] > 0


def test_the_vtg_kg_config_runs_with_its_store(tmp_path, store, monkeypatch):
    # configs/vtg-kg.yaml, the recorded "VTG-KG against KaLMA" run: its store is runs/kg of the current folder
    monkeypatch.chdir(tmp_path)
    r = CliRunner().invoke(cli, ["run", str(REPO / "configs" / "vtg-kg.yaml"), "--model", "fake", "--limit", "2", "--no-cache", "-q", "--out", "run"])
    assert r.exit_code == 0, r.output
    assert VTG_K_WITH_STORE not in r.stderr  # k is left out: VTG's default 5, recorded as the runs recorded it
    manifest = json.loads((tmp_path / "run" / "level-base" / "manifest.json").read_text())
    config = manifest["config"]
    assert config["store"] == "runs/kg" and config["dataset"] == "biokalma-mini" and "kg_k" not in config
    assert (config["k"], config["queries"], config["docs_per_query"], config["trials"], config["max_sentences"]) == (5, 2, 2, 3, 6)
    assert manifest["repeat_overlap"] == 1.0 and (manifest["repeat_retries"], manifest["short_retries"]) == (0, 0)  # as before those options
    assert not any(manifest[k] for k in ("strip_preamble", "strip_source_leads", "drop_source_remarks", "tidy_citations"))
    assert manifest["judge"].startswith("llm:fake")  # the verifiers' judge: VTG's default, llm:<model>
    results = json.loads((tmp_path / "run" / "results.json").read_text())
    assert results["config"]["judge"] == "triple" and results["metrics"]["citation_precision_micro"]["n"] == 2
