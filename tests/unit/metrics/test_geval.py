import math

import pytest

from vericite.metrics.geval import GEval, expectation, messages
from vericite.types import Completion, Triple


def test_expectation_renormalises_over_digits():
    e, probs = expectation({"1": math.log(0.1), " 5": math.log(0.3), "x": math.log(0.6)})
    assert probs == pytest.approx({"1": 0.25, "5": 0.75})
    assert e == pytest.approx(0.25 * 1 + 0.75 * 5)
    assert expectation({"a": -1.0}) is None


def test_consistency_prompt_carries_the_knowledge():
    m = messages("consistency", "Q?", "A.", [Triple("Q1", "p", "v", "N")])
    assert "Knowledge:" in m[1]["content"] and "p: v" in m[1]["content"]
    assert "Knowledge:" not in messages("fluency", "Q?", "A.")[1]["content"]
    assert "Consistency (1-5)" in m[0]["content"]


class LogprobBackend:
    def __init__(self, table):
        self.table = table

    def next_token_logprobs(self, prompts, candidates):
        return [self.table for _ in prompts]


class TextBackend:
    def __init__(self, replies):
        self.replies = replies

    def generate(self, prompts, params):
        return [Completion(self.replies[i % len(self.replies)]) for i, _ in enumerate(prompts)]


def test_scores_from_logprobs():
    g = GEval(LogprobBackend({"4": 0.0, "5": 0.0}), aspects=["fluency"])
    [s] = g.score([("Q?", "A.", [])])
    assert s["fluency"].score == pytest.approx(4.5) and s["fluency"].status == "ok"


def test_text_fallback_and_unparseable_is_never_a_default():
    g = GEval(TextBackend(["Score: 4", "I cannot rate this."]), aspects=["relevance"])
    a, b = g.score([("Q?", "A.", []), ("Q?", "B.", [])])
    assert a["relevance"].score == 4.0 and a["relevance"].status == "parsed"
    assert b["relevance"].score is None and b["relevance"].status == "unparseable"


def test_unknown_aspect():
    with pytest.raises(ValueError, match="unknown G-Eval aspect"):
        GEval(None, aspects=["wit"])


def test_progress_counts_every_prompt_and_chunks_keep_the_order():
    seen: list[int] = []
    g = GEval(TextBackend([f"{d}" for d in "12345"]), aspects=["fluency", "relevance"])
    items = [("Q?", f"A{i}.", []) for i in range(11)]  # 11 items: two calls per aspect (CHUNK = 8)
    out = g.score(items, seen.append)
    assert seen == [8, 3, 8, 3] and sum(seen) == len(items) * 2
    # the text backend answers by position within a call: 1..5, 1..3 | 1..3
    assert [o["fluency"].score for o in out] == [1, 2, 3, 4, 5, 1, 2, 3, 1, 2, 3]


def test_a_row_without_usable_digits_has_no_expectation():
    assert expectation(None) is None and expectation(["4"]) is None and expectation("5") is None
    assert expectation({"4": "-0.1", "5": None, "3": True, 2: -0.1}) is None  # no digit with a finite number
    assert expectation({"4": float("nan"), "5": -math.inf}) is None
    e, probs = expectation({"4": "-0.1", "5": -0.5, 1: -0.1})  # the usable digits only
    assert e == pytest.approx(5.0) and probs == {"5": 1.0}


class RowsBackend:
    """A next-token scorer whose rows are given (a plugin's: None for a prompt it has no log-probabilities for)."""

    def __init__(self, rows):
        self.rows = rows

    def identity(self):
        from vericite.types import ModelIdentity

        return ModelIdentity(name="rows", backend="rows", model="rows", sha256=None)

    def generate(self, prompts, params):
        return [Completion("3") for _ in prompts]

    def logprobs(self, texts):
        return [[] for _ in texts]

    def next_token_logprobs(self, prompts, candidates):
        return self.rows[: len(prompts)]


def test_a_none_row_is_an_unparseable_reply_counted_never_a_score():
    rows = [None, {"4": 0.0, "5": 0.0}, {"4": "high"}]
    a, b, c = GEval(RowsBackend(rows), aspects=["fluency"]).score([("Q?", f"A{i}.", []) for i in range(3)])
    assert (a["fluency"].score, a["fluency"].status, a["fluency"].raw) == (None, "unparseable", "None")
    assert b["fluency"].score == pytest.approx(4.5) and b["fluency"].status == "ok"
    assert c["fluency"].score is None and c["fluency"].status == "unparseable"


def test_text_path_with_a_top_logprobs_row_that_is_none_reads_the_reply():
    class NoRows(TextBackend):
        def generate(self, prompts, params):
            return [Completion("4", top_logprobs=[None]) for _ in prompts]  # type: ignore[list-item]

    [s] = GEval(NoRows(["4"]), aspects=["coherence"]).score([("Q?", "A.", [])])
    assert s["coherence"].score == 4.0 and s["coherence"].status == "parsed"


def test_a_plugin_backends_none_rows_reach_geval_as_unparseable_and_other_rows_are_refused_by_its_guard():
    from vericite import registry
    from vericite.errors import PluginError
    from vericite.metrics.geval import geval_results

    backend = RowsBackend([None, {"4": 0.0}])
    registry.backends.register("rows", lambda arg, *, ctx, **o: backend, replace=True)
    try:
        plugin = registry.backends.create("rows")
        results, per_answer = geval_results([("Q?", "A.", []), ("Q?", "B.", [])], plugin, aspects=["relevance"], resamples=0)
        r = results["geval_relevance"]
        assert (r.value, r.n, r.details["unparseable"]) == (4.0, 1, 1)
        assert per_answer[0]["relevance"]["status"] == "unparseable" and per_answer[0]["relevance"]["score"] is None
        backend.rows = [None, -1.5]  # not a row at all: the plugin's mistake, one line naming it
        with pytest.raises(PluginError, match=r"^backend 'rows' \(plugin\) returned a list with a float \(item 1\) from next_token_logprobs, expected 2 dicts"):
            geval_results([("Q?", "A.", []), ("Q?", "B.", [])], plugin, aspects=["relevance"], resamples=0)
    finally:
        registry.backends.unregister("rows")
