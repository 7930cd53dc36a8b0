"""A pooled conner-knowledge few-shot run (threads here; Ray actors the same way) gives each question the
demonstrations, and so the prompts, a local run gives: each worker builds its own method, which never sees
``check_samples``, so the driver ships what it prepared (``protocols.SamplesPrepared``): the few-shot pool of
``demo_draw`` (the whole dataset's questions or the run's), or ``pool``'s drawn candidates in their Q_know order with
their scores, scored once by the driver."""

from __future__ import annotations

import json

import pytest

from vericite import registry
from vericite.models.fake import FakeBackend
from vericite.runs.config import GenerateConfig
from vericite.runs.distributed import generate_pooled
from vericite.runs.loop import generate_run
from vericite.types import Sample

SAMPLES = [Sample(id=f"s{i}", question=f"question {i}?", meta={"topic": f"T{i}", "reference_knowledge": f"knowledge {i}."}) for i in range(10)]


def records(folder):
    out = [json.loads(line) for line in (folder / "samples.jsonl").read_text().splitlines()]
    for r in out:
        r.pop("seconds")  # wall time, the one field that differs between two runs
    return out


@pytest.mark.parametrize("args", [{"demo_draw": "dataset"}, {"demo_draw": "run"}, {"pool": 5}], ids=["dataset", "run", "pool"])
def test_a_pooled_few_shot_run_gives_the_demonstrations_of_a_local_run(tmp_path, args):
    data = tmp_path / "data.jsonl"
    data.write_text("".join(json.dumps(s.to_dict()) + "\n" for s in SAMPLES), encoding="utf-8")
    cfg = GenerateConfig(dataset=str(data), model="fake", method="conner-knowledge", shot=2, seed=3, limit=4, cache=False, **args)
    prompts: dict[str, list[str]] = {"local": [], "pooled": []}

    def model(run):
        return FakeBackend(replies=lambda messages, params: prompts[run].append(messages[-1]["content"]) or "K.")

    generate_run(cfg, tmp_path / "local", backend=model("local"), progress=False)
    generate_pooled(cfg, tmp_path / "pooled", ray=None, workers=2, batch_size=1, backend_factory=lambda: model("pooled"), progress=False)
    local, pooled = records(tmp_path / "local"), records(tmp_path / "pooled")
    assert len(local) == 4 and all(len(r["demonstrations"]) == 2 for r in local)
    assert pooled == local  # the same demonstrations and records
    assert sorted(prompts["pooled"]) == sorted(prompts["local"]) and len(set(prompts["local"])) == 4  # the same prompts
    assert all(p.count("Wikipedia:") == 3 for p in prompts["pooled"])  # two demonstrations and the question
    assert all(r["prompt"] == "conner-knowledge@1" for r in pooled)


def test_a_worker_takes_the_ranked_pool_the_driver_scored_and_scores_nothing(tmp_path):
    class Scorer:  # a Q_know that ranks the pool by its ids, backwards, and counts its calls
        gamma = (0.25,) * 4
        calls = 0

        def score(self, samples, texts, **_):
            Scorer.calls += 1
            return [{"q_know": int(s.id[1:]) / 10, "q_know_partial": int(s.id[1:]) / 10} for s in samples]

    args = dict(shot=2, pool=6, select="demonstrations", index="unused")
    driver = registry.create("methods", "conner-knowledge", backend=FakeBackend(default="K."), q_know=Scorer(), seed=1, **args)
    data = tmp_path / "data.jsonl"
    data.write_text("".join(json.dumps(s.to_dict()) + "\n" for s in SAMPLES), encoding="utf-8")
    driver.check_samples(SAMPLES[:3], str(data))
    worker = registry.create("methods", "conner-knowledge", backend=FakeBackend(default="K."), q_know=Scorer(), seed=1, **args)
    worker.use_prepared(driver.prepared())
    assert Scorer.calls == 1  # the driver's scoring only
    for s in SAMPLES:
        assert [d.id for d in worker.demonstrations(s)] == [d.id for d in driver.demonstrations(s)]
    assert worker.demo_scores == driver.demo_scores


def test_the_drivers_copy_gets_the_runs_progress_setting(tmp_path, monkeypatch):
    # its Q_know scoring of a drawn pool shows progress as a local run's does (ProgressShowing), unless quiet
    import vericite.runs.loop as loop

    real = loop.build_method
    cfg = GenerateConfig(dataset="x", model="fake", method="conner-knowledge", shot=1, demo_draw="run", cache=False)
    for progress in (True, False):
        built: list = []
        monkeypatch.setattr(loop, "build_method", lambda *a, **k: built.append(real(*a, **k)) or built[-1])
        generate_pooled(cfg, tmp_path / f"r{progress}", ray=None, workers=1, samples=SAMPLES[:3], backend_factory=lambda: FakeBackend(default="K."), progress=progress)
        assert built[0].progress is progress  # the driver's copy, built first


def test_a_worker_given_a_scored_pool_builds_no_q_know_scorer(tmp_path, monkeypatch):
    # select=demonstrations: the driver builds Q_know's scorer and scores the pool; each worker takes the scores
    # (SamplesPrepared) and never builds one (its judge, LM, scorers and evidence index): built when first used
    import vericite.generate.conner_select as conner_select

    built = []

    class Scorer:
        gamma = (0.25,) * 4
        metric = type("Metric", (), {"settings": lambda self: {"judge": "fake"}})()

        def score(self, samples, texts, **_):
            return [{"q_know": int(s.id[1:]) / 10, "q_know_partial": int(s.id[1:]) / 10} for s in samples]

    monkeypatch.setattr(conner_select, "q_know_scorer", lambda *a, **k: built.append(a) or Scorer())
    data = tmp_path / "data.jsonl"
    data.write_text("".join(json.dumps(s.to_dict()) + "\n" for s in SAMPLES), encoding="utf-8")
    args = {"shot": 2, "pool": 6, "select": "demonstrations", "index": "unused"}
    cfg = GenerateConfig(dataset=str(data), model="fake", method="conner-knowledge", seed=3, limit=4, cache=False, method_args=args)
    generate_pooled(cfg, tmp_path / "pooled", ray=None, workers=2, batch_size=1, backend_factory=lambda: FakeBackend(default="K."), progress=False)
    assert len(built) == 1  # the driver's, which scored the pool; not one per worker
    manifest = json.loads((tmp_path / "pooled" / "manifest.json").read_text())
    scores = [p["q_know"] for p in manifest["selection"]["pool"]]
    assert len(scores) == 6 and scores == sorted(scores, reverse=True)  # ranked by the driver's scorer
    assert len(records(tmp_path / "pooled")) == 4
