"""A ThreadPool closes the objects its workers built (a worker's own judge, model client, call cache) when it closes,
each once: at the end of a run, and after Ctrl-C without waiting for a worker still in its call (that worker closes
its own object as soon as its call returns)."""

from __future__ import annotations

import threading
import time

import pytest

from vericite.distributed import ThreadPool
from vericite.errors import VericiteError


class Built:
    """What a worker builds: counts its close() calls; ``work`` blocks while ``gate`` is set to hold."""

    made: list["Built"] = []

    def __init__(self, gate: threading.Event | None = None, started: threading.Event | None = None) -> None:
        self.closed = 0
        self.gate = gate
        self.started = started
        Built.made.append(self)

    def work(self, x: int) -> int:
        if self.gate is not None and x == 0:
            self.started.set()
            assert self.gate.wait(10)
        return x * 2

    def close(self) -> None:
        self.closed += 1


@pytest.fixture(autouse=True)
def fresh():
    Built.made = []
    yield


def test_the_objects_the_workers_built_are_closed_once_when_the_pool_closes():
    pool = ThreadPool(Built, 3)
    assert sorted(r for _, r in pool.map("work", [(str(i), i) for i in range(9)])) == [i * 2 for i in range(9)]
    assert Built.made and all(b.closed == 0 for b in Built.made)  # open while the pool is
    pool.close()
    pool.close()
    assert [b.closed for b in Built.made] == [1] * len(Built.made)


def test_ctrl_c_closes_the_idle_workers_objects_at_once_and_a_busy_one_when_its_call_returns():
    gate, started = threading.Event(), threading.Event()
    pool = ThreadPool(lambda: Built(gate, started), 2)
    it = pool.map("work", [("a", 0), ("b", 1)])
    assert next(it) == ("b", 2)  # one worker idle, the other in its call on batch a
    assert started.wait(10)
    t0 = time.monotonic()
    pool.close()  # what generate_pooled's finally does after Ctrl-C
    assert time.monotonic() - t0 < 1.0  # waits for no call
    busy = [b for b in Built.made if b.gate is not None and not b.closed]
    assert len(Built.made) == 2 and len(busy) == 1  # the idle one closed, not the one under a call
    gate.set()
    deadline = time.monotonic() + 10
    while busy[0].closed == 0 and time.monotonic() < deadline:
        time.sleep(0.01)
    pool.close()
    assert [b.closed for b in Built.made] == [1, 1]  # the busy one closed itself once its call returned; once each


def test_a_call_after_close_is_refused_and_builds_nothing():
    pool = ThreadPool(Built, 1)
    pool.close()
    with pytest.raises((VericiteError, RuntimeError)):
        pool._call("work", 1)
    assert Built.made == []
