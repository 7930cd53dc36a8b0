"""Threads that never hold the process up: :class:`DaemonExecutor`, a small ``ThreadPoolExecutor`` whose threads are
daemon threads, and :func:`daemon_map` on it.

``concurrent.futures.ThreadPoolExecutor`` joins its threads when the interpreter exits, so after Ctrl-C a process
waits for every request still in flight (a model server's answer can take minutes). A thread cannot be killed; a
daemon thread is not waited for. ``shutdown(wait=False, cancel_futures=True)`` here drops the calls not started yet
and leaves those in flight to end (or die with the process) on their own; nothing waits for their results, so
whatever a caller writes from the results is written from the calling thread only, from the calls finished before the
interrupt or not at all (``generate --concurrency``, an ``openai:`` model's concurrent requests)."""

from __future__ import annotations

import queue
import threading
from concurrent.futures import Future
from typing import Any, Callable, Iterable, TypeVar

T = TypeVar("T")
R = TypeVar("R")


class DaemonExecutor:
    """At most ``max_workers`` daemon threads (started as calls are submitted) running the calls in the order
    submitted; ``submit`` gives a ``concurrent.futures.Future``, so ``concurrent.futures.wait`` serves as ever."""

    def __init__(self, max_workers: int, thread_name_prefix: str = "vericite-thread") -> None:
        self.max_workers = max(1, int(max_workers))
        self._prefix = thread_name_prefix
        self._queue: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._threads: list[threading.Thread] = []
        self._idle = 0  # threads waiting for a call
        self._lock = threading.Lock()
        self._shut = False

    def submit(self, fn: Callable[..., R], /, *args: Any, **kwargs: Any) -> "Future[R]":
        with self._lock:
            if self._shut:
                raise RuntimeError("cannot submit to a DaemonExecutor after shutdown")
            fut: Future[R] = Future()
            self._queue.put((fut, fn, args, kwargs))
            if self._idle == 0 and len(self._threads) < self.max_workers:
                t = threading.Thread(target=self._work, name=f"{self._prefix}-{len(self._threads)}", daemon=True)
                self._threads.append(t)
                t.start()
            else:
                self._idle -= min(self._idle, 1)
        return fut

    def _work(self) -> None:
        while True:
            item = self._queue.get()
            if item is None:
                return
            fut, fn, args, kwargs = item
            if fut.set_running_or_notify_cancel():
                try:
                    result = fn(*args, **kwargs)
                except BaseException as e:  # noqa: BLE001 - handed to whoever reads the future, as ThreadPoolExecutor does
                    fut.set_exception(e)
                else:
                    fut.set_result(result)
                del fut, fn, args, kwargs, item
            with self._lock:
                self._idle += 1

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        """No more calls; ``cancel_futures``: the calls not started are cancelled; ``wait``: wait for the calls in
        flight (without it the threads end once their call does, or with the process)."""
        with self._lock:
            self._shut = True
            if cancel_futures:
                while True:
                    try:
                        item = self._queue.get_nowait()
                    except queue.Empty:
                        break
                    if item is not None:
                        item[0].cancel()
            for _ in self._threads:
                self._queue.put(None)
        if wait:
            for t in self._threads:
                t.join()

    def __enter__(self) -> "DaemonExecutor":
        return self

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        # an error of a call: its siblings are waited for, as ThreadPoolExecutor's ``with`` does; Ctrl-C (or any
        # other BaseException that is no Exception): the calls not started are dropped and none is waited for
        interrupted = exc_type is not None and not issubclass(exc_type, Exception)
        self.shutdown(wait=not interrupted, cancel_futures=interrupted)


def daemon_map(fn: Callable[[T], R], items: Iterable[T], workers: int, thread_name_prefix: str = "vericite-thread") -> list[R]:
    """``[fn(x) for x in items]`` on ``workers`` daemon threads, in the order of ``items``; the first error raised
    (in that order) is raised here once the others are done; Ctrl-C returns at once (:class:`DaemonExecutor`)."""
    with DaemonExecutor(workers, thread_name_prefix) as pool:
        futures = [pool.submit(fn, x) for x in items]
        return [f.result() for f in futures]


__all__ = ["DaemonExecutor", "daemon_map"]
