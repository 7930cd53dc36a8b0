"""What the workers of a pool opened with ``steps=True`` are on: the :class:`StepBoard` (for Ray, one small actor)
and a Ray worker's way to it (:class:`RayReporter`). Moved out of pool.py verbatim."""

from __future__ import annotations

import os
import threading
import time
from typing import Any


class StepBoard:
    """What the workers are on now, by item (a pool opened with ``steps=True``): a worker says ``report(item, step)``
    as it goes (``step`` None: done with that item), the driver reads ``snapshot()`` for its progress. For Ray it is
    one small actor to which each worker's thread sends what changed every :data:`STEP_PUSH_S`, without waiting
    for an answer (``RayReporter``), so reporting costs an answer nothing measurable; a board that is lost loses
    only the progress line's steps."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._steps: dict[str, str] = {}
        self._owner: dict[str, tuple[str, int | None]] = {}  # item -> the worker (Ray: its actor id) and process that last reported it

    def report(self, item: str, step: str | None) -> None:
        self.update({str(item): step})

    def update(self, changes: dict[str, str | None], worker: str | None = None, restarted: bool = False, pid: int | None = None) -> None:
        """Several reports at once, in order (a Ray worker's, gathered for :data:`STEP_PUSH_S`), from ``worker``'s
        process ``pid``. ``restarted``: that worker was lost and Ray restarted it (said by its new process ``pid``, or
        by the driver, which saw Ray restart it, with ``pid`` None, or the new process's once Ray lists it alive): the
        items a process of that worker other than ``pid`` was on show :data:`RESTARTED` until it reports them anew
        (Ray runs the lost batch again there), never the step the lost process was at."""
        with self._lock:
            if restarted and worker is not None:
                for item, (owner, by) in self._owner.items():
                    if owner == worker and (pid is None or by != pid):
                        self._steps[item] = RESTARTED
            for item, step in changes.items():
                if step is None:
                    self._steps.pop(str(item), None)
                    self._owner.pop(str(item), None)
                else:
                    self._steps[str(item)] = str(step)
                    if worker is not None:
                        self._owner[str(item)] = (worker, pid)

    def snapshot(self) -> dict[str, str]:
        with self._lock:
            return dict(self._steps)


#: seconds a Ray worker gathers its step reports before it sends them to the board (one call, not waited for)
STEP_PUSH_S = 0.5
#: the step shown for an item whose Ray worker was lost and restarted, until the restarted worker reports it anew
RESTARTED = "worker restarted, waiting"


class RayReporter:
    """A worker's way to a Ray :class:`StepBoard`: ``report(item, step)`` only notes the change (no call to
    Ray in the answering thread); a thread of the worker sends what changed to the board at most every
    :data:`STEP_PUSH_S`, without waiting for an answer. Never raises: a board gone loses only the steps.

    The board is named (``name``) and looked up in the worker, not handed over: an actor handle among a worker's
    constructor arguments puts them in Ray's object store, from which a restarted worker might not get them back
    (Ray warns so), and a lost worker must restart."""

    def __init__(self, name: str, every: float = STEP_PUSH_S) -> None:
        self.name, self.every = name, every  # ``every``: the driver's STEP_PUSH_S, sent with it
        self.board: Any = None  # looked up by name at the first send
        self.worker: str | None = None  # this worker's actor id (the same after a restart), found at the first send
        self._lock: Any = None
        self._changes: dict[str, str | None] = {}
        self._wake: Any = None
        self._restarted = False

    def __getstate__(self) -> dict[str, Any]:
        return {"name": self.name, "every": self.every}  # each worker gathers its own reports

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(state["name"], state["every"])  # type: ignore[misc]

    def _start(self) -> None:
        if self._lock is None:
            self._lock, self._wake = threading.Lock(), threading.Event()
            threading.Thread(target=self._send, name="vericite-steps", daemon=True).start()

    def __call__(self, item: str, step: str | None) -> None:
        self._start()
        with self._lock:
            self._changes.pop(str(item), None)  # re-inserted last: the board applies the changes in order
            self._changes[str(item)] = step
        self._wake.set()

    def restarted(self) -> None:
        """Said by a worker Ray restarted after its process was lost, as it starts (before it loads its model): the
        board marks the items its lost process was on :data:`RESTARTED` at the next send."""
        self._start()
        with self._lock:
            self._restarted = True
        self._wake.set()

    def _send(self) -> None:
        while True:
            self._wake.wait()
            time.sleep(self.every)
            with self._lock:
                changes, self._changes = self._changes, {}
                restarted, self._restarted = self._restarted, False
                self._wake.clear()
            if not changes and not restarted:
                continue
            try:
                if self.board is None:
                    import ray

                    self.board = ray.get_actor(self.name)
                    self.worker = ray.get_runtime_context().get_actor_id()
                self.board.update.remote(changes, self.worker, restarted, os.getpid())
            except Exception:  # noqa: BLE001 - a board gone: the answers go on, only the progress line loses its steps
                pass


#: seconds the driver waits for a Ray step board's snapshot before giving up on it this time
STEP_TIMEOUT_S = 2.0
