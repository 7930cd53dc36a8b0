"""The call cache: SQLite (WAL), keyed by model identity + call; hits are marked cached and cost nothing."""

from __future__ import annotations

import multiprocessing as mp
import sqlite3

import pytest

from vericite.models import load_model
from vericite.models.cache import CachedBackend, CallCache
from vericite.models.fake import FakeBackend
from vericite.types import GenParams, ModelIdentity


def user(text: str) -> list[dict[str, str]]:
    return [{"role": "user", "content": text}]


@pytest.fixture
def cache(tmp_path):
    c = CallCache(tmp_path / "calls.sqlite")
    yield c
    c.close()


def test_generate_hits_are_marked_and_skip_the_backend(cache):
    fake = FakeBackend()
    b = CachedBackend(fake, cache)
    first = b.generate([user("a"), user("b")], GenParams())
    assert [c.cached for c in first] == [False, False] and fake.calls["generate"] == 2
    again = b.generate([user("a"), user("b")], GenParams())
    assert [c.cached for c in again] == [True, True] and fake.calls["generate"] == 2
    assert [c.text for c in again] == [c.text for c in first]
    assert again[0].completion_tokens == first[0].completion_tokens


def test_partial_batch_calls_backend_only_for_misses(cache):
    fake = FakeBackend()
    b = CachedBackend(fake, cache)
    b.generate([user("a")], GenParams())
    out = b.generate([user("x"), user("a"), user("y")], GenParams())
    assert [c.cached for c in out] == [False, True, False]
    assert fake.calls["generate"] == 3
    assert [c.text for c in out] == [c.text for c in FakeBackend().generate([user(t) for t in "xay"], GenParams())]


def test_params_and_identity_are_part_of_the_key(cache):
    fake = FakeBackend()
    b = CachedBackend(fake, cache)
    b.generate([user("a")], GenParams(seed=1))
    assert not b.generate([user("a")], GenParams(seed=2))[0].cached
    assert not b.generate([user("a")], GenParams(seed=1, max_tokens=3))[0].cached
    other = CachedBackend(FakeBackend("fake:other"), cache)
    assert not other.generate([user("a")], GenParams(seed=1))[0].cached
    assert b.generate([user("a")], GenParams(seed=1))[0].cached


def test_weights_sha_changes_the_key(cache):
    class Local(FakeBackend):
        def __init__(self, sha):
            super().__init__("fake:local")
            self.sha = sha

        def identity(self):
            return ModelIdentity("m", "llamacpp", "m.gguf", self.sha)

    CachedBackend(Local("aaa"), cache).generate([user("q")], GenParams())
    assert CachedBackend(Local("aaa"), cache).generate([user("q")], GenParams())[0].cached
    assert not CachedBackend(Local("bbb"), cache).generate([user("q")], GenParams())[0].cached


def test_logprobs_and_next_token_logprobs_are_cached(cache):
    fake = FakeBackend(replies={"good": "Yes"})
    b = CachedBackend(fake, cache)
    lp = b.logprobs(["one two three", "four five"])
    assert b.logprobs(["four five", "one two three"]) == [lp[1], lp[0]]
    assert fake.calls["logprobs"] == 1
    rows = b.next_token_logprobs([user("good"), user("bad")], ["Yes", "No"])
    assert b.next_token_logprobs([user("good"), user("bad")], ["Yes", "No"]) == rows
    assert fake.calls["next_token_logprobs"] == 2
    b.next_token_logprobs([user("good")], ["Yes", "No", "Maybe"])  # other candidates: a new key
    assert fake.calls["next_token_logprobs"] == 3


def test_persists_across_instances_and_uses_wal(tmp_path):
    path = tmp_path / "c.sqlite"
    CachedBackend(FakeBackend(), CallCache(path)).generate([user("a")], GenParams())
    fresh = FakeBackend()
    assert CachedBackend(fresh, CallCache(path)).generate([user("a")], GenParams())[0].cached
    assert fresh.n_calls == 0
    mode = sqlite3.connect(path).execute("PRAGMA journal_mode").fetchone()[0]
    assert mode.lower() == "wal"


def test_passes_other_attributes_through(cache):
    fake = FakeBackend()
    b = CachedBackend(fake, cache)
    assert b.calls is fake.calls and b.identity() == fake.identity()


def test_load_model_wraps_by_default_and_not_with_cache_false(tmp_path, monkeypatch):
    monkeypatch.setenv("VERICITE_CACHE", str(tmp_path))
    b = load_model("fake")
    assert isinstance(b, CachedBackend) and b.cache.path == tmp_path / "calls.sqlite"
    assert isinstance(load_model("fake", cache=False), FakeBackend)
    c = load_model("fake", cache=tmp_path / "other.sqlite")
    assert c.cache.path == tmp_path / "other.sqlite"


def _writer(path: str, start: int, n: int) -> None:
    b = CachedBackend(FakeBackend(), CallCache(path))
    for i in range(start, start + n):
        b.generate([user(f"q{i}"), user("shared")], GenParams())


def test_concurrent_processes(tmp_path):
    path = str(tmp_path / "shared.sqlite")
    CallCache(path).close()
    ctx = mp.get_context("spawn")
    procs = [ctx.Process(target=_writer, args=(path, k * 40, 40)) for k in range(3)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
    assert [p.exitcode for p in procs] == [0, 0, 0]
    cache = CallCache(path)
    assert len(cache) == 121  # 120 distinct questions + the shared one
    fake = FakeBackend()
    out = CachedBackend(fake, cache).generate([user("q5"), user("q119"), user("shared")], GenParams())
    assert all(c.cached for c in out) and fake.n_calls == 0


def test_vacuum_gives_the_space_back_and_is_skipped_while_another_writes(tmp_path):
    """``vacuum`` (what ``vericite cache clear`` calls, no private method reached into): the file shrinks once
    the entries are deleted; while another connection holds the write lock it says False and changes nothing."""
    path = tmp_path / "calls.sqlite"
    c = CallCache(path, timeout=0.2)
    for i in range(300):
        c.put(f"k{i}", "generate", {"text": "x" * 2000})
    c.clear()
    c.close()
    full = path.stat().st_size
    c = CallCache(path, timeout=0.2)
    other = sqlite3.connect(path, isolation_level=None, timeout=0.2)
    other.execute("BEGIN IMMEDIATE")
    try:
        assert c.vacuum() is False
    finally:
        other.execute("ROLLBACK")
        other.close()
    assert c.vacuum() is True
    c.close()
    assert path.stat().st_size < full / 10
