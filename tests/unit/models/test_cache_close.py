"""``CallCache.close()`` closes every connection it opened (one per thread), not only the calling thread's; a use
after it opens a connection again. A ``CachedBackend`` closes the call cache it opened, not one it was given."""

from __future__ import annotations

import sqlite3
import threading

import pytest

from vericite.models import release, with_cache
from vericite.models.cache import CachedBackend, CallCache
from vericite.models.fake import FakeBackend
from vericite.types import GenParams


@pytest.fixture
def opened(monkeypatch):
    """Every sqlite3 connection opened during the test."""
    conns: list[sqlite3.Connection] = []
    connect = sqlite3.connect

    def recording(*a, **k):
        conns.append(connect(*a, **k))
        return conns[-1]

    monkeypatch.setattr(sqlite3, "connect", recording)
    return conns


def is_closed(conn: sqlite3.Connection) -> bool:
    try:
        conn.total_changes  # noqa: B018 - raises once closed, from any thread
    except sqlite3.ProgrammingError as e:
        return "closed" in str(e)
    return False


def in_threads(fn, n: int = 3) -> None:
    threads = [threading.Thread(target=fn) for _ in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


def test_close_closes_the_connections_of_every_thread(tmp_path, opened):
    cache = CallCache(tmp_path / "calls.sqlite")
    cache.put("k", "generate", {"text": "x"})
    hold = threading.Event()
    done = threading.Barrier(4)

    def use() -> None:  # threads still alive at close(): a pool's idle workers
        assert cache.get("k") == {"text": "x"}
        done.wait(10)
        hold.wait(10)

    threads = [threading.Thread(target=use) for _ in range(3)]
    for t in threads:
        t.start()
    done.wait(10)
    assert len(opened) == 4
    cache.close()
    hold.set()
    for t in threads:
        t.join()
    assert all(is_closed(c) for c in opened)
    assert cache.get("k") == {"text": "x"}  # a use after close opens a connection again
    in_threads(lambda: cache.put("k2", "generate", 1))
    assert cache.get("k2") == 1
    cache.close()
    assert all(is_closed(c) for c in opened)


def test_a_thread_that_ended_has_its_connection_closed_at_the_next_open(tmp_path, opened):
    cache = CallCache(tmp_path / "calls.sqlite")
    in_threads(lambda: cache.get("k"), 1)
    in_threads(lambda: cache.get("k"), 1)
    assert is_closed(opened[1])  # the first thread's, closed when the second opened its own
    cache.close()


def test_a_cached_backend_closes_the_cache_it_opened_not_one_given(tmp_path, opened):
    given = CallCache(tmp_path / "given.sqlite")
    CachedBackend(FakeBackend(), given).close()
    assert given.get("k") is None and not is_closed(opened[0])
    own = with_cache(FakeBackend(), tmp_path / "own.sqlite")
    own.generate([[{"role": "user", "content": "a"}]], GenParams())
    n = len(opened)
    release(own)
    assert all(is_closed(c) for c in opened[1:n])
    given.close()
