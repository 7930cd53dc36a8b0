"""Contract of Metric: one result per declared name, for any corpus, the empty one included; the registered
KaLMA family gives the numbers ``evaluate_kalma`` gives; a family that is PairedStatistics rebuilds from the
records evaluate writes the statistics its values are computed with (what ``vericite compare`` pairs); a family
with a judge, run answer by answer as evaluate's checkpoint runs it, has asked every pair of its corpus run."""

from __future__ import annotations

import json

import pytest

from vericite.attribution.kg import KgFormat
from vericite.errors import VericiteError
from vericite.fakes.pipeline import FakeDataset
from vericite.metrics.base import MetricRun, point
from vericite.protocols import FamilyFactory, Metric, PairedStatistics
from vericite.registry import registry_for

from .impls import params


@pytest.fixture(params=params("metrics"))
def metric(request, tmp_path):
    return request.param.build(tmp_path)


def corpus():
    samples = FakeDataset().load()
    replies = [f"It is {s.knowledge[1].value} [{s.id and s.knowledge[1].subject}, {s.knowledge[1].property}: {s.knowledge[1].value}]. More [NA]." for s in samples]
    return samples, [KgFormat().parse(r, s.knowledge) for r, s in zip(replies, samples)]


@pytest.fixture(params=params("metrics"))
def built(request, tmp_path):
    return request.param, request.param.build(tmp_path)


def test_declares_itself(metric):
    assert isinstance(metric, Metric) and "@" in metric.id
    assert metric.names and all(isinstance(n, str) for n in metric.names) and len(set(metric.names)) == len(metric.names)
    assert "answer" in metric.inputs


def test_one_result_per_name(metric):
    samples, answers = corpus()
    results = metric.compute(samples, answers)
    assert list(results) == list(metric.names)
    for name, r in results.items():
        assert r.name == name and isinstance(r.n, int) and r.n >= 0
        assert r.value is None or isinstance(r.value, float)
        assert (r.value is None) == (r.reason is not None)
        json.dumps(r.to_dict())
    assert any(r.value is not None for r in results.values())
    again = metric.compute(samples, answers)
    assert {k: r.value for k, r in again.items()} == {k: r.value for k, r in results.items()}


def test_empty_corpus_is_not_computed_rather_than_zero(metric):
    results = metric.compute([], [])
    assert list(results) == list(metric.names) and all(r.value is None and r.reason for r in results.values())


def test_one_answer_per_sample(metric):
    samples, answers = corpus()
    with pytest.raises(VericiteError):
        metric.compute(samples, answers[:-1])


def test_registered_kalma_family_gives_evaluate_kalma_s_numbers():
    from vericite.judges.triple import TripleJudge
    from vericite.metrics.kalma import KalmaItem
    from vericite.metrics.kalma_eval import evaluate_kalma
    from vericite.registry import create

    samples, answers = corpus()
    got = create("metrics", "kalma", judge="triple", resamples=100, seed=3).compute(samples, answers)
    want = evaluate_kalma([KalmaItem.from_sample(s, a) for s, a in zip(samples, answers)], TripleJudge(), resamples=100, seed=3).results
    assert {k: r.to_dict() for k, r in got.items()} == {k: r.to_dict() for k, r in want.items()}


def test_paired_statistics_rebuild_the_values_from_the_records(built):
    impl, metric = built
    factory = registry_for("metrics").get(impl.name)
    family = factory.family if isinstance(factory, FamilyFactory) else factory  # read without building it
    assert isinstance(metric, PairedStatistics) == isinstance(family, PairedStatistics)
    if not isinstance(family, PairedStatistics):
        return  # its runs are shown by compare, not compared
    assert isinstance(metric, family) and all(isinstance(k, str) for k in family.compared_settings)
    samples, answers = corpus()
    run = MetricRun.of(metric, samples, answers)
    # a samples.jsonl record as evaluate writes it: the sample, the parsed answer, the family's scores
    records = [{**s.to_dict(), "answer": a.to_dict(), "scores": sc} for s, a, sc in zip(samples, answers, run.scores)]
    cs = family.statistics_from_records(json.loads(json.dumps(records)))
    assert set(cs.statistics) | set(cs.reasons) == set(metric.names)
    for name, r in run.results.items():
        assert (name in cs.live) == (r.value is not None), name
        if r.value is not None:
            assert point(cs.live[name], len(records)) == pytest.approx(r.value, abs=1e-12) and cs.ns[name] == r.n, name


def test_a_judged_family_scored_answer_by_answer_asks_the_corpus_no_new_pair(built, tmp_path):
    """What ``evaluate``'s checkpoint relies on (evaluate/checkpoint.py): a family that holds a judge, its judged part
    run on each answer alone, has asked every pair its corpus run asks, so a resumed corpus run judges nothing."""
    from types import SimpleNamespace

    from vericite.evaluate.checkpoint import AnswerCheckpoint
    from vericite.evaluate.answer_scoring import score_answer_by_answer

    impl, metric = built
    if getattr(metric, "judge", None) is None:
        return  # nothing judged, nothing checkpointed: computed over the corpus at the end
    asked: list[int] = []
    real = metric.judge

    class Counting:
        id = getattr(real, "id", "judge")

        def __getattr__(self, name):
            return getattr(real, name)

        def judge(self, pairs):
            asked.append(len(pairs))
            return real.judge(pairs)

    metric.judge = Counting()
    samples, answers = corpus()
    ck = AnswerCheckpoint.open(tmp_path, {"config": {}})
    score_answer_by_answer([metric], [SimpleNamespace(sample=s, answer=a) for s, a in zip(samples, answers)], ck)
    by_answer = sum(asked)
    assert len(ck.done) == len(samples) and (by_answer == 0 or ck.memo)
    run = MetricRun.of(metric, samples, answers)
    assert sum(asked) == by_answer, "the corpus run asked the judge pairs the answers alone did not"
    plain = MetricRun.of(impl.build(tmp_path / "plain"), samples, answers)  # the family as evaluate ran it before
    assert {k: r.to_dict() for k, r in run.results.items()} == {k: r.to_dict() for k, r in plain.results.items()}
    assert run.scores == plain.scores and run.judgements == plain.judgements
