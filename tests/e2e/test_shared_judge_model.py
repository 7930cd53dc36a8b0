"""A judge whose model is one the command already loaded shares that instance, whatever its prompt number: VTG's
verifier and rerank's judge (``--judge llm:<model>@2`` as ``llm:<model>``) share the method's backend, and a run's
judge shares the run's answering model. One load of the weights, not two; the answers are the same."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from tests.support.ray_runs import without_timings
from tests.support.vtg import scripted
from vericite import registry
from vericite.cli.main import cli
from vericite.models.fake import FakeBackend
from vericite.runs.config import GenerateConfig
from vericite.runs.loop import build_method

ITEMS = [
    {"question": "Which cities are capitals?", "answer": "Paris and Rome are capitals.", "claims": ["Paris is a capital."],
     "docs": [{"title": "Paris", "text": "Paris is the capital of France."}, {"title": "Rome", "text": "Rome is the capital of Italy."}]},
]  # fmt: skip


@pytest.fixture
def counted():
    """Backend ``counted:<name>``: the scripted VTG model (``counted:plain``: the fake model); ``loads`` lists the names loaded, one entry a load."""
    loads: list[str] = []

    def factory(arg, *, ctx, **options):
        loads.append(arg)
        if arg == "plain":  # the fake model's own replies
            return FakeBackend(f"counted-{arg}")
        inner = scripted(["Paris is the capital of France.", "Rome is the capital of Italy."], cites={"Paris": "[1]", "Rome": "title:Rome"})

        def reply(messages, params):
            try:
                return inner.replies(messages, params)
            except IndexError:  # not one of VTG's prompts: a judge's (the answer's first word decides) or the fake method's
                return "Yes"

        return FakeBackend(f"counted-{arg}", replies=reply)

    registry.backends.register("counted", factory, replace=True)
    yield loads
    registry.backends.unregister("counted")


def method(method_name, judge_option, judge, **args):
    cfg = GenerateConfig(method=method_name, model="counted:m", dataset="unused.json", cache=False, method_args={judge_option: judge, **args})
    return build_method(cfg)


@pytest.mark.parametrize("judge", ["llm:counted:m", "llm:counted:m@1", "llm:counted:m@2"])
@pytest.mark.parametrize("method_name, option", [("vtg", "verifier_judge"), ("rerank", "rerank_judge")])
def test_a_judge_of_the_methods_model_shares_its_backend_whatever_its_prompt(counted, method_name, option, judge):
    m = method(method_name, option, judge)
    assert counted == ["m"]  # the weights loaded once
    assert m.judge.backend is m.backend
    assert m.judge.prompt_version == ("judge-support@1" if judge.endswith("@1") else "judge-support@2")  # its own prompt still


def test_a_judge_of_another_model_loads_that_model(counted):
    m = method("vtg", "verifier_judge", "llm:counted:other@2")
    assert counted == ["m", "other"] and m.judge.backend is not m.backend


def test_a_ready_backend_serves_a_judge_of_its_model(counted):
    """``vericite run`` gives the method its loaded model: a judge naming that model gets it, nothing is loaded."""
    ready = FakeBackend("counted:m")
    cfg = GenerateConfig(method="vtg", model="counted:m", dataset="unused.json", cache=False, method_args={"verifier_judge": "llm:counted:m@2"})
    m = build_method(cfg, backend=ready)
    assert counted == [] and m.judge.backend is m.backend


def test_generate_vtg_with_the_prompt_number_spelled_out_answers_as_without_it(tmp_path, counted):
    """``--judge llm:<model>@2`` is ``--judge llm:<model>`` (judge-support@2 is the default): one load each, the
    same answers and traces, the judge's calls counted as the verifier's."""
    data = tmp_path / "eli5_eval.json"
    data.write_text(json.dumps(ITEMS), encoding="utf-8")
    got = {}
    for name, judge in (("plain", "llm:counted:m"), ("numbered", "llm:counted:m@2")):
        counted.clear()
        r = CliRunner().invoke(cli, ["generate", "--method", "vtg", "--dataset", str(data), "--model", "counted:m", "--judge", judge, "--k", "2",
                                     "--queries", "1", "--docs-per-query", "1", "--trials", "1", "--out", str(tmp_path / name), "-q", "--no-cache"])  # fmt: skip
        assert r.exit_code == 0, r.output
        assert counted == ["m"], name
        got[name] = [json.loads(line) for line in without_timings((tmp_path / name / "samples.jsonl").read_text()).splitlines()]
    assert got["plain"][0]["vtg"]["judge"]["calls"] > 0
    for a, b in zip(got["plain"], got["numbered"]):
        a["vtg"].pop("seconds", None), b["vtg"].pop("seconds", None)
        assert a == b


def test_a_runs_judge_of_the_answering_model_shares_it(tmp_path, counted):
    from vericite.runs.runner import load_run_config, run_config

    rows = [{"id": "q0", "question": "What did P0 do?", "knowledge": [{"subject": "Q0", "subject_label": "P0", "property": "occupation", "value": "job0"}]}]
    data = tmp_path / "q.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    yaml = tmp_path / "c.yaml"
    yaml.write_text(f"name: t\ndataset: {data}\nmodel: counted:plain\nmethod: fake\nresamples: 5\njudge: llm:counted:plain@2\ncache: false\n")
    res = run_config(load_run_config(yaml, {}), tmp_path / "out", progress=False)
    assert counted == ["plain"]  # the answering model, loaded once, judged with
    assert res["judges"]["alignment"]["id"] == "llm:fake:counted-plain@2"
    assert res["judge_usage"]["fake:counted-plain"]["calls"] >= 1  # the judge's calls still counted as the evaluation's
