"""``RayPool`` on a local Ray (two CPUs): a lost actor is restarted and its batch run again, its question shows it
restarted; a pool finds no CPU free in one line, or runs fewer workers, never waits."""

from __future__ import annotations

import os
import signal
import time

import pytest
from click.testing import CliRunner

from tests.support.ray_e2e import ray_local  # noqa: F401  (a fixture)
from tests.support.ray_runs import write_answers
from vericite.cli.main import cli
from vericite.distributed import fit


class Doubler:
    """A worker that takes its time (and reports what it is on, to a pool with steps)."""

    report = None
    delay = 0.3  # seconds a batch

    def report_steps_to(self, report):
        self.report = report

    def run(self, x):
        if self.report is not None:
            self.report(str(x), f"doubling {x}")
        time.sleep(self.delay)
        if self.report is not None:
            self.report(str(x), None)
        return 2 * x


def test_a_lost_worker_is_restarted_and_its_batch_run_again(ray_local):
    from vericite.distributed import RayPool

    pool = RayPool(Doubler, 2, "auto", steps=True)  # with the step board (generate's progress): it changes nothing
    try:
        pids = pool.pids()
        batches = pool.map("run", [(str(i), i) for i in range(8)])
        got = dict([next(batches)])
        os.kill(pids[0], signal.SIGKILL)  # one actor's process dies with a batch in hand
        got.update(batches)
        assert got == {str(i): 2 * i for i in range(8)}  # every batch once, the lost one run again
        assert len(set(pool.pids()) - set(pids)) == 1  # the actor was restarted in a new process
        deadline = time.monotonic() + 10  # a worker sends its reports every STEP_PUSH_S
        while pool.steps() != {} and time.monotonic() < deadline:
            time.sleep(0.1)
        assert pool.steps() == {}  # the board still answers, and the restarted actor reported to it (each item done)
    finally:
        pool.close()


class SlowToRestart(Doubler):
    """A Doubler that takes 2 s a batch (its step is on the board a while) and, in an actor Ray restarted, 6 s to
    build (a model loaded again) before it runs its batch."""

    delay = 2

    def __init__(self):
        import ray

        if ray.get_runtime_context().get_actor_id() and ray.get_runtime_context().was_current_actor_reconstructed:
            time.sleep(6)


def test_a_restarted_worker_s_question_shows_it_restarted_not_its_old_step(ray_local):
    """A lost actor's question showed the step its lost process was at until the restarted actor reported it anew
    (after building its worker again: a model loaded); now it shows ``worker restarted, waiting`` meanwhile."""
    from vericite.distributed import RayPool
    from vericite.distributed.restarts import actor_table
    from vericite.distributed.steps import RESTARTED

    pool = RayPool(SlowToRestart, 2, "auto", steps=True)
    try:
        pids = pool.pids()
        batches = pool.map("run", [(str(i), i) for i in range(4)])
        got = dict([next(batches)])
        deadline = time.monotonic() + 20
        while len((pool.steps() or {})) < 2 and time.monotonic() < deadline:  # both actors on a question
            time.sleep(0.05)
        os.kill(pids[0], signal.SIGKILL)
        killed = time.monotonic()
        seen = []
        deadline = time.monotonic() + 20
        while RESTARTED not in seen and time.monotonic() < deadline:
            seen = list((pool.steps() or {}).values())
            time.sleep(0.1)
        assert RESTARTED in seen, seen
        print(f"marked {time.monotonic() - killed:.2f} s after the kill")  # -rP
        # the driver's side: Ray's actor table, read for the restarts (a private call: checked on the Ray pinned)
        assert any(int(info.get("NumRestarts") or 0) >= 1 for info in actor_table(ray_local).values())
        got.update(batches)
        assert got == {str(i): 2 * i for i in range(4)}
    finally:
        pool.close()


def test_a_pool_on_a_ray_without_free_cpus_is_one_line_or_fewer_workers_never_a_wait(tmp_path, ray_local, monkeypatch, capsys):
    """Two pools of two 1-CPU actors on a Ray of 2 CPUs waited for ever (the second pool's actors never got a CPU);
    now the second is one line at once, and a pool with some CPUs free runs on those, with a warning."""
    from vericite.distributed import RayPool
    from vericite.distributed import pool as P
    from vericite.errors import VericiteError

    monkeypatch.setattr(fit, "FREE_WAIT_S", 1.0)
    first = RayPool(Doubler, 2, "auto")  # started: it holds both CPUs
    try:
        t0 = time.monotonic()
        with pytest.raises(VericiteError, match=r"no CPU free for a worker \(0 of 2 free") as e:
            RayPool(Doubler, 2, "auto")
        assert "\n" not in str(e.value) and time.monotonic() - t0 < 30
        a = write_answers(tmp_path / "answers.jsonl", 4)  # a command: one line, exit 2
        r = CliRunner().invoke(cli, ["evaluate", "-i", str(a), "-o", str(tmp_path / "e"), "-q", "--ray", "auto", "--workers", "2"])
        assert r.exit_code == 2 and "no CPU free for a worker" in r.output and "Traceback" not in r.output, r.output
    finally:
        first.close()
    one = RayPool(Doubler, 1, "auto")  # the first pool's CPUs come back a moment after it closed
    try:
        two = RayPool(Doubler, 2, "auto")
        try:
            assert two.workers == 1 and dict(two.map("run", [(str(i), i) for i in range(3)])) == {"0": 0, "1": 2, "2": 4}
        finally:
            two.close()
    finally:
        one.close()
    assert "running 1 worker, not 2" in capsys.readouterr().err
