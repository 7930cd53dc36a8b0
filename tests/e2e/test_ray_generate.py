"""generate on Ray (``--ray auto``: Ray started in-process, two actors) writes the files of a local run: plain,
few-shot CONNER knowledge, VTG with its progress per sentence; the actors share one call cache. Fakes only; the real
two-node cluster is tests/real/test_ray_cluster.py."""

from __future__ import annotations

import json

from tests.support.ray_e2e import invoke, ray_local  # noqa: F401  (a fixture)
from tests.support.ray_runs import without_timings, write_questions


def test_generate_on_ray_writes_what_a_local_run_writes(tmp_path, ray_local):
    q = write_questions(tmp_path / "q.jsonl", 10)
    common = ["generate", "--dataset", str(q), "--model", "fake", "--no-cache", "-q"]
    invoke([*common, "--out", str(tmp_path / "local")])
    invoke([*common, "--out", str(tmp_path / "ray"), "--ray", "auto", "--workers", "2"])
    local, ray = ((tmp_path / d / "samples.jsonl").read_text(encoding="utf-8") for d in ("local", "ray"))
    assert local.count("\n") == 10
    assert without_timings(ray) == without_timings(local)  # byte for byte, but for each answer's wall time
    ml, mr = (json.loads((tmp_path / d / "manifest.json").read_text()) for d in ("local", "ray"))
    assert mr["summary"] == ml["summary"] and mr["config"] == ml["config"] and mr["status"] == "complete"
    assert (tmp_path / "ray" / ".ray-calls.jsonl").read_text().count("\n") == 3  # batches of 4: 4 + 4 + 2


def test_few_shot_conner_knowledge_on_ray_gives_the_local_demonstrations(tmp_path, ray_local):
    # each actor's method gets what the driver's check_samples prepared (the few-shot pool), not an empty one
    q = tmp_path / "q.jsonl"
    q.write_text("".join(json.dumps({"id": f"s{i}", "question": f"question {i}?", "meta": {"reference_knowledge": f"knowledge {i}."}}) + "\n" for i in range(8)))
    common = ["generate", "--method", "conner-knowledge", "--shot", "2", "--limit", "4", "--dataset", str(q), "--model", "fake", "--no-cache", "-q"]
    invoke([*common, "--out", str(tmp_path / "local")])
    invoke([*common, "--out", str(tmp_path / "ray"), "--ray", "auto", "--workers", "2"])
    local, ray = ((tmp_path / d / "samples.jsonl").read_text(encoding="utf-8") for d in ("local", "ray"))
    assert without_timings(ray) == without_timings(local) and local.count('"demonstrations"') == 4


def test_actors_write_the_one_call_cache_a_local_rerun_reads(tmp_path, ray_local, monkeypatch):
    from vericite.models.cache_admin import cache_stats

    monkeypatch.setenv("VERICITE_CACHE", str(tmp_path / "cache"))  # sent to the actors by the driver
    q = write_questions(tmp_path / "q.jsonl", 10)
    common = ["generate", "--dataset", str(q), "--model", "fake", "-q"]
    invoke([*common, "--out", str(tmp_path / "ray"), "--ray", "auto", "--workers", "2"])
    assert cache_stats(tmp_path / "cache" / "calls.sqlite")["entries"] == 10  # both actors wrote the one file
    invoke([*common, "--out", str(tmp_path / "local")])
    records = [json.loads(l) for l in (tmp_path / "local" / "samples.jsonl").read_text().splitlines()]
    assert len(records) == 10 and all(r["cached"] for r in records)


def test_vtg_on_ray_names_each_question_s_sentence_and_answers_as_locally(tmp_path, ray_local, monkeypatch):
    """Issue 12's progress per sentence under --ray: the actors report their step to the pool's step board, the
    driver's progress names it ("sample q1, sentence 1, trial 1"), and the answers are those of a local run."""
    from vericite.models.usage import UsageMeter
    from vericite.runs.config import GenerateConfig
    from vericite.runs.distributed import generate_pooled
    from vericite.runs.loop import build_method, run_method
    from vericite.types import Sample

    from tests.support.vtg import DOCS, QUESTION, StepLabels, slow_script

    cfg = GenerateConfig(dataset="x", method="vtg", model="vtg-script", cache=False,
                         method_args={"k": 2, "verifier_judge": "fake", "docs_per_query": 1, "trials": 1})  # fmt: skip
    samples = [Sample(f"q{i}", QUESTION, passages=list(DOCS)) for i in range(1, 4)]
    labels = StepLabels(monkeypatch)
    generate_pooled(cfg, tmp_path / "ray", ray="auto", workers=2, samples=samples, backend_factory=slow_script, progress=True, batch_size=1)
    assert any("sample q1, sentence 1, trial 1" in x for x in labels.seen), labels.seen
    assert any("sentence 2, trial 1" in x for x in labels.seen), labels.seen
    meter = UsageMeter()
    run_method(build_method(cfg, meter=meter, backend=slow_script()), samples, tmp_path / "local", config={}, meter=meter, progress=False)
    ray, local = ((tmp_path / d / "samples.jsonl").read_text(encoding="utf-8") for d in ("ray", "local"))
    assert ray.count("\n") == 3 and without_timings(ray) == without_timings(local)
