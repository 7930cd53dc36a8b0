"""conner-knowledge's few-shot draw without ``pool`` (``demo_draw``): from the whole dataset's other questions, so
the same item and seed get the same demonstrations whatever ``--limit`` (the run's questions, the rule before, gave
wow-seen-1 other demonstrations under ``--limit 5`` than under ``--limit 10``); a folder written before the option
resumes with the run's questions, as its first items were drawn."""

from __future__ import annotations

import json
import random

import pytest

from vericite import registry
from vericite.errors import VericiteError
from vericite.generate.conner import ConnerKnowledgeOptions
from vericite.models.fake import FakeBackend
from vericite.runs.config import GenerateConfig
from vericite.runs.loop import generate_run
from vericite.types import Sample

SAMPLES = [Sample(id=f"s{i}", question=f"question {i}?", meta={"topic": f"T{i}", "reference_knowledge": f"knowledge {i}."}) for i in range(12)]


@pytest.fixture
def data(tmp_path):
    path = tmp_path / "data.jsonl"
    path.write_text("".join(json.dumps(s.to_dict()) + "\n" for s in SAMPLES), encoding="utf-8")
    return str(path)


def run(data, out, limit, resume=False, **args):
    cfg = GenerateConfig(dataset=data, model="fake", method="conner-knowledge", shot=3, seed=7, limit=limit, cache=False, **args)
    generate_run(cfg, out, resume=resume, backend=FakeBackend(default="K."), progress=False)
    lines = (out / "samples.jsonl").read_text().splitlines()
    return {r["id"]: r["demonstrations"] for r in map(json.loads, lines)}, json.loads((out / "manifest.json").read_text())


def test_the_same_item_and_seed_get_the_same_demonstrations_whatever_limit(tmp_path, data):
    # the real run: --limit 5 then --limit 10 --resume drew items 1-5 from items 1-5 only, a fresh --limit 10 otherwise
    chunked, _ = run(data, tmp_path / "a", 4)
    chunked, manifest = run(data, tmp_path / "a", 8, resume=True)
    fresh, _ = run(data, tmp_path / "b", 8)
    assert chunked == fresh and len(fresh) == 8
    assert manifest["demo_draw"] == "dataset" and "demo_draw" not in manifest["config"]  # the config as given
    assert any(set(d) - {f"s{i}" for i in range(4)} for i, d in enumerate(fresh.values()) if i < 4)  # beyond the run's first 4


def test_the_item_is_never_its_own_demonstration_and_the_dataset_is_loaded_once(data, monkeypatch):
    import vericite.datasets as datasets

    loads = []
    real = datasets.load_samples
    monkeypatch.setattr(datasets, "load_samples", lambda *a, **k: (loads.append(a[0]) if "dropped" in k else None) or real(*a, **k))  # the outer call
    m = registry.create("methods", "conner-knowledge", backend=FakeBackend(default="K."), shot=3)
    m.check_samples(SAMPLES[:2], data)  # 2 questions in the run, 3 demonstrations: the dataset has 11 others
    for seed in range(20):
        m.seed = seed
        for s in SAMPLES[:2]:
            demos = [d.id for d in m.demonstrations(s)]
            assert len(set(demos)) == 3 and s.id not in demos
    assert loads == [data]
    with pytest.raises(VericiteError, match=r"shot=12 needs more than 12 questions with reference knowledge in .* \(it has 12\)"):
        registry.create("methods", "conner-knowledge", backend=FakeBackend(), shot=12).check_samples(SAMPLES, data)
    with pytest.raises(VericiteError, match="cannot be loaded .*demo_draw=run draws them from the run's questions"):
        registry.create("methods", "conner-knowledge", backend=FakeBackend(), shot=2).check_samples(SAMPLES, "no-such-dataset")
    with pytest.raises(VericiteError, match=r"cannot be loaded \(unknown dataset 'no-such-dataset'.*\)$"):  # no demo_draw hint: a pool's own draw
        registry.create("methods", "conner-knowledge", backend=FakeBackend(), shot=2, pool=4).check_samples(SAMPLES, "no-such-dataset")


def test_the_manifest_records_the_rule(data):
    def manifest(samples=SAMPLES[:3], **args):
        m = registry.create("methods", "conner-knowledge", backend=FakeBackend(), **args)
        m.check_samples(samples, data)
        return m.manifest()

    assert manifest(shot=2)["demo_draw"] == "dataset"
    assert manifest(shot=2, demo_draw="run")["demo_draw"] == "run"
    assert "demo_draw" not in manifest() and "demo_draw" not in manifest(source="reference")  # no demonstration
    assert "demo_draw" not in manifest(shot=2, pool=4)  # the pool's rule: _draw_pool
    with pytest.raises(VericiteError, match="invalid"):
        manifest(shot=2, demo_draw="everything")


def test_demo_draw_run_draws_from_the_runs_questions(data):
    m = registry.create("methods", "conner-knowledge", backend=FakeBackend(), shot=2, demo_draw="run", seed=5)
    m.check_samples(SAMPLES[:4], data)
    others = [s for s in SAMPLES[:4] if s.id != "s1"]
    assert m.demonstrations(SAMPLES[1]) == random.Random("5:s1").sample(others, 2)


def test_a_folder_written_before_demo_draw_resumes_with_the_runs_questions(tmp_path, data):
    _, first = run(data, tmp_path / "old", 4)
    path = tmp_path / "old" / "manifest.json"
    del first["demo_draw"]  # as written before the option
    path.write_text(json.dumps(first), encoding="utf-8")
    demos, manifest = run(data, tmp_path / "old", 8, resume=True)
    assert manifest["demo_draw"] == "run" and "demo_draw" not in manifest["config"]
    for i in range(4, 8):  # the items drawn now: from the run's 8 questions, by the rule they began with
        others = [s for s in SAMPLES[:8] if s.id != f"s{i}"]
        assert demos[f"s{i}"] == [d.id for d in random.Random(f"7:s{i}").sample(others, 3)]
    assert run(data, tmp_path / "old", 8, resume=True, demo_draw="run")[1]["status"] == "complete"  # given as it ran: the same run
    with pytest.raises(VericiteError, match=r"\(demo_draw: not given \(the folder ran with 'run'\) -> 'dataset'\)"):  # as resumed, recorded
        run(data, tmp_path / "old", 8, resume=True, demo_draw="dataset")


def test_a_resume_refusal_says_what_the_folder_ran_with_not_none(tmp_path, data):
    run(data, tmp_path / "new", 4)  # demo_draw not given: dataset, as its manifest records
    with pytest.raises(VericiteError, match=r"\(demo_draw: not given \(the folder ran with 'dataset'\) -> 'run'\)") as e:
        run(data, tmp_path / "new", 8, resume=True, demo_draw="run")
    assert "None" not in str(e.value)
    _, first = run(data, tmp_path / "old", 4)
    del first["demo_draw"]  # as written before the option
    (tmp_path / "old" / "manifest.json").write_text(json.dumps(first), encoding="utf-8")
    with pytest.raises(VericiteError, match=r"\(demo_draw: not recorded \(written before the option: the folder ran with 'run'\) -> 'dataset'\)"):
        run(data, tmp_path / "old", 8, resume=True, demo_draw="dataset")
    run(data, tmp_path / "given", 4, demo_draw="run")
    with pytest.raises(VericiteError, match=r"\(demo_draw: 'run' -> 'dataset'\)"):  # given: another value is refused
        run(data, tmp_path / "given", 8, resume=True, demo_draw="dataset")
    assert run(data, tmp_path / "given", 8, resume=True)[1]["config"]["demo_draw"] == "run"  # left out: the folder's


def test_resumed_options_and_upgrade_manifest():
    before = {"method": "conner-knowledge@1", "source": "generate", "shot": 4, "demo_words": 200, "config": {"shot": 4}}
    assert ConnerKnowledgeOptions.resumed_options({}, before) == {"demo_draw": "run"}
    assert ConnerKnowledgeOptions.resumed_options({}, {**before, "demo_draw": "dataset"}) == {"demo_draw": "dataset"}
    assert ConnerKnowledgeOptions.resumed_options({"demo_draw": "dataset"}, before) == {}  # given: as given
    assert ConnerKnowledgeOptions.resumed_options({}, {"method": "vtg@1"}) == {}
    m = registry.create("methods", "conner-knowledge", backend=FakeBackend(), shot=4)
    assert m.upgrade_manifest(before) == {**before, "demo_draw": "run"}
    assert m.upgrade_manifest({**before, "demo_draw": "dataset"})["demo_draw"] == "dataset"
    assert "demo_draw" not in m.upgrade_manifest({**before, "config": {"shot": 4, "pool": 30}})  # a pool draws its own way
    assert "demo_draw" not in m.upgrade_manifest({**before, "shot": 0})


class Registered:
    """A registered dataset whose default questions (``r*``) are not those of a ``data_path`` file."""

    name = "demo-source"

    def load(self, *, phrasing="specific", path=None, **_):
        from vericite.datasets import read_samples_jsonl

        if path is not None:
            return list(read_samples_jsonl(path, phrasing))
        return [Sample(id=f"r{i}", question=f"registered {i}?", meta={"reference_knowledge": f"registered knowledge {i}."}) for i in range(12)]


@pytest.fixture
def registered():
    registry.datasets.register("demo-source", lambda arg, *, ctx, **o: Registered(), replace=True)
    yield "demo-source"
    registry.datasets.unregister("demo-source")


@pytest.mark.parametrize("pooled", [False, True], ids=["local", "pooled"])
@pytest.mark.parametrize("args", [{}, {"pool": 5}], ids=["demo_draw", "pool"])
def test_demonstrations_come_from_the_data_the_run_reads(tmp_path, data, registered, pooled, args):
    # a custom data file (--data-path) and the other phrasing: the demonstrations are its questions, so phrased
    from vericite.runs.distributed import generate_pooled

    general = tmp_path / "general.jsonl"
    general.write_text("".join(json.dumps({**s.to_dict(), "question_general": f"general {s.id}?"}) + "\n" for s in SAMPLES), encoding="utf-8")
    prompts: list[str] = []
    backend = lambda: FakeBackend(replies=lambda messages, params: prompts.append(messages[-1]["content"]) or "K.")  # noqa: E731
    for spec, path in ((registered, data), (str(general), None)):
        prompts.clear()
        cfg = GenerateConfig(dataset=spec, data_path=path, phrasing="general", model="fake", method="conner-knowledge", shot=2, seed=7, limit=3, cache=False, **args)
        out = tmp_path / f"{spec.replace('/', '_')}-{pooled}"
        if pooled:
            generate_pooled(cfg, out, ray=None, workers=2, batch_size=1, backend_factory=backend, progress=False)
        else:
            generate_run(cfg, out, backend=backend(), progress=False)
        demos = [d for r in map(json.loads, (out / "samples.jsonl").read_text().splitlines()) for d in r["demonstrations"]]
        assert len(demos) == 6 and all(d.startswith("s") for d in demos)  # the file's questions, not the registry's r*
        if path is None:  # the general phrasing of every question, the demonstrations' too
            assert all(p.count("Question: general s") == 3 for p in prompts) and len(prompts) == 3
