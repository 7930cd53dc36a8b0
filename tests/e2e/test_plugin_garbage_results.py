"""A plugin model backend whose ``generate`` returns garbage (``None``, something not a list, a list of the wrong
length, items that are not a ``Completion``) is the plugin's failure as a raising one is, never a traceback:
``vericite generate`` records that question as failed (``errors.jsonl``, counted, ``--resume`` asks it again),
with one line naming the plugin, the method and what came back. The same plugin returning one ``Completion`` per
prompt answers every question. So does a plugin's next-token scoring under an ``llm:`` judge, and its text scoring
under CONNER's ``--lm`` (``continuation_token_spans``, ``continuation_logprobs``): ``vericite evaluate`` ends in one
line, and the call cache keeps none of the garbage. A None row (no log-probabilities for that prompt) is no
garbage: G-Eval reads it as an unparseable reply, counted, that aspect not computed. The plugins are registered as in ``test_plugin_kinds_failures.py``."""

from __future__ import annotations

import json

import pytest

from tests.e2e.test_plugin_kinds_failures import errors_of, invoke, one_line, plugin, questions  # noqa: F401  (plugin: a fixture)
from vericite import registry
from vericite.models.fake import FakeBackend

#: what the plugin returns for the question about Byron, and the line its failure reads
GARBAGE = {
    "None": (lambda good: None, "returned None from generate, expected 1 completion"),
    "too many": (lambda good: good + good, "returned a list of 2 from generate, expected 1 completion"),
    "empty": (lambda good: [], "returned a list of 0 from generate, expected 1 completion"),
    "strings": (lambda good: [c.text for c in good], "returned a list with a str (item 0) from generate, expected 1 completion"),
}


class GarbageLM(FakeBackend):
    """A plugin backend that answers, except that while ``returning`` is set its ``generate`` returns
    ``returning(the right completions)`` for a prompt about Byron."""

    returning = None

    def __init__(self) -> None:
        super().__init__("garbage-lm")

    def generate(self, prompts, params):
        good = super().generate(prompts, params)
        if GarbageLM.returning is not None and any("Byron born" in str(p) for p in prompts):
            return GarbageLM.returning(good)
        return good


@pytest.mark.parametrize("case", list(GARBAGE))
def test_generate_with_a_plugin_backend_returning_garbage_fails_that_question_in_one_line_and_resumes(tmp_path, plugin, case):
    GarbageLM.returning, said = GARBAGE[case]
    line = f"backend 'garbage-lm' (plugin) {said}"
    plugin(registry.backends, "garbage-lm", GarbageLM)
    out = tmp_path / "g"
    args = ["generate", "--method", "fake", "--model", "garbage-lm", "--dataset", str(questions(tmp_path)), "--out", str(out), "-q", "--no-cache"]
    r = invoke(args)
    assert one_line(r, 1) == (f"error: run incomplete: the model call failed for 1 of 2 questions (--max-failures 0); last error: {line}; "
                              "the failures are in errors.jsonl, rerun with --resume to retry them"), r.output
    assert errors_of(out) == [line] and len((out / "samples.jsonl").read_text().splitlines()) == 1
    assert json.loads((out / "manifest.json").read_text())["summary"]["failed_calls"] == 1
    GarbageLM.returning = None  # the plugin fixed: the question is asked again
    r = invoke([*args, "--resume"])
    assert r.exit_code == 0 and r.exception is None, r.output
    assert len((out / "samples.jsonl").read_text().splitlines()) == 2


def test_generate_with_the_same_plugin_backend_answering_well_answers_every_question(tmp_path, plugin):
    GarbageLM.returning = None
    plugin(registry.backends, "garbage-lm", GarbageLM)
    out = tmp_path / "g"
    r = invoke(["generate", "--method", "fake", "--model", "garbage-lm", "--dataset", str(questions(tmp_path)), "--out", str(out), "-q", "--no-cache"])
    assert r.exit_code == 0 and r.exception is None and "error" not in r.output, r.output
    assert not (out / "errors.jsonl").exists() or not (out / "errors.jsonl").read_text().strip()
    assert len((out / "samples.jsonl").read_text().splitlines()) == 2


#: what the plugin's next-token scoring returns for one judge prompt, and what its line says came back
SCORES = {
    "None": (lambda good: None, "None"),
    "empty": (lambda good: [], "a list of 0"),
    "not pairs": (lambda good: [row for row, usage in good], "a list with a dict (item 0)"),
}


class GarbageScorer(FakeBackend):
    """A plugin backend whose next-token scoring (what an ``llm:`` judge reads) returns ``returning(the right
    rows)`` while it is set."""

    returning = None

    def __init__(self) -> None:
        super().__init__("garbage-scorer")

    def next_token_logprobs_usage(self, prompts, candidates):
        good = super().next_token_logprobs_usage(prompts, candidates)
        return good if GarbageScorer.returning is None else GarbageScorer.returning(good)


@pytest.mark.parametrize("case", list(SCORES))
def test_evaluate_with_an_llm_judge_on_a_plugin_backend_returning_garbage_ends_in_one_line_and_caches_none_of_it(tmp_path, plugin, monkeypatch, case):
    from tests.e2e.test_plugin_kinds_failures import kalma_lines

    monkeypatch.setenv("VERICITE_CACHE", str(tmp_path / "cache"))  # the call cache on: garbage must not be kept in it
    GarbageScorer.returning, got = SCORES[case]
    plugin(registry.backends, "garbage-scorer", GarbageScorer)
    args = ["evaluate", "-i", str(kalma_lines(tmp_path)), "-q", "--judge", "llm:garbage-scorer"]
    r = invoke([*args, "-o", str(tmp_path / "ev")])
    assert one_line(r) == f"error: backend 'garbage-scorer' (plugin) returned {got} from next_token_logprobs_usage, expected 1 (log-probabilities, usage) pair"
    GarbageScorer.returning = None
    r = invoke([*args, "-o", str(tmp_path / "ev2")])
    assert r.exit_code == 0 and r.exception is None, r.output
    assert "unparseable judgements 0" in " ".join(r.output.split()), r.output


#: the plugin LM's scoring method CONNER calls (its sentence coherence: one text a call; its paragraph, informativeness
#: and helpfulness measures: every text in one call), what it returns while broken, what its line says came back
TEXT_SCORES = {
    "spans None": ("continuation_token_spans", lambda good: None, "None from continuation_token_spans, expected 1 list of (start, end, log-probability) triples"),
    "spans short": ("continuation_token_spans", lambda good: good[:-1], "a list of 0 from continuation_token_spans, expected 1 list of (start, end, log-probability) triples"),
    "spans as floats": ("continuation_token_spans", lambda good: [[lp for _, _, lp in row] for row in good],
                        "a list with a list holding a float (0) (item 0) from continuation_token_spans, expected 1 list of (start, end, log-probability) triples"),
    "continuation None rows": ("continuation_logprobs", lambda good: [None for _ in good], "a list with None (item 0) from continuation_logprobs, expected {n} lists of log-probabilities"),
    "continuation strings": ("continuation_logprobs", lambda good: [[str(lp) for lp in row] for row in good],
                             "a list with a list holding a str (0) (item 0) from continuation_logprobs, expected {n} lists of log-probabilities"),
}  # fmt: skip


class GarbageTextLM(FakeBackend):
    """A plugin causal LM (CONNER's ``--lm``) whose ``broken`` scoring method returns ``returning(the right rows)``
    while ``returning`` is set."""

    broken = ""
    returning = None
    pairs: list = []  # what continuation_logprobs was asked last

    def __init__(self) -> None:
        super().__init__("garbage-text-lm")

    def continuation_token_spans(self, pairs):
        good = super().continuation_token_spans(pairs)
        return GarbageTextLM.returning(good) if GarbageTextLM.broken == "continuation_token_spans" and GarbageTextLM.returning else good

    def continuation_logprobs(self, pairs):
        GarbageTextLM.pairs = list(pairs)
        good = super().continuation_logprobs(pairs)
        return GarbageTextLM.returning(good) if GarbageTextLM.broken == "continuation_logprobs" and GarbageTextLM.returning else good


@pytest.mark.parametrize("case", list(TEXT_SCORES))
def test_evaluate_with_a_plugin_lm_returning_garbage_scores_ends_in_one_line_and_caches_none_of_it(tmp_path, plugin, monkeypatch, case):
    monkeypatch.setenv("VERICITE_CACHE", str(tmp_path / "cache"))  # the call cache on: garbage must not be kept in it
    method, returning, said = TEXT_SCORES[case]
    GarbageTextLM.broken, GarbageTextLM.returning = method, returning
    plugin(registry.backends, "garbage-text-lm", GarbageTextLM)
    p = tmp_path / "k.jsonl"
    p.write_text(json.dumps({"id": "a", "query": "Who wrote Hamlet?", "knowledge": "Hamlet was written by Shakespeare. He wrote it in 1600.",
                             "answer": "Shakespeare"}) + "\n", encoding="utf-8")  # fmt: skip
    args = ["evaluate", "--task", "conner", "-i", str(p), "--judge", "fake-3way", "--lm", "garbage-text-lm", "--relevance-model", "none", "-q"]
    r = invoke([*args, "-o", str(tmp_path / "ev")])
    n = len(GarbageTextLM.pairs)  # the pairs of its one call
    assert one_line(r) == f"error: backend 'garbage-text-lm' (plugin) returned {said.format(n=n)}"
    GarbageTextLM.returning = None  # the plugin fixed: what it gives now is scored, nothing of the garbage read back
    r = invoke([*args, "-o", str(tmp_path / "ev2")])
    assert r.exit_code == 0 and r.exception is None, r.output
    fresh = json.loads((tmp_path / "ev2" / "results.json").read_text())["metrics"]
    monkeypatch.setenv("VERICITE_CACHE", str(tmp_path / "cache2"))
    r = invoke([*args, "-o", str(tmp_path / "ev3")])
    assert r.exit_code == 0, r.output
    assert json.loads((tmp_path / "ev3" / "results.json").read_text())["metrics"] == fresh  # the cached answers are the plugin's good ones


class NoRowsScorer(FakeBackend):
    """A plugin G-Eval model whose next-token scoring has no log-probabilities (None) for the fluency prompt."""

    def __init__(self) -> None:
        super().__init__("no-rows")

    def next_token_logprobs_usage(self, prompts, candidates):
        good = super().next_token_logprobs_usage(prompts, candidates)
        return [(None, usage) if "Fluency (1-5)" in str(p) else (row, usage) for p, (row, usage) in zip(prompts, good)]


def test_evaluate_with_a_plugin_geval_model_giving_none_rows_leaves_that_aspect_not_computed_and_goes_on(tmp_path, plugin, monkeypatch):
    from tests.e2e.test_plugin_kinds_failures import kalma_lines

    monkeypatch.setenv("VERICITE_CACHE", str(tmp_path / "cache"))
    plugin(registry.backends, "no-rows", NoRowsScorer)
    r = invoke(["evaluate", "-i", str(kalma_lines(tmp_path)), "-o", str(tmp_path / "ev"), "-q", "--geval-model", "no-rows"])
    assert r.exit_code == 0 and r.exception is None and "Traceback" not in r.output, r.output
    metrics = json.loads((tmp_path / "ev" / "results.json").read_text())["metrics"]
    fluency = metrics["geval_fluency"]
    assert fluency["value"] is None and fluency["reason"] == "no reply could be scored" and fluency["details"]["unparseable"] == 1
    assert metrics["geval_coherence"]["value"] is not None and metrics["geval_coherence"]["details"]["unparseable"] == 0
