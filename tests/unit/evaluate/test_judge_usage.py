"""`vericite evaluate` reports what its judges' model calls cost, per model name (``judge_usage``): the LLM
judge's next-token calls with the tokens the backend reports (the fake's: the prompt's words, one completion
token), G-Eval's likewise, a ready judge's under its model's name, and a judge that judges elsewhere not at all."""

from __future__ import annotations

import json

import pytest

import vericite.models as models
from vericite.evaluate import EvaluateConfig, evaluate_items, read_answers
from vericite.evaluate.inputs import load_task
from vericite.judges.llm import LLMJudge
from vericite.models.fake import FakeBackend

KNOWLEDGE = [{"subject": "Q1", "subject_label": "Ann", "property": "place of birth", "value": "Rome"}]


@pytest.fixture()
def items(tmp_path):
    recs = [{"id": "a", "question": "Where was Ann born?", "answer": "Ann was born in Rome [Q1, place of birth: Rome].", "knowledge": KNOWLEDGE},
            {"id": "b", "question": "Where was Ann born?", "answer": "Ann was born in Paris [Q1, place of birth: Rome].", "knowledge": KNOWLEDGE}]
    f = tmp_path / "in.jsonl"
    f.write_text("".join(json.dumps(r) + "\n" for r in recs), encoding="utf-8")
    return lambda: read_answers(f, load_task("kalma")).items


def words(backend: FakeBackend) -> int:
    return sum(len(str(m.get("content", "")).split()) for p in backend.prompts for m in p)


def test_each_model_the_evaluation_loads_reports_its_usage(items, monkeypatch):
    loaded: dict[str, FakeBackend] = {}
    monkeypatch.setattr(models, "load_model", lambda name, **kw: loaded.setdefault(name, FakeBackend(name, default="Yes")))
    cfg = EvaluateConfig(judge="llm:fake:judge", geval_model="fake:geval", resamples=0, cache=False)
    body, _ = evaluate_items(items(), cfg)
    assert set(body["judge_usage"]) == {"fake:judge", "fake:geval"}
    for name, b in loaded.items():
        n = b.calls["next_token_logprobs"]
        assert n > 0 and body["judge_usage"][name] == {"prompt_tokens": words(b), "completion_tokens": n, "calls": n}, name


def test_a_ready_judge_is_counted_under_its_models_name_and_one_without_a_model_is_not(items, monkeypatch):
    monkeypatch.setattr(models, "load_model", lambda name, **kw: pytest.fail(f"{name} loaded"))
    judge_model = FakeBackend("fake:ready", default="No")
    body, _ = evaluate_items(items(), EvaluateConfig(resamples=0, cache=False), judge=LLMJudge(judge_model))
    n = judge_model.calls["next_token_logprobs"]
    assert n > 0 and body["judge_usage"] == {"fake:ready": {"prompt_tokens": words(judge_model), "completion_tokens": n, "calls": n}}
    assert LLMJudge(judge_model).backend is judge_model  # the judge's model is given back as it was

    class Remote:  # judges elsewhere (--ray's PoolJudge): its model is not this process's to count
        def __init__(self, local):
            self._local = local

        def __getattr__(self, name):
            return getattr(self._local, name)

        def judge(self, pairs):
            return LLMJudge(FakeBackend("fake:elsewhere", default="Yes")).judge(pairs)

    body, _ = evaluate_items(items(), EvaluateConfig(resamples=0, cache=False), judge=Remote(LLMJudge(FakeBackend("fake:local"))))
    assert body["judge_usage"] == {}  # no entry rather than a zero


def test_the_triple_judge_makes_no_model_calls(items):
    body, _ = evaluate_items(items(), EvaluateConfig(resamples=0, cache=False))
    assert body["judge_usage"] == {}


def test_a_resumed_evaluation_reports_the_usage_of_an_uninterrupted_one(tmp_path, monkeypatch):
    """Each answer's line in the per-answer checkpoint keeps what its judging cost; a resumed evaluation adds the
    lines it reads back, so its ``judge_usage`` is an uninterrupted one's."""
    from click.testing import CliRunner

    from vericite.cli.main import cli

    recs = [{"id": f"a{i}", "question": "Where was Ann born?", "answer": f"Ann was born in Rome [Q1, place of birth: Rome]. Fact {i} [Q1, place of birth: Rome].",
             "knowledge": KNOWLEDGE} for i in range(4)]
    f = tmp_path / "in.jsonl"
    f.write_text("".join(json.dumps(r) + "\n" for r in recs), encoding="utf-8")

    def run(out, *extra):
        return CliRunner().invoke(cli, ["evaluate", "-i", str(f), "-o", str(tmp_path / out), "-q", "--judge", "llm:fake", "--no-cache", "--resamples", "20", *extra])

    def usage(out):
        return json.loads((tmp_path / out / "results.json").read_text())["judge_usage"]

    assert run("whole").exit_code == 0
    whole = usage("whole")
    assert whole["fake"]["calls"] > 0
    real, n = LLMJudge.judge, [0]

    def cut(self, pairs):
        n[0] += 1
        if n[0] == 3:
            raise KeyboardInterrupt
        return real(self, pairs)

    monkeypatch.setattr(LLMJudge, "judge", cut)
    assert run("cut").exit_code == 130
    lines = [json.loads(x) for x in (tmp_path / "cut" / ".evaluate-answers.jsonl").read_text().splitlines()[1:]]
    assert lines and all(line["usage"]["fake"]["calls"] > 0 for line in lines)
    monkeypatch.setattr(LLMJudge, "judge", real)
    assert run("cut", "--resume").exit_code == 0
    assert usage("cut") == whole
