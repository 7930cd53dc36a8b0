"""What a plugin model backend's batched calls return is checked by its guard (``guard_results.RESULT_CHECKS``):
``generate`` gives one ``Completion`` per prompt, ``next_token_logprobs`` one dict of str -> number (or None) per
prompt, ``next_token_logprobs_usage`` one (that, ``Usage`` or None) pair per prompt, ``logprobs`` and
``continuation_logprobs`` one list of numbers per text or pair, ``continuation_token_spans`` one list of (int, int,
number) triples per pair and ``tokenize`` a list of ints, else the call fails with a ``PluginError`` of the
backend's kind naming the plugin, the method and what came back, as a raising plugin's call does; numpy's scalars
(float32, int64...) are read as Python's numbers, and then its arrays (a 1-d ``ndarray`` row) as lists, so what is
returned and cached is what Python numbers and lists give; a wrong shape is refused as before. The check comes
before the call cache: garbage is never stored. Judges' and pair scorers' results are not checked here (CONNER and
VTG handle a wrong-length result where they use it). The fake backend has no property, so it is guarded in place
(the e2e tests' ``FakeBackend`` subclass, which has one, is guarded by a proxy)."""

from __future__ import annotations

import pytest

from vericite import registry
from vericite.errors import PluginError
from vericite.fakes.judges import KeywordJudge
from vericite.fakes.scoring import FakePairScorer
from vericite.guard import GuardedProxy
from vericite.models.cache import CachedBackend, CallCache
from vericite.types import Completion, GenParams, JudgePair, ModelIdentity, Usage

PROMPTS = [[{"role": "user", "content": "one"}], [{"role": "user", "content": "two"}]]


class Plain:
    """A plugin backend with no property, whose results are ``result`` (set by each test)."""

    result: object = None
    scores: object = None
    rows: object = None  # what logprobs, continuation_logprobs, continuation_token_spans and tokenize return

    def identity(self):
        return ModelIdentity(name="plain", backend="plain", model="plain", sha256=None)

    def generate(self, prompts, params):
        return self.result

    def logprobs(self, texts):
        return self.rows

    def next_token_logprobs(self, prompts, candidates):
        return self.scores

    def next_token_logprobs_usage(self, prompts, candidates):
        return self.scores

    def continuation_logprobs(self, pairs):
        return self.rows

    def continuation_token_spans(self, pairs):
        return self.rows

    def tokenize(self, text):
        return self.rows


@pytest.fixture
def backend():
    registry.backends.register("plain", lambda arg, *, ctx, **o: Plain(), replace=True)
    yield registry.backends.create("plain")
    registry.backends.unregister("plain")


@pytest.mark.parametrize("result, said", [
    (None, "returned None from generate, expected 2 completions"),
    ({"text": "x"}, "returned a dict from generate, expected 2 completions"),
    ([Completion("a")], "returned a list of 1 from generate, expected 2 completions"),
    ([Completion("a"), "b"], "returned a list with a str (item 1) from generate, expected 2 completions"),
])  # fmt: skip
def test_a_plugin_backends_generate_returning_garbage_fails_naming_the_plugin_and_what_came_back(backend, result, said):
    assert not isinstance(backend, GuardedProxy)  # guarded in place
    backend.result = result
    with pytest.raises(PluginError) as e:
        backend.generate(PROMPTS, GenParams())
    assert str(e.value) == f"backend 'plain' (plugin) {said}" and e.value.kind == "backend"
    with pytest.raises(PluginError):  # called with keywords, as the Protocol allows
        backend.generate(prompts=PROMPTS, params=GenParams())


@pytest.mark.parametrize("bad, said", [
    (Completion(None), "a Completion whose text is None"),  # type: ignore[arg-type]
    (Completion("b", prompt_tokens="3"), "a Completion whose prompt_tokens is a str"),  # type: ignore[arg-type]
    (Completion("b", completion_tokens=None), "a Completion whose completion_tokens is None"),  # type: ignore[arg-type]
    (Completion("b", top_logprobs={"b": -0.1}), "a Completion whose top_logprobs is a dict"),  # type: ignore[arg-type]
    (Completion("b", top_logprobs=[{"b": -0.1}, ["b"]]), "a Completion whose top_logprobs hold a list (1)"),  # type: ignore[list-item]
    (Completion("b", top_logprobs=[{"b": "-0.1"}]), "a Completion whose top_logprobs hold a dict holding a str ('b') (0)"),
    (Completion("b", finish_reason=None), "a Completion whose finish_reason is None"),  # type: ignore[arg-type]
])  # fmt: skip
def test_a_plugin_backends_completion_with_garbage_inside_fails_naming_the_field(backend, bad, said):
    backend.result = [Completion("a"), bad]
    with pytest.raises(PluginError) as e:
        backend.generate(PROMPTS, GenParams())
    assert str(e.value) == f"backend 'plain' (plugin) returned a list with {said} (item 1) from generate, expected 2 completions"


def test_a_plugin_backends_generate_with_one_completion_per_prompt_is_returned_as_it_is(backend):
    backend.result = good = [Completion("a"), Completion("b", 3, 1, [{"b": -0.1, "c": None}, {}], "stop")]
    assert backend.generate(PROMPTS, GenParams()) is good
    backend.result = ()
    assert backend.generate([], GenParams()) == ()


def test_a_plugin_backends_next_token_logprobs_gives_one_dict_per_prompt(backend):
    backend.scores = [{"Yes": -0.1}]
    with pytest.raises(PluginError, match=r"^backend 'plain' \(plugin\) returned a list of 1 from next_token_logprobs, expected 2 dicts of log-probabilities$"):
        backend.next_token_logprobs(PROMPTS, ["Yes", "No"])
    backend.scores = [-0.1, -0.2]
    with pytest.raises(PluginError, match=r"a list with a float \(item 0\) from next_token_logprobs"):
        backend.next_token_logprobs(PROMPTS, ["Yes", "No"])
    backend.scores = good = [{"Yes": -0.1}, {"Yes": -0.2}]
    assert backend.next_token_logprobs(PROMPTS, ["Yes", "No"]) is good
    backend.scores = good = [None, {"Yes": -0.2}]  # a prompt without log-probabilities: the judges read none
    assert backend.next_token_logprobs(PROMPTS, ["Yes", "No"]) is good
    backend.scores = good = [{"Yes": None, "No": -1}, {}]  # a candidate without one: read as absent
    assert backend.next_token_logprobs(PROMPTS, ["Yes", "No"]) is good
    for garbage, got in [([{"Yes": -0.1}, {"Yes": "high"}], "a dict holding a str ('Yes') (item 1)"),
                         ([{"Yes": -0.1, "No": [-2.0]}, {}], "a dict holding a list ('No') (item 0)"),
                         ([{1: -0.1}, {}], "a dict with the key 1 (item 0)"), ([{"Yes": False}, {}], "a dict holding a bool ('Yes') (item 0)")]:  # fmt: skip
        backend.scores = garbage
        with pytest.raises(PluginError) as e:
            backend.next_token_logprobs(PROMPTS, ["Yes", "No"])
        assert str(e.value) == f"backend 'plain' (plugin) returned a list with {got} from next_token_logprobs, expected 2 dicts of log-probabilities"


def test_a_plugin_backends_next_token_logprobs_usage_gives_one_pair_per_prompt(backend):
    for garbage, got in [([{"Yes": -0.1}, {"Yes": -0.2}], "a list with a dict (item 0)"), ([({"Yes": -0.1}, Usage(3, 1, 1))], "a list of 1"),
                         ([({"Yes": -0.1}, None), ({"Yes": -0.2}, 3)], "a list with a tuple (item 1)"),
                         ([({"Yes": "-0.1"}, None), ({"Yes": -0.2}, None)], "a list with a tuple (item 0)")]:  # fmt: skip
        backend.scores = garbage
        with pytest.raises(PluginError) as e:
            backend.next_token_logprobs_usage(PROMPTS, ["Yes"])
        assert str(e.value) == f"backend 'plain' (plugin) returned {got} from next_token_logprobs_usage, expected 2 (log-probabilities, usage) pairs"
    backend.scores = good = [({"Yes": -0.1}, Usage(3, 1, 1)), (None, None)]
    assert backend.next_token_logprobs_usage(PROMPTS, ["Yes"]) is good


PAIRS = [("", "one"), ("a prefix", "two")]

#: method -> its arguments, and (what a plugin returns, what its line says came back, what it expected)
SCORING = {
    "logprobs": ((["one", "two"],), "expected 2 lists of log-probabilities", [
        (None, "None"),
        ([[-0.5]], "a list of 1"),
        ({"one": [-0.5]}, "a dict"),
        ([[-0.5], None], "a list with None (item 1)"),
        ([[-0.5], -0.2], "a list with a float (item 1)"),
        ([[-0.5, "x"], [-0.2]], "a list with a list holding a str (1) (item 0)"),
        ([[-0.5], [None]], "a list with a list holding None (0) (item 1)"),
        ([[True], [-0.2]], "a list with a list holding a bool (0) (item 0)"),
    ]),
    "continuation_logprobs": ((PAIRS,), "expected 2 lists of log-probabilities", [
        (None, "None"),
        ([[-0.5], [-0.1], [-0.2]], "a list of 3"),
        ([[-0.5], {"two": -0.2}], "a list with a dict (item 1)"),
        ([(-0.5, "nan"), [-0.2]], "a list with a tuple holding a str (1) (item 0)"),
    ]),
    "continuation_token_spans": ((PAIRS,), "expected 2 lists of (start, end, log-probability) triples", [
        (None, "None"),
        ([[(0, 3, -0.5)]], "a list of 1"),
        ([[(0, 3, -0.5)], [-0.2]], "a list with a list holding a float (0) (item 1)"),
        ([[(0, 3)], [(0, 3, -0.2)]], "a list with a list holding a tuple (0) (item 0)"),
        ([[(0, 3, -0.5)], [(0, 1.5, -0.2)]], "a list with a list holding a tuple (0) (item 1)"),
        ([[(0, 3, -0.5)], [[0, 3, None]]], "a list with a list holding a list (0) (item 1)"),
    ]),
}  # fmt: skip


@pytest.mark.parametrize("method", list(SCORING))
def test_a_plugin_backends_text_scoring_gives_one_list_of_numbers_per_input(backend, method):
    args, expected, cases = SCORING[method]
    for garbage, got in cases:
        backend.rows = garbage
        with pytest.raises(PluginError) as e:
            getattr(backend, method)(*args)
        assert str(e.value) == f"backend 'plain' (plugin) returned {got} from {method}, {expected}" and e.value.kind == "backend"
    with pytest.raises(PluginError):  # called with keywords, as the Protocol allows
        getattr(backend, method)(**{("texts" if method == "logprobs" else "pairs"): args[0]})
    good = [[(0, 3, -0.5), [1, 3, -1]], []] if method == "continuation_token_spans" else [[-0.5, -1], ()]
    backend.rows = good
    assert getattr(backend, method)(*args) is good
    backend.rows = []
    assert getattr(backend, method)([]) == []


def test_a_plugin_backends_tokenize_gives_a_list_of_token_ids(backend):
    for garbage, got in [(None, "None"), ("1 2", "a str"), ([1, "2"], "a list with a str (item 1)"), ([1.0], "a list with a float (item 0)"),
                         ([False], "a list with a bool (item 0)")]:  # fmt: skip
        backend.rows = garbage
        with pytest.raises(PluginError) as e:
            backend.tokenize("one two")
        assert str(e.value) == f"backend 'plain' (plugin) returned {got} from tokenize, expected a list of token ids"
    backend.rows = good = [1, 2]
    assert backend.tokenize("one two") is good
    backend.rows = ()
    assert backend.tokenize("") == ()


@pytest.mark.parametrize("method, garbage, good", [
    ("logprobs", [[-0.5], "x"], [[-0.5], [-0.2]]),
    ("continuation_logprobs", [[-0.5], None], [[-0.5], [-0.2]]),
    ("continuation_token_spans", [[(0, 3, -0.5)], [("0", 3, -0.2)]], [[(0, 3, -0.5)], [(0, 3, -0.2)]]),
])  # fmt: skip
def test_a_plugin_backends_garbage_never_enters_the_call_cache(backend, tmp_path, method, garbage, good):
    cache = CallCache(tmp_path / "calls.sqlite")
    cached = CachedBackend(backend, cache)
    args = (["one", "two"],) if method == "logprobs" else (PAIRS,)
    backend.rows = garbage
    with pytest.raises(PluginError, match=rf"^backend 'plain' \(plugin\) returned .* from {method}, expected 2 "):
        getattr(cached, method)(*args)
    assert len(cache) == 0
    backend.rows = good  # the plugin fixed: its answers are cached, and read back as they were given
    assert [list(map(tuple, r)) if method == "continuation_token_spans" else r for r in getattr(cached, method)(*args)] == good
    assert len(cache) == 2
    backend.rows = garbage
    assert [list(map(tuple, r)) if method == "continuation_token_spans" else r for r in getattr(cached, method)(*args)] == good  # hits


class ShortJudge(KeywordJudge):
    def judge(self, pairs):
        return []


class ShortScorer(FakePairScorer):
    def score(self, pairs):
        return []


def test_a_plugin_judges_or_scorers_wrong_length_result_is_left_to_its_caller():
    registry.judges.register("short", lambda arg, *, ctx, **o: ShortJudge(), replace=True)
    registry.scorers.register("short", lambda arg, *, ctx, **o: ShortScorer(), replace=True)
    try:
        assert registry.judges.create("short").judge([JudgePair(claim="a", evidence="b")]) == []
        assert registry.scorers.create("short").score([("a", "b")]) == []
    finally:
        registry.judges.unregister("short")
        registry.scorers.unregister("short")


#: method -> its arguments, what a numpy-backed plugin returns, and the same with Python numbers
NUMPY = {
    "logprobs": ((["one", "two"],), lambda np: [[np.float32(-0.5), np.float64(-1.25)], (np.float16(-2.0),)], [[-0.5, -1.25], (-2.0,)]),
    "continuation_logprobs": ((PAIRS,), lambda np: [[np.float32(-0.5)], [np.int64(-1)]], [[-0.5], [-1]]),
    "continuation_token_spans": ((PAIRS,), lambda np: [[(np.int64(0), np.int32(3), np.float32(-0.5))], [[0, np.uint8(3), -0.25]]], [[(0, 3, -0.5)], [[0, 3, -0.25]]]),
    "tokenize": (("one two",), lambda np: [np.int64(1), np.int32(2), 3], [1, 2, 3]),
    "next_token_logprobs": ((PROMPTS, ["Yes", "No"]), lambda np: [{"Yes": np.float32(-0.5), "No": None}, {"Yes": np.float64(-0.25)}],
                            [{"Yes": -0.5, "No": None}, {"Yes": -0.25}]),
    "next_token_logprobs_usage": ((PROMPTS, ["Yes"]), lambda np: [({"Yes": np.float32(-0.5)}, Usage(np.int64(3), np.int64(1), 1)), ({"Yes": -0.25}, None)],
                                  [({"Yes": -0.5}, Usage(3, 1, 1)), ({"Yes": -0.25}, None)]),
    "generate": ((PROMPTS, GenParams()), lambda np: [Completion("a", np.int64(3), np.int32(1), [{"a": np.float32(-0.5)}], "stop"), Completion("b", seconds=np.float32(0.5))],
                 [Completion("a", 3, 1, [{"a": -0.5}], "stop"), Completion("b", seconds=0.5)]),
}  # fmt: skip


def exactly(x):
    """``x`` with each value's type beside it: ``-0.5 == np.float32(-0.5)``, this tells them apart."""
    if isinstance(x, (list, tuple)):
        return (type(x).__name__, [exactly(v) for v in x])
    if isinstance(x, dict):
        return {k: exactly(v) for k, v in x.items()}
    if isinstance(x, (Completion, Usage)):
        return (type(x).__name__, {k: exactly(v) for k, v in vars(x).items()})
    return (type(x).__name__, x)


@pytest.mark.parametrize("method", list(NUMPY))
def test_a_plugin_backends_numpy_scalars_are_read_as_python_numbers(backend, method):
    # a plugin backed by numpy, torch or ONNX commonly returns float32 log-probabilities and int64 token ids: they
    # are read as Python's float and int (bool is still no number), the plugin's own objects left as they were
    np = pytest.importorskip("numpy")
    args, made, plain = NUMPY[method]
    returned = made(np)
    before = exactly(returned)
    setattr(backend, {"generate": "result", "next_token_logprobs": "scores", "next_token_logprobs_usage": "scores"}.get(method, "rows"), returned)
    assert exactly(getattr(backend, method)(*args)) == exactly(plain)
    assert exactly(returned) == before


#: what a plugin returns as numpy arrays (a row, a batch, a 0-d log-probability), and the same as Python lists
ARRAYS = {
    "logprobs-rows": ("logprobs", (["one", "two"],), lambda np: [np.array([-0.5, -1.25], dtype=np.float32), np.array([-2.0])], [[-0.5, -1.25], [-2.0]]),
    "logprobs-batch": ("logprobs", (["one", "two"],), lambda np: np.array([[-0.5], [-2.0]]), [[-0.5], [-2.0]]),
    "continuation_logprobs": ("continuation_logprobs", (PAIRS,), lambda np: [np.array([-0.5]), [np.float32(-1.0)]], [[-0.5], [-1.0]]),
    "tokenize": ("tokenize", ("one two",), lambda np: np.array([1, 2, 3], dtype=np.int64), [1, 2, 3]),
    "next_token_logprobs": ("next_token_logprobs", (PROMPTS, ["Yes"]), lambda np: [{"Yes": np.array(-0.5)}, {"Yes": np.float64(-0.25)}],
                            [{"Yes": -0.5}, {"Yes": -0.25}]),
    "generate": ("generate", (PROMPTS, GenParams()), lambda np: [Completion("a", np.int64(3), 1, [{"a": np.array(-0.5, dtype=np.float32)}], "stop"), Completion("b")],
                 [Completion("a", 3, 1, [{"a": -0.5}], "stop"), Completion("b")]),
}  # fmt: skip


@pytest.mark.parametrize("case", list(ARRAYS))
def test_a_plugin_backends_numpy_arrays_are_read_as_python_lists(backend, case):
    # a 1-d ndarray row (or the whole batch as one array) is read as tolist() gives it, numbers made Python's;
    # only when the result would otherwise be refused, and the plugin's arrays are left as they were
    np = pytest.importorskip("numpy")
    method, args, made, plain = ARRAYS[case]
    returned = made(np)
    before = repr(returned)
    setattr(backend, {"generate": "result", "next_token_logprobs": "scores"}.get(method, "rows"), returned)
    assert exactly(getattr(backend, method)(*args)) == exactly(plain)
    assert repr(returned) == before and "array(" in before


@pytest.mark.parametrize("case", ["logprobs-rows", "logprobs-batch", "continuation_logprobs", "generate"])
def test_a_plugin_backends_numpy_arrays_are_cached_as_python_lists_would_be(tmp_path, case):
    test_a_plugin_backends_numpy_scalars_are_cached_as_python_numbers_would_be(tmp_path, ARRAYS[case][0], ARRAYS[case][1:])


@pytest.mark.parametrize("method", ["logprobs", "next_token_logprobs_usage", "continuation_token_spans", "generate"])
def test_a_plugin_backends_numpy_scalars_are_cached_as_python_numbers_would_be(tmp_path, method, case=None):
    # what the call cache stores (JSON) and gives back: the same as for a plugin that returned Python numbers
    import sqlite3

    np = pytest.importorskip("numpy")
    args, made, plain = case or NUMPY[method]
    attr = {"generate": "result", "next_token_logprobs_usage": "scores"}.get(method, "rows")
    stored = []
    for value in (made(np), plain):
        registry.backends.register("plain", lambda arg, *, ctx, **o: Plain(), replace=True)
        try:
            backend = registry.backends.create("plain")
            setattr(backend, attr, value)
            path = tmp_path / f"{len(stored)}.sqlite"
            cached = CachedBackend(backend, CallCache(path))
            first = getattr(cached, method)(*args)
            setattr(backend, attr, None)  # a second call is answered by the cache alone
            again = getattr(cached, method)(*args)
        finally:
            registry.backends.unregister("plain")
        if method == "generate":
            again = [Completion.from_dict({**c.to_dict(), "cached": False}) for c in again]
        with sqlite3.connect(path) as conn:
            rows = sorted(conn.execute("SELECT key, kind, value FROM calls").fetchall())
        stored.append((exactly(first), exactly(again), rows))
    assert stored[0] == stored[1]


def test_what_numpy_scalars_do_not_make_well_shaped_is_still_refused(backend):
    np = pytest.importorskip("numpy")
    for rows, got in [([[np.float32(-0.5)], [np.bool_(True)]], "a list with a list holding a bool (0) (item 1)"),
                      ([[-0.5], np.array([[-0.2]])], "a list with a ndarray (item 1)"),  # a 2-d array where a row is expected
                      ([[-0.5], np.array(["-0.2"])], "a list with a ndarray (item 1)"),
                      ([[np.float32(-0.5)], np.array([[-0.2]])], "a list with a ndarray (item 1)"),
                      ([[np.float32(-0.5)], [np.complex64(1j)]], "a list with a list holding a complex64 (0) (item 1)")]:  # fmt: skip
        backend.rows = rows
        with pytest.raises(PluginError) as e:
            backend.logprobs(["one", "two"])
        assert str(e.value) == f"backend 'plain' (plugin) returned {got} from logprobs, expected 2 lists of log-probabilities"
    backend.result = [Completion("a"), Completion("b", seconds="0.5")]  # type: ignore[arg-type]
    with pytest.raises(PluginError, match=r"returned a list with a Completion whose seconds is a str \(item 1\) from generate"):
        backend.generate(PROMPTS, GenParams())
    backend.result = [Completion("a"), Completion("b", seconds=np.float32(0.5))]  # nothing else to make a Python number
    assert exactly(backend.generate(PROMPTS, GenParams())) == exactly([Completion("a"), Completion("b", seconds=0.5)])
    backend.scores = [({"Yes": -0.5}, Usage("3", 1, 1)), (None, None)]  # a count that is no int: neither added up nor cached
    with pytest.raises(PluginError, match=r"returned a list with a tuple \(item 0\) from next_token_logprobs_usage"):
        backend.next_token_logprobs_usage(PROMPTS, ["Yes"])
