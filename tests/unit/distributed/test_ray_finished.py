"""``RayPool.finished()`` after Ctrl-C, as the thread pool's: the batch the driver was given and may not have written,
and the batches in flight Ray has finished, each once, none waited for, one that raised left out. A fake ``ray``
(tests/unit/distributed/test_pool_fit.py's, here with batches that finish or not); no Ray needed."""

from __future__ import annotations

from vericite.distributed import pool as P

from tests.unit.distributed.test_pool_fit import FakeRay, fake_ray  # noqa: F401  (fake_ray: the fixture)


class BatchRef:
    def __init__(self, actor, payload):
        self.actor, self.payload = actor, payload


class BatchRay(FakeRay):
    """Ray whose batches in ``done`` have finished (the one named ``raises`` with the worker's error); ``wait``
    gives the finished refs, at most ``num_returns``, without waiting."""

    def __init__(self, done):
        super().__init__(free=3, total=3)
        self.done = set(done)
        self.timeouts = []

    def wait(self, refs, num_returns, timeout=None):
        if refs and not isinstance(refs[0], BatchRef):  # the actors' start
            return super().wait(refs, num_returns, timeout)
        self.timeouts.append(timeout)
        ready = [r for r in refs if r.payload in self.done][:num_returns]
        return ready, [r for r in refs if r not in ready]

    def get(self, ref, timeout=None):
        if not isinstance(ref, BatchRef):
            return 1234
        assert ref.payload in self.done, "a batch not finished was waited for"
        if ref.payload == "raises":
            raise RuntimeError("the worker's error")
        return ref.payload.upper()


def test_ctrl_c_while_the_driver_writes_a_batch_leaves_it_and_the_others_finished_to_finished(monkeypatch):
    monkeypatch.setattr(P, "shipped_entries", lambda dumps: {})
    ray = BatchRay(done={"a", "b", "raises"})
    monkeypatch.setattr(P, "_import_ray", lambda: ray)
    pool = P.RayPool(lambda: None, 3, "auto")

    class Call:
        def __init__(self, actor):
            self.actor = actor

        def remote(self, method, payload):
            return BatchRef(self.actor, payload)

    for actor in pool._actors:
        actor.call = Call(actor)
    batches = pool.map("answer", [("ka", "a"), ("kb", "b"), ("kr", "raises"), ("kc", "c")])
    assert next(batches) == ("ka", "A")  # the driver writes it ... Ctrl-C before it asks for the next
    assert pool.finished() == [("ka", "A"), ("kb", "B")]  # "raises" left out; "c" not sent (3 workers, 3 in flight)
    assert ray.timeouts[-1] == 0  # nothing in flight was waited for
    assert pool.finished() == []  # each once
    assert pool._inflight == {}  # the batches Ray finished (given, or raised) are not in flight: close() asks their actors


def test_a_batch_the_driver_asked_past_is_not_given_again(monkeypatch):
    monkeypatch.setattr(P, "shipped_entries", lambda dumps: {})
    ray = BatchRay(done={"a", "b"})
    monkeypatch.setattr(P, "_import_ray", lambda: ray)
    pool = P.RayPool(lambda: None, 3, "auto")
    for actor in pool._actors:
        actor.call = type("Call", (), {"remote": staticmethod(lambda method, payload, a=actor: BatchRef(a, payload))})()
    batches = pool.map("answer", [("ka", "a"), ("kb", "b"), ("kc", "c")])
    assert next(batches) == ("ka", "A") and next(batches) == ("kb", "B")
    assert pool.finished() == [("kb", "B")]  # "a" was written (the driver asked for "b"); "c" is still running
    assert [key for key, _ in pool._inflight.values()] == ["kc"]
