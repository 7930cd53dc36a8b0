"""A plugin's model backend, scoring LM or relevance model that raises something other than a ``BackendError``
goes the way a model that cannot answer goes, in every command that calls it, never a traceback: ``generate``
fails the question (``errors.jsonl``, counted, the run resumable), ``evaluate --task conner`` and ``run`` end in
one line naming the plugin with the exit code a server's failure gets, the answers scored so far kept for
``--resume``. Each case is checked against the same failure as a ``BackendError`` (a server that fails), so the
plugin's bug is handled exactly as the failure vericite already handles. The plugins are registered as in
``test_plugin_kinds_failures.py``."""

from __future__ import annotations

import json

import pytest

from tests.e2e.test_plugin_kinds_failures import errors_of, invoke, one_line, plugin  # noqa: F401  (plugin: a fixture)
from vericite import registry
from vericite.errors import BackendError
from vericite.fakes.scoring import FakePairScorer
from vericite.models.fake import FakeBackend

#: what a plugin raises, and how its line reads (a BackendError is the server's own line, the rest name the plugin)
RAISED = {
    "server": (BackendError("the server said 500"), "the server said 500"),
    "KeyError": (KeyError("logits"), "backend 'flaky-lm' (plugin) failed: KeyError: 'logits'"),
    "RuntimeError": (RuntimeError("CUDA error: out of memory"), "backend 'flaky-lm' (plugin) failed: RuntimeError: CUDA error: out of memory"),
}

LINES = [
    {"id": "a", "query": "What is the capital of Italy?", "knowledge": "Rome is the capital of Italy. Rome is old.", "answer": "Rome", "evidence": ["Rome is the capital of Italy."]},
    {"id": "b", "query": "Who wrote Hamlet?", "knowledge": "Hamlet was written by Shakespeare. It is a play.", "answer": "Shakespeare", "evidence": ["Shakespeare wrote Hamlet."]},
]
FAKES = ["--judge", "fake-3way", "-q", "--resamples", "20", "--no-cache"]


class FlakyLM(FakeBackend):
    """A plugin LM whose scoring (continuation log-probabilities, token spans, perplexities) and generation raise
    ``raised`` for a text about Hamlet while ``broken`` is set."""

    broken = True
    raised: BaseException = RuntimeError()

    def __init__(self) -> None:
        super().__init__("flaky-lm")

    def _check(self, texts) -> None:
        if FlakyLM.broken and any("Hamlet" in str(t) for t in texts):
            raise FlakyLM.raised

    def logprobs(self, texts):
        self._check(texts)
        return super().logprobs(texts)

    def continuation_logprobs(self, pairs):
        self._check(pairs)
        return super().continuation_logprobs(pairs)

    def continuation_token_spans(self, pairs):
        self._check(pairs)
        return super().continuation_token_spans(pairs)

    def generate(self, prompts, params):
        self._check(prompts)
        return super().generate(prompts, params)


class FlakyRelevance(FakePairScorer):
    """A plugin relevance model that raises ``FlakyLM.raised`` for a pair about Hamlet while ``FlakyLM.broken``."""

    def score(self, pairs):
        FlakyLM._check(None, pairs)  # type: ignore[arg-type]
        return super().score(pairs)


@pytest.fixture
def flaky(plugin):
    FlakyLM.broken = True
    plugin(registry.backends, "flaky-lm", FlakyLM)
    plugin(registry.scorers, "flaky-relevance", FlakyRelevance)

    def raising(case: str) -> str:
        FlakyLM.raised = RAISED[case][0]
        return RAISED[case][1]

    return raising


def lines(tmp_path):
    p = tmp_path / "k.jsonl"
    p.write_text("".join(json.dumps(x) + "\n" for x in LINES), encoding="utf-8")
    return p


@pytest.mark.parametrize("case", list(RAISED))
@pytest.mark.parametrize("model", [["--lm", "flaky-lm", "--relevance-model", "fake"], ["--lm", "fake", "--relevance-model", "flaky-relevance"]], ids=["lm", "relevance"])
def test_evaluate_conner_with_a_plugin_model_that_raises_ends_as_a_failing_server_does_and_resumes(tmp_path, flaky, case, model):
    line = flaky(case)
    if "flaky-relevance" in model and case != "server":
        line = line.replace("backend 'flaky-lm'", "pair scorer 'flaky-relevance'")
    out = tmp_path / "ev"
    r = invoke(["evaluate", "--task", "conner", "-i", str(lines(tmp_path)), "-o", str(out), *model, *FAKES])
    assert one_line(r) == f"error: {line}"
    FlakyLM.broken = False  # the plugin fixed (or the server back): the evaluation resumes
    r = invoke(["evaluate", "--task", "conner", "-i", str(lines(tmp_path)), "-o", str(out), *model, *FAKES, "--resume"])
    assert r.exit_code == 0 and r.exception is None, r.output
    assert json.loads((out / "results.json").read_text())["counts"]["samples"] == 2


def run_config(tmp_path, lm: str, relevance: str):
    """A CONNER run over the two questions: the fake model writes the knowledge, the evidence comes from an index."""
    p = tmp_path / "conner.yaml"
    p.write_text(f"name: t\ndataset: {questions(tmp_path)}\nmodel: fake\nmethod: conner-knowledge\nmethod_args: {{index: {index(tmp_path)}}}\ntask: conner\n"
                 f"judge: fake-3way\nlm: {lm}\nrelevance_model: {relevance}\nevidence_index: {index(tmp_path)}\nresamples: 20\n", encoding="utf-8")
    return p


def questions(tmp_path):
    data = tmp_path / "q.jsonl"
    data.write_text("".join(json.dumps({"id": x["id"], "question": x["query"], "answers": [[x["answer"]]]}) + "\n" for x in LINES), encoding="utf-8")
    return data


def index(tmp_path):
    """A BM25 index of the lines' evidence (made once per test)."""
    idx = tmp_path / "idx"
    if not idx.exists():
        corpus = tmp_path / "corpus.jsonl"
        corpus.write_text("".join(json.dumps({"id": x["id"], "title": x["answer"], "text": x["evidence"][0]}) + "\n" for x in LINES), encoding="utf-8")
        assert invoke(["docs", "index", str(corpus), "--index", str(idx), "-q"]).exit_code == 0
    return idx


@pytest.mark.parametrize("case", list(RAISED))
@pytest.mark.parametrize("lm, relevance", [("flaky-lm", "fake"), ("fake", "flaky-relevance")], ids=["lm", "relevance"])
def test_run_with_a_plugin_scoring_model_that_raises_ends_in_one_line_as_a_failing_server_does(tmp_path, flaky, case, lm, relevance):
    line = flaky(case)
    if relevance != "fake" and case != "server":
        line = line.replace("backend 'flaky-lm'", "pair scorer 'flaky-relevance'")
    r = invoke(["run", str(run_config(tmp_path, lm, relevance)), "-o", str(tmp_path / "run"), "--no-cache", "-q"])
    assert one_line(r) == f"error: {line}"


@pytest.mark.parametrize("case", list(RAISED))
def test_generate_with_a_plugin_model_that_raises_fails_that_question_and_resumes(tmp_path, flaky, case):
    line = flaky(case)
    out = tmp_path / "g"
    args = ["generate", "--method", "conner-knowledge", "--method-arg", f"index={index(tmp_path)}", "--model", "flaky-lm", "--dataset", str(questions(tmp_path)), "--out", str(out), "-q", "--no-cache"]
    r = invoke(args)
    assert one_line(r, 1).startswith("error: run incomplete: the model call failed for 1 of 2 questions (--max-failures 0); last error: " + line), r.output
    assert errors_of(out) == [line] and len((out / "samples.jsonl").read_text().splitlines()) == 1
    assert json.loads((out / "manifest.json").read_text())["summary"]["failed_calls"] == 1
    FlakyLM.broken = False
    r = invoke([*args, "--resume"])
    assert r.exit_code == 0 and r.exception is None, r.output
    assert len((out / "samples.jsonl").read_text().splitlines()) == 2
