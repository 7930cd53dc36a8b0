"""A Ray pool asks for no more CPUs than the cluster has free: fewer workers with a warning when some are free,
one line when none is (it waited for ever before: two pools of two 1-CPU actors on ``ray.init(num_cpus=2)``);
actors that do not start in time are given up, and none started is one line. A fake ``ray`` module here (no Ray
needed); tests/e2e/test_ray_pool.py opens two real pools on one local Ray."""

from __future__ import annotations

import pytest

from vericite.distributed import fit

from vericite.distributed import pool as P
from vericite.errors import VericiteError


class Ref:
    def __init__(self, actor):
        self.actor = actor


class FakeActor:
    def __init__(self, ray, starts):
        self.ray, self.starts, self.killed = ray, starts, False
        self.pid = self.call = self.snapshot = self

    def remote(self, *a):
        return Ref(self)


class FakeRay:
    """What RayPool asks of Ray: CPUs free and in all; actors that start (``starts``: one bool per actor) or not."""

    class exceptions:
        RayTaskError = RayActorError = RuntimeError

    cloudpickle = __import__("pickle")

    def __init__(self, free, total, starts=()):
        self.free, self.total, self.starts = free, total, list(starts)
        self.actors, self.killed, self.waited = [], [], []

    def is_initialized(self):
        return True

    def available_resources(self):
        return {"CPU": self.free} if self.free else {}

    def cluster_resources(self):
        return {"CPU": self.total}

    def remote(self, **options):
        fake = self

        def wrap(cls):
            class Handle:
                @staticmethod
                def remote(*args):
                    actor = FakeActor(fake, fake.starts.pop(0) if fake.starts else True)
                    fake.actors.append(actor)
                    return actor

                @staticmethod
                def options(**kw):
                    return Handle

            return Handle

        return wrap

    def wait(self, refs, num_returns, timeout=None):
        self.waited.append(timeout)
        return [r for r in refs if r.actor.starts], [r for r in refs if not r.actor.starts]

    def get(self, ref, timeout=None):
        return 1234

    def kill(self, actor):
        actor.killed = True
        self.killed.append(actor)

    def shutdown(self):
        raise AssertionError("a Ray this pool did not start is not stopped")


@pytest.fixture
def fake_ray(monkeypatch):
    monkeypatch.setattr(fit, "FREE_WAIT_S", 0.2)
    monkeypatch.setattr(P, "shipped_entries", lambda dumps: {})

    def use(free, total, starts=()):
        ray = FakeRay(free, total, starts)
        monkeypatch.setattr(P, "_import_ray", lambda: ray)
        return ray

    return use


def test_fit_workers_runs_what_fits_and_refuses_none():
    assert P.fit_workers(2, 2.0, 2.0) == (2, "")
    assert P.fit_workers(2, 8.0, 8.0) == (2, "")
    n, note = P.fit_workers(4, 1.5, 4.0)
    assert n == 1 and note == "the Ray cluster has 1.5 of 4 CPUs free: running 1 worker, not 4 (another pool of actors or job holds the others (`ray status`))"
    n, note = P.fit_workers(2, 0.0, 2.0)
    assert n == 0 and "no CPU free for a worker (0 of 2 free" in note and "another pool of actors or job" in note
    n, note = P.fit_workers(2, 0.0, 0.0)
    assert n == 0 and "ray start --num-cpus" in note


def test_a_cluster_without_a_free_cpu_is_one_line_and_no_actor_is_started(fake_ray):
    ray = fake_ray(free=0, total=2)
    with pytest.raises(VericiteError, match=r"no CPU free for a worker \(0 of 2 free; each worker needs one\)") as e:
        P.RayPool(lambda: None, 2, "auto")
    assert "\n" not in str(e.value) and ray.actors == []


def test_fewer_free_cpus_than_workers_runs_fewer_workers_with_a_warning(fake_ray, capsys):
    ray = fake_ray(free=1, total=2)
    pool = P.RayPool(lambda: None, 2, "auto", steps=True)  # its step board: one more actor, no CPU
    assert pool.workers == 1 and len(pool._actors) == 1 and len(ray.actors) == 2
    assert "warning: the Ray cluster has 1 of 2 CPUs free: running 1 worker, not 2" in capsys.readouterr().err
    pool.close()
    assert all(a.killed for a in ray.actors)


def test_actors_that_do_not_start_in_time_are_given_up(fake_ray, capsys, monkeypatch):
    monkeypatch.setenv("VERICITE_RAY_START_S", "3")
    ray = fake_ray(free=2, total=2, starts=[True, False])  # the second never gets its CPU (taken meanwhile)
    pool = P.RayPool(lambda: None, 2, "auto")
    assert pool.workers == 1 and ray.waited == [3.0] and ray.actors[1].killed and not ray.actors[0].killed
    assert "warning: 1 of 2 Ray workers started (1 not started after 3 s" in capsys.readouterr().err
    ray = fake_ray(free=2, total=2, starts=[False, False])
    with pytest.raises(VericiteError, match=r"none of the 2 Ray workers started: 2 not started after 3 s \(Ray has 2 of 2 CPUs free\)") as e:
        P.RayPool(lambda: None, 2, "auto")
    assert "VERICITE_RAY_START_S" in str(e.value) and all(a.killed for a in ray.actors)


@pytest.mark.parametrize("raw", ["soon", "0", "-1"])
def test_a_wrong_start_timeout_is_one_line_before_ray_is_asked(fake_ray, monkeypatch, raw):
    ray = fake_ray(free=2, total=2)
    monkeypatch.setenv("VERICITE_RAY_START_S", raw)
    with pytest.raises(VericiteError, match="VERICITE_RAY_START_S must be a number of seconds"):
        P.RayPool(lambda: None, 2, "auto")
    assert ray.actors == []


def test_close_asks_the_idle_actors_to_close_what_they_built_for_a_short_while_then_kills_all(fake_ray):
    ray = fake_ray(free=2, total=2)
    pool = P.RayPool(lambda: None, 2, "auto")
    asked = []

    class Close:
        def __init__(self, actor):
            self.actor = actor

        def remote(self):
            asked.append(self.actor)
            return Ref(self.actor)

    idle, busy = pool._actors
    for a in (idle, busy):
        a.close = Close(a)
    pool._inflight[Ref(busy)] = ("k", busy)  # a batch in flight: Ctrl-C in the middle of it
    ray.waited.clear()
    pool.close()
    assert asked == [idle]  # the busy one is not asked: its close would wait behind its batch
    assert ray.waited == [P.RAY_CLOSE_S]  # bounded
    assert idle.killed and busy.killed
