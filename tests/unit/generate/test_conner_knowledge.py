"""conner-knowledge: CONNER's zero-shot prompt, few-shot demonstrations from the other questions of the run
(``demo_draw=run``; the dataset's, the default: test_conner_demo_draw.py; never the item itself, seeded), retrieved
and reference knowledge; mistakes said before anything runs."""

from __future__ import annotations

import pytest

from vericite import registry
from vericite.errors import VericiteError
from vericite.models.fake import FakeBackend
from vericite.types import Sample

SAMPLES = [Sample(id=f"s{i}", question=f"question {i}?", meta={"topic": f"T{i}", "reference_knowledge": f"knowledge {i}."}) for i in range(4)]


def method(**args):
    fake = FakeBackend(default="Rome is old.")
    m = registry.create("methods", "conner-knowledge", backend=fake, **args)
    return m, fake


def test_zero_shot_prompt_is_connners():
    m, fake = method()
    m.check_samples(SAMPLES, "x")
    rec = m.answer(SAMPLES[0])
    assert rec["output"] == "Rome is old." and rec["knowledge_source"] == "generate" and "demonstrations" not in rec
    assert fake.prompts[0][-1]["content"] == "Topic: T0\nGenerate a Wikipedia to answer the given question.\nQuestion: question 0?\nWikipedia:"


def test_few_shot_demonstrations_are_other_items_with_their_reference():
    m, fake = method(shot=2, seed=3, demo_draw="run")
    m.check_samples(SAMPLES, "x")
    rec = m.answer(SAMPLES[1])
    assert len(rec["demonstrations"]) == 2 and "s1" not in rec["demonstrations"]
    prompt = fake.prompts[0][-1]["content"]
    for d in rec["demonstrations"]:
        assert f"Wikipedia: knowledge {d[1:]}." in prompt
    assert prompt.endswith("Question: question 1?\nWikipedia:")
    again, _ = method(shot=2, seed=3, demo_draw="run")
    again.check_samples(SAMPLES, "x")
    assert again.answer(SAMPLES[1])["demonstrations"] == rec["demonstrations"]


def test_reference_and_retrieved_knowledge():
    m, fake = method(source="reference")
    m.check_samples(SAMPLES, "x")
    assert m.answer(SAMPLES[2])["output"] == "knowledge 2." and fake.n_calls == 0

    class Store:
        def search(self, q, k):
            from vericite.types import Passage

            return [(Passage("p1", "Retrieved text."), 1.0)]

    m = registry.create("methods", "conner-knowledge", backend=None, retriever=Store(), source="retrieve")
    m.check_samples(SAMPLES, "x")
    rec = m.answer(SAMPLES[0])
    assert rec["output"] == "Retrieved text." and rec["retrieved"] == ["p1"]


def test_mistakes_before_anything_runs():
    m, _ = method(shot=4, demo_draw="run")  # the run's questions (demo_draw=dataset: test_conner_demo_draw.py)
    with pytest.raises(VericiteError, match="shot=4"):
        m.check_samples(SAMPLES, "x")
    m = registry.create("methods", "conner-knowledge", backend=None, source="retrieve")
    with pytest.raises(VericiteError, match="needs an index"):
        m.check_samples(SAMPLES, "x")
    m, _ = method(source="reference")
    with pytest.raises(VericiteError, match="no reference knowledge"):
        m.check_samples([Sample(id="a", question="q")], "mine")
    with pytest.raises(VericiteError, match="invalid"):
        method(source="web")


def test_few_shot_demonstrations_are_cut_to_200_words_by_default():
    # issue 14's `generate --method conner-knowledge --dataset nq-500 --shot 4 --limit 50`: some gold passages of
    # nq-500 are whole articles (up to 26k words); uncut, 16 of the first 50 prompts exceed a 4,096-token context
    long = [Sample(id=f"s{i}", question=f"q {i}?", meta={"reference_knowledge": " ".join(f"w{j}" for j in range(300))}) for i in range(3)]
    m, fake = method(shot=1, demo_draw="run")
    m.check_samples(long, "x")
    m.answer(long[0])
    prompt = fake.prompts[0][-1]["content"]
    assert " w199\n" in prompt and "w200" not in prompt
    assert m.manifest()["demo_words"] == 200
    m, fake = method(shot=1, demo_words=250, demo_draw="run")
    m.check_samples(long, "x")
    m.answer(long[0])
    assert " w249\n" in fake.prompts[0][-1]["content"] and m.manifest()["demo_words"] == 250
    zero, _ = method()
    zero.check_samples(long, "x")
    assert "demo_words" not in zero.manifest()  # zero-shot: no demonstration


def test_wows_dialogue_history_as_the_query_is_a_deviation_in_the_manifest():
    # it was recorded only by the evaluation (evaluation.conner.deviations), though the generation's prompt reads it
    from vericite.generate.conner import WOW_QUERY_DEVIATION
    from vericite.metrics.conner import WOW_QUERY_DEVIATION as EVALUATIONS

    wow = [Sample(id=f"w{i}", question=f"i like beards.\nAdult males grow them {i}!", meta={"topic": "Beard", "last_utterance": f"Adult males grow them {i}!",
                                                                                             "reference_knowledge": "A beard is hair."}) for i in range(3)]  # fmt: skip
    m, fake = method()
    m.check_samples(wow, "wow-test-500")
    assert m.manifest()["deviations"] == [WOW_QUERY_DEVIATION] and WOW_QUERY_DEVIATION != EVALUATIONS
    m.answer(wow[0])
    assert "Question: i like beards.\nAdult males grow them 0!" in fake.prompts[0][-1]["content"]  # the whole history, as it says
    plain, _ = method()
    plain.check_samples(SAMPLES, "x")
    assert plain.manifest()["deviations"] == []
    ref, _ = method(source="reference")  # the query is not read: no deviation
    ref.check_samples(wow, "wow-test-500")
    assert ref.manifest()["deviations"] == []


def test_a_manifest_written_before_its_deviations_were_recorded_still_resumes(tmp_path):
    # deviations follow from the method and its inputs: --resume does not compare them (as evaluate's)
    import json

    from vericite.runs.rundir import RunDir

    m, _ = method()
    m.check_samples(SAMPLES, "x")
    header = {"kind": "generate", "config": {"method": "conner-knowledge"}, **m.manifest(), "deviations": []}
    with RunDir.open(tmp_path / "r", dict(header), resume=False):
        pass
    old = json.loads((tmp_path / "r" / "manifest.json").read_text())
    (tmp_path / "r" / "manifest.json").write_text(json.dumps({**old, "deviations": ["something noted then"]}), encoding="utf-8")
    with RunDir.open(tmp_path / "r", dict(header), resume=True):
        pass
