"""CONNER's uses of §5 in conner-knowledge: knowledge selection (r candidates sampled with top-p, candidate j with
seed + j, the argmax of Q_know kept, candidate 0 the unselected baseline) and demonstration selection (a seeded
pool of m dataset questions, the top n by Q_know of their reference knowledge, never the item itself); Q_know's
ranking when a measure is missing; mistakes said before anything runs."""

from __future__ import annotations

import json

import pytest

from vericite import registry
from vericite.errors import VericiteError
from vericite.fakes.judges import ThreeWayJudge
from vericite.fakes.knowledge import FakeDocumentStore
from vericite.fakes.scoring import FakePairScorer
from vericite.generate.conner_select import QKnowScorer, best, partial_q_know, ranked
from vericite.metrics.conner import ConnerMetric
from vericite.models.fake import FakeBackend, last_user_message
from vericite.types import Passage, Sample

EVIDENCE = [Passage("e1", "Rome is the capital of Italy. Rome is an old city on the Tiber.", "Rome")]
#: candidate j (seed j) for the question about Rome: only candidate 2 says what the evidence says
BY_SEED = {0: "Paris is a big city. Paris has many towers.", 1: "Bananas are yellow. Bananas grow fast.", 2: "Rome is the capital of Italy. Rome is an old city."}


def sampler(messages, params):
    return BY_SEED.get(params.seed % 10, "Nothing here. Nothing there.")


def scorer(gamma=(0.25, 0.25, 0.25, 0.25)):
    metric = ConnerMetric(ThreeWayJudge(), lm=FakeBackend(), scorer=FakePairScorer(), retriever=FakeDocumentStore(EVIDENCE), metrics=("factuality", "relevance", "coherence_paragraph", "informativeness"), gamma=gamma, resamples=0)
    return QKnowScorer(metric, gamma)


def method(backend=None, **args):
    backend = backend or FakeBackend(replies=sampler)
    return registry.create("methods", "conner-knowledge", backend=backend, q_know=scorer(tuple(args.get("gamma", (0.25,) * 4))), **args), backend


ROME = Sample(id="q1", question="What is the capital of Italy?", answers=[["Rome"]])


def test_knowledge_selection_keeps_the_argmax_of_q_know():
    m, fake = method(select="knowledge", candidates=3, temperature=0.7, top_p=0.9)
    m.check_samples([ROME], "x")
    rec = m.answer(ROME)
    sel = rec["selection"]
    assert [c["seed"] for c in sel["candidates"]] == [0, 1, 2] and [c["knowledge"] for c in sel["candidates"]] == [BY_SEED[j] for j in range(3)]
    qs = [c["q_know"] for c in sel["candidates"]]
    # bananas: no passage of the evidence shares a word, so no factuality and no whole Q_know (ranked last)
    assert qs[1] is None and sel["candidates"][1]["not_computed"] == {"factuality": "no evidence (the item's passages, or --index)"}
    assert qs[0] is not None and qs[2] > qs[0] and sel["chosen"] == 2  # the one the evidence supports
    assert rec["output"] == BY_SEED[2] and fake.calls["generate"] == 3
    assert set(sel["candidates"][2]["scores"]) == {"factuality", "relevance", "coherence_paragraph", "informativeness"}
    assert rec["usage"]["completion_tokens"] == sum(len(BY_SEED[j].split()) for j in range(3))
    man = m.manifest()["selection"]
    assert man["select"] == "knowledge" and man["candidates"] == 3 and man["top_p"] == 0.9
    assert man["q_know"]["gamma"] == {"factuality": 0.25, "relevance": 0.25, "coherence_paragraph": 0.25, "informativeness": 0.25}
    json.dumps(rec), json.dumps(man)


def test_the_unselected_baseline_is_candidate_zero():
    base = registry.create("methods", "conner-knowledge", backend=FakeBackend(replies=sampler), temperature=0.7, top_p=0.9)
    base.check_samples([ROME], "x")
    rec = base.answer(ROME)
    assert rec["output"] == BY_SEED[0] and "selection" not in rec and "selection" not in base.manifest()


def test_gamma_decides():
    # all the weight on relevance: Jaccard of the query's words; candidate 2 shares "capital", "Italy"
    m, _ = method(select="knowledge", candidates=3, temperature=0.7, gamma=[0, 1, 0, 0])
    rec = m.answer(ROME)
    cands = rec["selection"]["candidates"]
    rel = [c["scores"]["relevance"] for c in cands]
    assert [c["q_know"] for c in cands] == [rel[0], None, rel[2]] and [c["q_know_partial"] for c in cands] == rel
    assert rec["selection"]["chosen"] == 2 and rel[2] > rel[0]


def test_ranking_when_a_measure_is_missing():
    whole = {"q_know": 0.2, "q_know_partial": 0.2}
    part = {"q_know": None, "q_know_partial": 0.9}
    none = {"q_know": None, "q_know_partial": None}
    assert best([part, whole, none]) == 1 and ranked([none, part, whole]) == [2, 1, 0]
    assert best([whole, dict(whole)]) == 0  # ties keep the earlier
    assert partial_q_know({"factuality": 1.0, "relevance": 0.5}, (0.5, 0.25, 0.25, 0.0)) == pytest.approx(0.833333, abs=1e-6)
    assert partial_q_know({}, (0.25,) * 4) is None


def pool_items(tmp_path, n=8):
    items = [{"id": f"d{i}", "question": f"What is thing {i}?", "meta": {"reference_knowledge": (
        "Rome is the capital of Italy. Rome is an old city." if i == 5 else f"Thing {i} is unknown. Nobody knows thing {i}.")}} for i in range(n)]
    path = tmp_path / "qs.jsonl"
    path.write_text("\n".join(json.dumps(x) for x in items) + "\n", encoding="utf-8")
    from vericite.datasets import load_samples

    return str(path), load_samples(str(path))


def test_demonstration_selection_takes_the_top_n_of_the_pool(tmp_path):
    spec, samples = pool_items(tmp_path)
    run = samples[:2]
    m, fake = method(select="demonstrations", shot=2, pool=6, seed=1)
    m.check_samples(run, spec)  # the pool is drawn from the whole dataset, not the run's two questions
    man = m.manifest()["selection"]
    pool = man["pool"]
    assert man["pool_size"] == 6 and len({p["id"] for p in pool}) == 6
    keys = [(p["q_know"] is not None, p["q_know"] if p["q_know"] is not None else p["q_know_partial"]) for p in pool]
    assert keys == sorted(keys, reverse=True)  # best first
    rec = m.answer(run[0])
    assert rec["demonstrations"] == [p["id"] for p in pool if p["id"] != run[0].id][:2]
    # the unselected baseline: the same pool (same seed), its first n in drawn order
    b, _ = method(shot=2, pool=6, seed=1)
    b.check_samples(run, spec)
    assert {p["id"] for p in b.manifest()["selection"]["pool"]} == {p["id"] for p in pool}
    assert b.answer(run[0])["demonstrations"] == [p["id"] for p in b.manifest()["selection"]["pool"] if p["id"] != run[0].id][:2]
    # with a different --limit the pool is the same
    c, _ = method(select="demonstrations", shot=2, pool=6, seed=1)
    c.check_samples(samples[:5], spec)
    assert [p["id"] for p in c.manifest()["selection"]["pool"]] == [p["id"] for p in pool]


def test_an_item_is_never_its_own_demonstration(tmp_path):
    spec, samples = pool_items(tmp_path, 4)
    m, _ = method(select="demonstrations", shot=3, pool=4)
    m.check_samples(samples, spec)
    for s in samples:
        demos = m.answer(s)["demonstrations"]
        assert s.id not in demos and len(demos) == 3


def test_mistakes_before_anything_runs(tmp_path):
    with pytest.raises(VericiteError, match="temperature > 0"):
        method(select="knowledge")
    with pytest.raises(VericiteError, match="shot=n"):
        method(select="demonstrations", shot=2)
    with pytest.raises(VericiteError, match="source=generate"):
        method(select="knowledge", source="reference", temperature=1.0)
    with pytest.raises(VericiteError, match="index=DIR"):
        registry.create("methods", "conner-knowledge", backend=FakeBackend(), select="knowledge", temperature=1.0)
    with pytest.raises(VericiteError, match="invalid"):
        registry.create("methods", "conner-knowledge", backend=FakeBackend(), gamma=[1, 2])
    spec, samples = pool_items(tmp_path, 3)
    m, _ = method(select="demonstrations", shot=3, pool=3)
    with pytest.raises(VericiteError, match="needs more than shot=3"):
        m.check_samples(samples, spec)


def test_scoring_the_pool_shows_progress_unless_quiet(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr("vericite.progress.LOG_INTERVAL_S", 0)  # a plain line at every step
    spec, samples = pool_items(tmp_path)
    for enabled in (True, False):
        m, _ = method(select="demonstrations", shot=2, pool=6)
        m.show_progress(enabled)
        m.check_samples(samples[:2], spec)
        err = capsys.readouterr().err
        assert ("Q_know of the demonstration pool: judging" in err) is enabled, err


def test_demonstration_knowledge_is_cut_to_demo_words():
    samples = [Sample(id=f"s{i}", question=f"q {i}?", meta={"reference_knowledge": " ".join(f"w{j}" for j in range(50))}) for i in range(3)]
    m = registry.create("methods", "conner-knowledge", backend=FakeBackend(default="K."), shot=1, demo_words=5, demo_draw="run")
    m.check_samples(samples, "x")
    m.answer(samples[0])
    prompt = m.backend.prompts[0][-1]["content"]
    assert "Wikipedia: w0 w1 w2 w3 w4\n" in prompt and "w5" not in prompt
    ref = registry.create("methods", "conner-knowledge", backend=None, source="reference", demo_words=5)
    ref.check_samples(samples, "x")
    assert len(ref.answer(samples[0])["output"].split()) == 50  # the reference knowledge itself is whole


def test_the_pool_of_a_dataset_that_repeats_an_id_holds_its_first_question_once(tmp_path):
    # generate asks the first question of a repeated id (warning once, datasets/duplicates.py); the pool, drawn from
    # the whole dataset again, follows the same rule rather than ending the run on the repeat
    spec, samples = pool_items(tmp_path)
    with open(spec, "a", encoding="utf-8") as f:
        f.write(json.dumps({"id": "d5", "question": "Asked again?", "meta": {"reference_knowledge": "Paris is big. Paris is old."}}) + "\n")
    m, _ = method(shot=2, pool=8, seed=1)
    m.check_samples(samples[:2], spec)
    pool = m.manifest()["selection"]["pool"]
    assert sorted(p["id"] for p in pool) == [f"d{i}" for i in range(8)]


def test_q_know_takes_the_paragraph_coherence_model_of_select_coherence_model(tmp_path):
    # Q_know's S_coh_para from a plugged discourse model (a pair scorer), as evaluate's conner:coherence_model
    from click.testing import CliRunner

    from vericite.cli.main import cli

    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text(json.dumps({"id": "e1", "title": "Rome", "text": EVIDENCE[0].text}) + "\n", encoding="utf-8")
    assert CliRunner().invoke(cli, ["docs", "index", str(corpus), "--index", str(tmp_path / "idx"), "-q"]).exit_code == 0
    common = dict(backend=FakeBackend(replies=sampler), select="knowledge", candidates=2, temperature=1.0, index=str(tmp_path / "idx"),
                  select_judge="fake-3way", select_relevance_model="fake")
    plugged = registry.create("methods", "conner-knowledge", select_coherence_model="fake", **common)
    plugged.check_samples([ROME], "x")
    rec = plugged.answer(ROME)
    q = plugged.manifest()["selection"]["q_know"]
    assert q["coherence_paragraph_model"].startswith("fake-scorer@1") and q["deviations"] == []
    from vericite.fakes.scoring import FakePairScorer as F
    from vericite.metrics.conner_specs import sigmoid

    first = rec["selection"]["candidates"][0]
    assert first["scores"]["coherence_paragraph"] == pytest.approx(round(sigmoid(F().score([(ROME.question, BY_SEED[0])])[0]), 6))
    default = registry.create("methods", "conner-knowledge", **common)
    assert default.manifest()["selection"]["q_know"]["coherence_paragraph_model"] == "sentence-order test of fake"
