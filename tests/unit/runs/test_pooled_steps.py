"""Issue 12's "progress per question and per sentence" on a pool of workers (``--ray``, ``--concurrency``): the
workers report each question's step to the pool's step board, and the driver's progress line names the questions in
flight with their steps (VTG: ``sample q1, sentence 1, trial 1``) while the answers stay those of a run without it.
Threads here; tests/e2e/test_ray_generate.py does it with Ray actors."""

from __future__ import annotations

import json

from vericite.distributed import StepBoard, ThreadPool
from vericite.distributed.steps import RESTARTED, RayReporter
from vericite.runs.config import GenerateConfig
from vericite.runs.distributed import generate_pooled, steps_label
from vericite.types import Sample

from tests.support.ray_runs import without_timings
from tests.support.vtg import DOCS, QUESTION, StepLabels, slow_script

VTG = GenerateConfig(dataset="x", method="vtg", model="vtg-script", cache=False,
                     method_args={"k": 2, "verifier_judge": "fake", "docs_per_query": 1, "trials": 1})  # fmt: skip
SAMPLES = [Sample(f"q{i}", QUESTION, passages=list(DOCS)) for i in range(1, 4)]


def test_the_driver_names_each_question_in_flight_and_its_vtg_step(tmp_path, monkeypatch):
    labels = StepLabels(monkeypatch)
    generate_pooled(VTG, tmp_path / "steps", ray=None, workers=2, samples=SAMPLES, backend_factory=slow_script, progress=True, batch_size=1)
    assert any("sample q1, sentence 1, trial 1" in x for x in labels.seen), labels.seen
    assert any("sentence 2, trial 1" in x for x in labels.seen), labels.seen
    assert any("; sample q" in x for x in labels.seen), labels.seen  # two questions in flight at once, both named
    generate_pooled(VTG, tmp_path / "quiet", ray=None, workers=2, samples=SAMPLES, backend_factory=slow_script, progress=False, batch_size=1)
    steps, quiet = ((tmp_path / d / "samples.jsonl").read_text(encoding="utf-8") for d in ("steps", "quiet"))
    assert steps.count("\n") == 3 and without_timings(steps) == without_timings(quiet)  # the answers are the same
    assert json.loads(steps.splitlines()[0])["output"].startswith("Paris is the capital of France [1].")


def test_a_step_board_that_fails_leaves_the_run_alone(tmp_path, monkeypatch):
    labels = StepLabels(monkeypatch)
    reads = []

    def broken(self):
        reads.append(1)
        raise RuntimeError("board lost")

    monkeypatch.setattr(ThreadPool, "steps", broken)
    manifest = generate_pooled(VTG, tmp_path / "r", ray=None, workers=2, samples=SAMPLES, backend_factory=slow_script, progress=True, batch_size=1)
    assert manifest["status"] == "complete" and labels.seen == [] and len(reads) == 3  # given up after three misses


def test_steps_label_orders_names_and_counts():
    order = {f"q{i}": i for i in range(8)}
    steps = {"q5": "sentence 1, trial 2", "q2": "", "q1": "x", "q3": "sentence 3, evidence finder", "q6": "", "q7": "", "zz": "?"}
    label = steps_label(steps, order, done=lambda sid: sid == "q1")
    assert label == "sample q2; sample q3, sentence 3, evidence finder; sample q5, sentence 1, trial 2; sample q6; and 1 more"
    assert steps_label({}, order, done=lambda sid: False) == ""


def test_a_thread_pool_s_workers_report_to_its_board():
    class Worker:
        def report_steps_to(self, report):
            self.report = report

        def run(self, x):
            self.report(str(x), f"step of {x}")
            return x

    pool = ThreadPool(Worker, 1, steps=True)
    try:
        assert dict(pool.map("run", [("a", 1)])) == {"a": 1}
        assert pool.steps() == {"1": "step of 1"}
    finally:
        pool.close()
    board = StepBoard()
    board.report("q1", "sentence 1")
    board.report("q1", None)
    assert board.snapshot() == {} and ThreadPool(Worker, 1).steps() == {}


def test_a_ray_worker_s_reports_are_gathered_and_sent_by_its_own_thread(monkeypatch):
    """The Ray reporter makes no call in the answering thread: it notes the change, and its thread sends what
    changed (the last step of each item) to the board in one call; a board that fails is left alone."""
    import pickle
    import time

    from vericite.distributed import pool as P

    class Board:  # a Ray actor handle's shape: board.update.remote(changes)
        def __init__(self, fail=False):
            self.sent, self.restarts, self.fail = [], [], fail
            self.update = self

        def remote(self, changes, worker=None, restarted=False, pid=None):
            if self.fail:
                raise RuntimeError("board lost")
            self.sent.append(dict(changes))
            self.restarts.append(restarted)

    board = Board()
    reporter = pickle.loads(pickle.dumps(RayReporter("board-name", every=0.2)))  # as an actor gets it: its own buffer and thread
    assert (reporter.name, reporter.every, reporter.board) == ("board-name", 0.2, None)
    reporter.board = board  # what the name finds in a Ray worker
    for step in ("", "sentence 1, trial 1", "sentence 1, evidence finder"):
        reporter("q1", step)
    reporter("q2", "")
    assert board.sent == []  # nothing sent from the answering thread
    time.sleep(0.6)
    assert board.sent == [{"q1": "sentence 1, evidence finder", "q2": ""}]
    reporter("q1", None)
    time.sleep(0.6)
    assert board.sent[-1] == {"q1": None}
    lost = RayReporter("board-name", every=0.01)
    lost.board = Board(fail=True)
    lost("q1", "x")  # never raises
    time.sleep(0.1)
    real = StepBoard()
    real.update(board.sent[0])
    real.update(board.sent[1])
    assert real.snapshot() == {"q2": ""}


def test_a_restarted_ray_worker_s_questions_show_that_it_restarted_not_their_old_step(monkeypatch):
    """A Ray worker lost with a question in hand is restarted by Ray, which runs its batch again there: until the new
    process reports that question anew (after loading its model, which may take long), the board shows
    ``worker restarted, waiting`` for it, not the step the lost process was at; other workers' questions keep theirs."""
    import os
    import pickle
    import time

    from vericite.distributed import pool as P

    board = StepBoard()
    board.update({"q1": "", "q2": ""}, "actor-a", pid=11)
    board.update({"q1": "sentence 2, trial 1"}, "actor-a", pid=11)
    board.update({"q3": "sentence 1, evidence finder"}, "actor-b", pid=12)
    board.update({"q2": None}, "actor-a", pid=11)  # done: not the lost process's any more
    board.update({}, "actor-a", restarted=True, pid=21)  # the new process (21) says it was restarted
    assert board.snapshot() == {"q1": RESTARTED, "q3": "sentence 1, evidence finder"}
    board.update({"q1": ""}, "actor-a", pid=21)  # the restarted worker runs the batch again
    assert board.snapshot() == {"q1": "", "q3": "sentence 1, evidence finder"}
    board.update({}, "actor-a", restarted=True, pid=21)  # the driver's word, late: the new process's question stays
    assert board.snapshot() == {"q1": "", "q3": "sentence 1, evidence finder"}
    board.update({}, "actor-b", restarted=True)  # the driver saw actor-b restarting (no process yet): all of its
    assert board.snapshot() == {"q1": "", "q3": RESTARTED}
    label = steps_label({"q1": RESTARTED}, {"q1": 0}, done=lambda sid: False)
    assert label == "sample q1, worker restarted, waiting"

    class Board:
        def __init__(self):
            self.sent = []
            self.update = self

        def remote(self, changes, worker=None, restarted=False, pid=None):
            self.sent.append((dict(changes), worker, restarted, pid))

    monkeypatch.setattr(P, "reconstructed", lambda: True)  # as in an actor Ray restarted
    reporter = pickle.loads(pickle.dumps(RayReporter("board-name", every=0.05)))
    reporter.board, reporter.worker = Board(), "actor-a"
    P._Holder(lambda: None, reporter)  # the restarted actor starts: it says so before its first batch
    deadline = time.monotonic() + 5
    while not reporter.board.sent and time.monotonic() < deadline:
        time.sleep(0.02)
    assert reporter.board.sent == [({}, "actor-a", True, os.getpid())]
    monkeypatch.setattr(P, "reconstructed", lambda: False)  # a first start says nothing
    fresh = RayReporter("board-name", every=0.05)
    fresh.board = Board()
    P._Holder(lambda: None, fresh)
    time.sleep(0.2)
    assert fresh.board.sent == []


def test_the_driver_marks_the_questions_of_an_actor_ray_restarts_as_soon_as_it_reads_the_steps(monkeypatch):
    """Before the restarted actor's new process is up (Ray starting a process), the driver's reading of the steps
    sees Ray list the actor restarting (its restarts counted up) and marks its questions on the board, once per
    restart: with no process while restarting, with the new one's once Ray lists it alive."""
    from vericite.distributed import pool as P

    seen = {}
    table = {"a": {"State": "ALIVE", "NumRestarts": 0, "Pid": 11}, "b": {"State": "ALIVE", "NumRestarts": 0, "Pid": 12}}
    assert P.restarted_actors(table, seen) == []
    table["a"] = {"State": "RESTARTING", "NumRestarts": 1, "Pid": 11}
    assert P.restarted_actors(table, seen) == [("a", None)] and P.restarted_actors(table, seen) == []
    table["a"] = {"State": "ALIVE", "NumRestarts": 1, "Pid": 21}
    assert P.restarted_actors(table, seen) == []  # the same restart: said once
    table["b"] = {"State": "ALIVE", "NumRestarts": 1, "Pid": 22}  # restarted and up between two readings
    assert P.restarted_actors(table, seen) == [("b", 22)]

    board = StepBoard()
    board.update({"q1": "sentence 1, trial 1"}, "a", pid=11)

    class Remote:  # the board as an actor handle: board.update.remote(...) / board.snapshot.remote()
        def __init__(self, f):
            self.remote = f

    class Handle:
        update = Remote(board.update)
        snapshot = Remote(board.snapshot)

    class Ray:
        @staticmethod
        def get(x, timeout=None):
            return x

    pool = P.RayPool.__new__(P.RayPool)
    pool._ray, pool._board, pool._restarts, pool._table_due = Ray(), Handle(), {}, 0.0
    monkeypatch.setattr(P, "RESTARTS_LOOK_S", 0.0)  # the table read at each reading (every second at most otherwise)
    tables = iter([{"a": {"State": "ALIVE", "NumRestarts": 0, "Pid": 11}}, {"a": {"State": "RESTARTING", "NumRestarts": 1, "Pid": 11}}])
    monkeypatch.setattr(P, "actor_table", lambda ray: next(tables))
    assert pool.steps() == {"q1": "sentence 1, trial 1"}
    assert pool.steps() == {"q1": RESTARTED}
