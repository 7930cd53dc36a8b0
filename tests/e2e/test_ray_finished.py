"""``RayPool.finished()`` on a real Ray (``--ray auto``'s in-process Ray, three actors): Ctrl-C while the driver writes
a batch leaves that batch and the others Ray finished meanwhile to ``finished()``, and none still running is waited
for (tests/unit/distributed/test_ray_finished.py: the same with a fake ``ray``)."""

from __future__ import annotations

import time

import pytest

from tests.support.guards import requires

pytestmark = pytest.mark.slow


class Sleeper:
    def answer(self, seconds: float) -> float:
        time.sleep(seconds)
        return seconds * 10


def test_finished_gives_the_batch_being_written_and_those_finished_meanwhile():
    requires("ray")
    from vericite.distributed.pool import RayPool

    pool = RayPool(Sleeper, 3, "auto")
    try:
        batches = pool.map("answer", [("a", 0.1), ("b", 1.0), ("c", 60.0)])
        assert next(batches) == ("a", 1.0)  # the driver writes it; "b" finishes meanwhile, "c" runs on
        deadline = time.monotonic() + 30
        while not pool._ray.wait([r for r, (k, _) in pool._inflight.items() if k == "b"], timeout=0.1)[0]:
            assert time.monotonic() < deadline
        t0 = time.monotonic()
        assert pool.finished() == [("a", 1.0), ("b", 10.0)]
        assert time.monotonic() - t0 < 5  # "c" (60 s) was not waited for
        assert pool.finished() == []
    finally:
        pool.close()
