"""Pools of workers (Ray actors, or threads); see the package's doc. The per-batch checkpoint is ``checkpoint.py``'s (re-exported);
which actors Ray restarted, read from its actor table for ``RayPool.steps()``, ``restarts.py``'s."""

from __future__ import annotations

import functools
import os
import threading
import time
from concurrent.futures import FIRST_COMPLETED, Future, wait
from typing import Any, Callable, Iterable, Iterator, Protocol

from ..errors import VericiteError
from ..progress import warn
from ..threads import DaemonExecutor
from .shipping import error_line, install_entries, installed_then, shipped_entries  # noqa: F401  (install_entries re-exported)
from .actor_side import DRIVER_WATCH_S, driver_alive, node_id, process_started, reconstructed, watch_driver  # noqa: F401  (DRIVER_WATCH_S, driver_alive re-exported)
from . import steps as steps_module
from .steps import RESTARTED, STEP_TIMEOUT_S, RayReporter, StepBoard  # noqa: F401  (RESTARTED re-exported; STEP_PUSH_S is read from steps at the pool's start, patch it there)
from .checkpoint import Checkpoint  # noqa: F401  (re-exported)
from .restarts import actor_table, restarted_actors
from .fit import FREE_WAIT_S, START_ENV, START_TIMEOUT_S, cpus, fit_workers, free_cpus, probe, start_timeout, workers_word  # noqa: F401  (FREE_WAIT_S, START_TIMEOUT_S re-exported)

Batch = tuple[str, Any]  # (key, payload)

#: environment variables a Ray worker gets from the driver (where the cache is, threads, the server and its key)
FORWARDED_ENV = ("PYTHONPATH", "VERICITE_CACHE", "VERICITE_THREADS", "VERICITE_STATE_CACHE_MB", "VERICITE_SHARED", "OPENAI_API_KEY", "OPENAI_BASE_URL")


class Pool(Protocol):
    """``map(method, batches)`` yields ``(key, worker.<method>(payload))`` as batches finish; ``close()``. A pool
    opened with ``steps=True`` also has ``steps()``: what its workers report they are on (:class:`StepBoard`), or
    None when that cannot be read now."""

    workers: int

    def map(self, method: str, batches: Iterable[Batch]) -> Iterator[tuple[str, Any]]: ...

    def close(self) -> None: ...




class _Holder:
    """What runs in a worker: the object the factory builds (once, at the first batch), and its method calls. With a
    ``reporter`` (a pool with steps), an object that has ``report_steps_to(report)`` is given it once built. With
    ``driver`` (the driver's process id, Ray node and start time), a Ray actor on the driver's node exits as soon as the driver's
    process is gone (:func:`watch_driver`). ``close()`` closes the object built, once (:func:`close_built`)."""

    def __init__(self, factory: Callable[[], Any], reporter: Callable[[str, str | None], None] | None = None, driver: tuple[int, str, str | None] | None = None) -> None:
        self._factory = factory
        self._reporter = reporter
        self._obj: Any = None
        self._closed = False
        self.busy = False  # a ThreadPool's: a call under way (set and read under the pool's lock)
        if isinstance(reporter, RayReporter) and reconstructed():
            reporter.restarted()  # the lost process's items are not shown at its last step while this one starts
        if driver is not None and driver[1] == node_id():  # a Ray actor on its driver's machine: it watches it
            watch = functools.partial(watch_driver, driver[0], started=driver[2])
            threading.Thread(target=watch, name="vericite-driver-watch", daemon=True).start()

    def call(self, method: str, payload: Any) -> Any:
        if self._obj is None:
            self._obj = self._factory()
            hook = getattr(self._obj, "report_steps_to", None)
            if self._reporter is not None and callable(hook):
                hook(self._reporter)
        return getattr(self._obj, method)(payload)

    def pid(self) -> int:
        return os.getpid()

    def close(self) -> None:
        """Close the object built (when it has ``close()``), once; a later ``close`` does nothing."""
        obj, self._obj, closed, self._closed = self._obj, None, self._closed, True
        if not closed and obj is not None:
            close_built(obj)


def close_built(obj: Any) -> None:
    """``obj.close()`` when it has one (``protocols.Closeable``); a close that fails is a warning, not an error: it
    runs as a pool ends, after its results are written (or after Ctrl-C)."""
    from ..protocols import Closeable

    if isinstance(obj, Closeable):
        try:
            obj.close()
        except Exception as e:  # noqa: BLE001 - a worker's close does not stop the run's end
            warn(f"warning: {e if isinstance(e, VericiteError) else error_line(e)} (on close, of a worker's copy, as the pool closes)")


class ThreadPool:
    """``workers`` threads, each with its own object built by ``factory``; at most ``workers`` batches in flight.
    ``steps``: the workers report what they are on to a :class:`StepBoard` (``steps()``). The threads are daemon
    threads (:class:`~vericite.threads.DaemonExecutor`): ``close`` drops the batches not started and waits for none
    in flight, so Ctrl-C returns at once; a batch that ends after it is given to nobody (nothing is written of it).
    ``finished()`` gives the batches done before it that the driver may not have written.

    ``close`` also closes the objects the workers built (their judges, their models' clients, their call caches:
    whatever the object's own ``close()`` closes), each once: those of idle workers at once, and a worker's whose
    call is under way by that worker as soon as its call returns, so that nothing is closed under a call in flight
    (a local model's weights) and Ctrl-C still waits for no call. A call that would start after ``close`` is refused."""

    def __init__(self, factory: Callable[[], Any], workers: int, *, steps: bool = False) -> None:
        self.workers = max(1, int(workers))
        self._factory = factory
        self._board = StepBoard() if steps else None
        self._local = threading.local()
        self._executor = DaemonExecutor(self.workers, thread_name_prefix="vericite-worker")
        self._pending: dict[Future[Any], str] = {}  # the batches submitted and not given out yet
        self._holders: list[_Holder] = []  # each worker thread's, for close()
        self._lock = threading.Lock()  # the holders, their ``busy`` and ``_closed``
        self._closed = False

    def _call(self, method: str, payload: Any) -> Any:
        with self._lock:
            if self._closed:  # a call taken from the queue as the pool closed: its result would go to nobody
                raise VericiteError("the pool of workers was closed")
            holder = getattr(self._local, "holder", None)
            if holder is None:
                holder = self._local.holder = _Holder(self._factory, self._board.report if self._board is not None else None)
                self._holders.append(holder)
            holder.busy = True
        try:
            return holder.call(method, payload)
        finally:
            with self._lock:
                holder.busy = False
                closed = self._closed
            if closed:  # the pool closed during this call: this worker closes its own object now that it is over
                holder.close()

    def steps(self) -> dict[str, str] | None:
        return self._board.snapshot() if self._board is not None else {}

    def map(self, method: str, batches: Iterable[Batch]) -> Iterator[tuple[str, Any]]:
        queue = list(batches)
        pending = self._pending = {}
        while queue or pending:
            while queue and len(pending) < self.workers:
                key, payload = queue.pop(0)
                pending[self._executor.submit(self._call, method, payload)] = key
            done, _ = wait(list(pending), return_when=FIRST_COMPLETED)
            for fut in done:
                yield pending[fut], fut.result()
                del pending[fut]  # given out once the driver asks for the next: Ctrl-C before leaves it to finished()

    def finished(self) -> list[tuple[str, Any]]:
        """The batches that finished whose results the driver may not have written (Ctrl-C while it wrote one: that
        one and any other finished), as ``(key, result)``, without waiting for any in flight; a batch that raised is
        left out. Each is given once."""
        out = []
        for fut, key in list(self._pending.items()):
            if fut.done() and not fut.cancelled() and fut.exception() is None:
                del self._pending[fut]
                out.append((key, fut.result()))
        return out

    def close(self) -> None:
        self._executor.shutdown(wait=False, cancel_futures=True)
        with self._lock:
            self._closed = True
            idle = [h for h in self._holders if not h.busy]
        for holder in idle:
            holder.close()


# --------------------------------------------------------------------------- Ray


def ray_available() -> bool:
    import importlib.util

    return importlib.util.find_spec("ray") is not None


def _import_ray() -> Any:
    try:
        import ray
    except ImportError:
        raise VericiteError("--ray needs Ray: pip install 'vericite[ray]'") from None
    return ray


class RayPool:
    """``workers`` Ray actors, each holding the object ``factory`` builds. ``address``: ``auto`` starts Ray in
    this process (a laptop; its resources are the ``workers``), anything else is the address of a running
    cluster (``ray start --head`` prints it; ``ray://host:10001`` for Ray Client). A lost actor is restarted
    and its batch run again (``max_restarts``, ``max_task_retries``). ``steps``: one more actor, a
    :class:`StepBoard` (no CPU of its own) that the workers tell what they are on, read by ``steps()``.

    Each worker holds one CPU: a pool starts no more workers than the cluster has CPUs free (:func:`fit_workers`:
    fewer with a warning, none free one line), and waits :func:`start_timeout` for them to start, so a pool whose
    actors would wait for a CPU for ever (another pool holds them) says so rather than hangs."""

    def __init__(self, factory: Callable[[], Any], workers: int, address: str = "auto", *, restarts: int = 2, steps: bool = False) -> None:
        ray = self._ray = _import_ray()
        self.workers = max(1, int(workers))
        self.address = address
        self._started = False
        self._start_timeout = start_timeout()  # a wrong $VERICITE_RAY_START_S is one line before Ray starts
        env = {k: os.environ[k] for k in FORWARDED_ENV if os.environ.get(k)}
        if not ray.is_initialized():
            kw: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False, "logging_level": "ERROR"}
            if address != "auto":
                probe(address)
            try:
                if address == "auto":
                    ray.init(address="local", num_cpus=self.workers, **kw)
                else:
                    ray.init(address=address, **kw)
            except (ConnectionError, RuntimeError, ValueError) as e:
                first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
                raise VericiteError(f"cannot reach the Ray cluster at {address}: {first}") from None
            self._started = True
        options: dict[str, Any] = {"num_cpus": 1, "max_restarts": restarts, "max_task_retries": restarts}
        if env:  # per actor, so a Ray this process did not start gets them too
            options["runtime_env"] = {"env_vars": env}
        actor = ray.remote(**options)(_Holder)
        # the names registered at run time in this process (a user's script's register()): each actor installs them
        # before it builds its worker, as it would not know them (``registry.runtime_entries``)
        shipped = shipped_entries(ray.cloudpickle.dumps)
        if shipped:
            factory = functools.partial(installed_then, shipped, factory)
        self._actors: list[Any] = []
        self._board: Any = None
        self._inflight: dict[Any, Any] = {}
        self._given: list[tuple[str, Any]] = []  # the batch map gave out, until the driver asks for the next
        self._restarts: dict[str, int] = {}  # actor id -> the restarts seen by steps()
        self._table_due = 0.0  # when steps() next reads Ray's actor table
        # as many workers as the cluster has CPUs free (each holds one); none free is one line, not a pool that waits
        # for ever (another pool of this process, or another job, holds them)
        free, total = free_cpus(ray, self.workers)
        fitted, note = fit_workers(self.workers, free, total)
        if not fitted:
            self.close()
            raise VericiteError(note)
        if note:
            warn(f"warning: {note}")
        self.workers = fitted
        board_name = f"vericite-steps-{os.getpid()}-{id(self)}"
        self._board = ray.remote(num_cpus=0, max_restarts=restarts)(StepBoard).options(name=board_name).remote() if steps else None
        reporter = RayReporter(board_name, steps_module.STEP_PUSH_S) if self._board is not None else None
        # the actors on this machine watch this process, and exit as soon as it is killed (``watch_driver``); a Ray
        # Client's driver is not this process
        node = node_id()
        driver = (os.getpid(), node, process_started(os.getpid())) if node and not address.startswith("ray://") else None
        self._actors = [actor.remote(factory, reporter, driver) for _ in range(self.workers)]
        self._await_start()

    def _await_start(self) -> None:
        """Wait (at most :func:`start_timeout` s) until the actors have started: those that have not by then
        (their CPUs taken meanwhile, a node gone) are given up with a warning; none started is one line. Once this
        returns, the actors hold their CPUs, so a pool opened next sees them taken."""
        ray = self._ray
        timeout = self._start_timeout
        refs = {a.pid.remote(): a for a in self._actors}
        # the step board too, so that the workers' first reports find it (a report sent before it is up is lost)
        board = [self._board.snapshot.remote()] if self._board is not None else []
        ready, pending = ray.wait([*refs, *board], num_returns=len(refs) + len(board), timeout=timeout)
        ready, pending = [r for r in ready if r in refs], [r for r in pending if r in refs]
        started = []
        why = ""
        for ref in ready:
            try:
                ray.get(ref)
                started.append(refs[ref])
            except Exception as e:  # noqa: BLE001 - an actor that failed to start (its runtime environment ...)
                why = why or error_line(e)
        if len(started) == len(self._actors):
            return
        for a in self._actors:
            if a not in started:
                try:
                    ray.kill(a)
                except Exception:  # noqa: BLE001 - an actor already gone
                    pass
        asked = len(self._actors)
        self._actors = started
        free, total = cpus(ray)
        state = f"{len(pending)} not started after {timeout:g} s (Ray has {free:g} of {total:g} CPUs free)" if pending else ""
        reason = "; ".join(x for x in (state, f"failed to start: {why}" if why else "") if x)
        if not started:
            self.close()
            raise VericiteError(
                f"none of the {asked} Ray workers started: {reason}; another pool of actors or job may hold the CPUs "
                f"(`ray status`), so run with fewer --workers, or set {START_ENV} to wait longer"
            )
        self.workers = len(started)
        warn(f"warning: {len(started)} of {asked} Ray workers started ({reason}): running {workers_word(len(started))}")

    def steps(self) -> dict[str, str] | None:
        """What the workers last reported they are on; None when the board does not answer in
        :data:`STEP_TIMEOUT_S` (lost, or a busy cluster): only the progress line's steps depend on it. An actor
        Ray restarted since the last reading has its questions marked :data:`RESTARTED` first."""
        if self._board is None:
            return {}
        if time.monotonic() >= self._table_due:  # Ray's actor table, at most every RESTARTS_LOOK_S
            self._table_due = time.monotonic() + RESTARTS_LOOK_S
            for actor, pid in restarted_actors(actor_table(self._ray), self._restarts):
                try:
                    self._board.update.remote({}, actor, True, pid)
                except Exception:  # noqa: BLE001 - the progress line's steps only
                    pass
        try:
            return dict(self._ray.get(self._board.snapshot.remote(), timeout=STEP_TIMEOUT_S))
        except Exception:  # noqa: BLE001 - a board lost or slow: the run goes on
            return None

    def pids(self) -> list[int]:
        """The process id of each actor (tests: to kill one)."""
        return list(self._ray.get([a.pid.remote() for a in self._actors]))

    def nodes(self) -> list[str]:
        """The node id of each alive node of the cluster."""
        return [n["NodeID"] for n in self._ray.nodes() if n.get("Alive")]

    def map(self, method: str, batches: Iterable[Batch]) -> Iterator[tuple[str, Any]]:
        ray = self._ray
        queue = list(batches)
        idle = list(self._actors)
        pending: dict[Any, tuple[str, Any]] = {}
        self._inflight = pending  # what close() cancels
        while queue or pending:
            while queue and idle:
                actor = idle.pop(0)
                key, payload = queue.pop(0)
                pending[actor.call.remote(method, payload)] = (key, actor)
            done, _ = ray.wait(list(pending), num_returns=1)
            for ref in done:
                key, actor = pending.pop(ref)
                idle.append(actor)
                self._given = [(key, self._get(ref))]
                yield self._given[0]
                self._given = []  # the driver asked for the next: Ctrl-C before leaves it to finished()

    def finished(self) -> list[tuple[str, Any]]:
        """As :meth:`ThreadPool.finished`: the batch the driver was given and may not have written (Ctrl-C while it
        wrote it), and the batches in flight that Ray has finished (``ray.wait`` without waiting), as ``(key,
        result)``; a batch that raised is left out, none in flight is waited for. Each is given once."""
        out, self._given, ray = self._given, [], self._ray
        try:
            ready = ray.wait(list(self._inflight), num_returns=len(self._inflight), timeout=0)[0] if self._inflight else []
        except Exception:  # noqa: BLE001 - a Ray shut down: what the driver was given is all there is
            ready = []
        for ref in ready:
            key, _actor = self._inflight.pop(ref)  # no longer busy: close() asks its actor to close what it built
            try:
                out.append((key, ray.get(ref, timeout=0)))
            except Exception:  # noqa: BLE001 - a batch that raised (or a lost actor's) is left out
                pass
        return out

    def _get(self, ref: Any) -> Any:
        ray = self._ray
        try:
            return ray.get(ref)
        except ray.exceptions.RayTaskError as e:  # the worker's own exception, as it was raised there
            cause = getattr(e, "cause", None)
            if isinstance(cause, BaseException):
                raise cause from None
            raise
        except ray.exceptions.RayActorError as e:
            raise VericiteError(f"a Ray worker was lost and could not be restarted ({type(e).__name__}); rerun with --resume") from None

    def close(self) -> None:
        """The batches in flight cancelled (so Ray does not say it will run them again), the idle actors asked to
        close what they built (at most :data:`RAY_CLOSE_S`), then the actors killed at once, in the middle of a batch
        if need be: after Ctrl-C or an error no worker goes on asking its model.
        Nothing is lost: what a batch finished is written by the driver as it comes back (its checkpoint), and a
        batch in flight was not."""
        ray = self._ray
        busy = {id(actor) for _, actor in self._inflight.values()}
        for ref in list(self._inflight):
            try:
                ray.cancel(ref)
            except Exception:  # noqa: BLE001 - a task already finished or gone
                pass
        self._inflight.clear()
        # the idle actors close the objects they built (their models' clients, their call caches) before they are
        # killed, for at most RAY_CLOSE_S; a busy one is not asked (its close would wait behind its batch): its
        # process ends with the kill, and what it held with it (sockets; SQLite's WAL survives a killed writer)
        try:
            idle = [a.close.remote() for a in self._actors if id(a) not in busy]
            ray.wait(idle, num_returns=len(idle), timeout=RAY_CLOSE_S) if idle else None
        except Exception:  # noqa: BLE001 - actors already gone (or without close): they are killed next all the same
            pass
        for a in [*self._actors, *([self._board] if self._board is not None else [])]:
            try:
                ray.kill(a)
            except Exception:  # noqa: BLE001 - an actor already gone
                pass
        self._actors, self._board = [], None
        if self._started:
            ray.shutdown()


#: seconds ``RayPool.close()`` gives its idle actors to close what they built before it kills them
RAY_CLOSE_S = 2.0
#: seconds between two readings of Ray's actor table by ``RayPool.steps()`` (the driver reads the steps every second)
RESTARTS_LOOK_S = 1.0


def open_pool(factory: Callable[[], Any], workers: int, ray: str | None = None, *, steps: bool = False) -> Pool:
    """A RayPool at ``ray`` (``auto`` or an address), else a ThreadPool; ``steps``: with a :class:`StepBoard`."""
    if ray:
        return RayPool(factory, workers, ray, steps=steps)
    return ThreadPool(factory, workers, steps=steps)
