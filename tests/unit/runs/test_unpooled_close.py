"""``generate`` and ``evaluate`` without a pool close what they built, as a pool's worker does
(``models.close_all``): the method or the judge and suite, then the models loaded for them, each once; a backend
or a judge the caller gave is the caller's."""

from __future__ import annotations

import pytest

from vericite.fakes.judges import KeywordJudge
from vericite.models.fake import FakeBackend
from vericite.runs.config import GenerateConfig
from vericite.runs.loop import generate_run
from vericite.types import Sample

from tests.support.vtg import DOCS, QUESTION, slow_script

SAMPLES = [Sample(f"q{i}", QUESTION, passages=list(DOCS)) for i in range(1, 3)]


def counting(monkeypatch) -> dict[str, int]:
    closed: dict[str, int] = {}

    def counting_close(self) -> None:
        closed[f"{self.name}#{id(self)}"] = closed.get(f"{self.name}#{id(self)}", 0) + 1

    monkeypatch.setattr(FakeBackend, "close", counting_close)
    return closed


def test_generate_without_a_pool_closes_the_methods_own_judge_model_once(tmp_path, monkeypatch):
    closed = counting(monkeypatch)
    cfg = GenerateConfig(dataset="x", method="vtg", model="vtg-script", cache=False,
                         method_args={"k": 2, "verifier_judge": "llm:fake:judge", "docs_per_query": 1, "trials": 1})  # fmt: skip
    shared = slow_script()
    generate_run(cfg, tmp_path / "r", samples=SAMPLES, backend=shared, progress=False)
    judges = {k: v for k, v in closed.items() if k.startswith("fake:judge#")}
    assert len(judges) == 1 and set(judges.values()) == {1}, closed
    assert not any(k.startswith(f"{shared.name}#") for k in closed)  # the backend given is the caller's


def test_evaluate_without_a_pool_closes_the_models_it_loaded_once_and_not_those_given(tmp_path, monkeypatch):
    import json

    import vericite.models as models
    from vericite.evaluate import EvaluateConfig, evaluate_items, read_answers
    from vericite.evaluate.inputs import load_task
    from vericite.judges.llm import LLMJudge

    closed = counting(monkeypatch)
    loaded: dict[str, FakeBackend] = {}
    monkeypatch.setattr(models, "load_model", lambda name, **kw: loaded.setdefault(name, FakeBackend(name, default="Yes")))
    knowledge = [{"subject": "Q1", "subject_label": "Ann", "property": "place of birth", "value": "Rome"}]
    rec = {"id": "a", "question": "Where was Ann born?", "answer": "Ann was born in Rome [Q1, place of birth: Rome].", "knowledge": knowledge}
    f = tmp_path / "in.jsonl"
    f.write_text(json.dumps(rec) + "\n", encoding="utf-8")
    items = lambda: read_answers(f, load_task("kalma")).items  # noqa: E731
    evaluate_items(items(), EvaluateConfig(judge="llm:fake:judge", geval_model="fake:geval", resamples=0, cache=False))
    assert sorted(closed) == sorted(f"{b.name}#{id(b)}" for b in loaded.values()) and set(closed.values()) == {1}, closed
    closed.clear()
    ready = FakeBackend("fake:ready", default="No")
    evaluate_items(items(), EvaluateConfig(geval_model="fake:geval", resamples=0, cache=False), judge=LLMJudge(ready), models={"fake:geval": loaded["fake:geval"]})
    assert closed == {}  # the judge and the model given are the caller's


class OwnedJudge(KeywordJudge):
    """A judge its caller opened (it has ``close()``, with a model of its own): the caller's to close."""

    def __init__(self) -> None:
        super().__init__("owned")
        self.backend = FakeBackend("fake:owned-judge", default="Yes")
        self.closes = 0

    def close(self) -> None:
        self.closes += 1


@pytest.mark.parametrize("method", ["vtg", "rerank"])
def test_a_judge_handed_to_a_method_is_not_closed_by_its_run(tmp_path, monkeypatch, method):
    """generate's run closes the method and the models it loaded, never a judge handed to the method (``judge=``,
    as a ready ``backend``): VTG's and rerank's ``close()`` close only the graph store their factory opened. (A
    check that the rule holds; nothing in vericite closed such a judge.)"""
    closed = counting(monkeypatch)
    args = {"k": 2, "docs_per_query": 1, "trials": 1} if method == "vtg" else {"samples": 2}
    cfg = GenerateConfig(dataset="x", method=method, model="vtg-script", cache=False, method_args=args)
    judge, shared = OwnedJudge(), slow_script()
    generate_run(cfg, tmp_path / "r", samples=SAMPLES, backend=shared, judge=judge, progress=False)
    assert judge.closes == 0 and closed == {}, closed  # neither the judge, its model, nor the backend given
    assert "fake:owned@1" in (tmp_path / "r" / "manifest.json").read_text()  # the method was given it and used it
