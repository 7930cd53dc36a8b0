"""How many Ray workers a pool can start, and how long it waits for them: the CPUs free on the cluster
(:func:`free_cpus`, :func:`fit_workers`), the actors' start-up limit (:func:`start_timeout`,
``$VERICITE_RAY_START_S``), and a cluster address that nothing answers on (:func:`probe`). Split from
``distributed/pool.py``; moved verbatim, the private helpers made public."""

from __future__ import annotations

import os
import time
from typing import Any

from ..errors import VericiteError


#: the environment variable that sets :func:`start_timeout` (seconds)
START_ENV = "VERICITE_RAY_START_S"
#: seconds a pool waits for its Ray actors to start, unless ``$VERICITE_RAY_START_S`` says otherwise
START_TIMEOUT_S = 120.0


def start_timeout() -> float:
    """Seconds a :class:`RayPool` waits for its actors to start (:data:`START_ENV`, else :data:`START_TIMEOUT_S`)."""
    raw = os.environ.get(START_ENV, "").strip()
    try:
        value = float(raw) if raw else START_TIMEOUT_S
    except ValueError:
        raise VericiteError(f"{START_ENV} must be a number of seconds, not {raw!r}") from None
    if not value > 0:
        raise VericiteError(f"{START_ENV} must be a number of seconds above 0, not {raw!r}")
    return value


def cpus(ray: Any) -> tuple[float, float]:
    """The CPUs the Ray cluster has free now, and in all."""
    return float(ray.available_resources().get("CPU", 0.0)), float(ray.cluster_resources().get("CPU", 0.0))


#: seconds a pool waits for CPUs to come free before it runs on fewer workers (those of a pool just closed: Ray
#: frees a killed actor's CPU a moment later)
FREE_WAIT_S = 5.0


def free_cpus(ray: Any, wanted: int) -> tuple[float, float]:
    """:func:`cpus`, waited for (at most :data:`FREE_WAIT_S`) while fewer than ``wanted`` are free."""
    deadline = time.monotonic() + FREE_WAIT_S
    free, total = cpus(ray)
    while free < wanted and total >= wanted and time.monotonic() < deadline:
        time.sleep(0.1)
        free, total = cpus(ray)
    return free, total


def fit_workers(asked: int, free: float, total: float) -> tuple[int, str]:
    """How many 1-CPU workers a pool starts when ``asked`` for on a cluster with ``free`` of ``total`` CPUs free:
    ``(asked, "")`` when they fit; fewer, with a warning, when some CPU is free; ``(0, why)`` when none is (an actor
    that cannot get a CPU waits for ever, and the command with it)."""
    fits = int(free + 1e-9)
    if fits >= asked:
        return asked, ""
    held = "another pool of actors or job holds the others (`ray status`)"
    if fits < 1:
        return 0, (
            f"the Ray cluster has no CPU free for a worker ({free:g} of {total:g} free; each worker needs one): "
            + (f"{held}; wait for it, or run without --ray" if total >= 1 else "start Ray with CPUs (ray start --num-cpus N)")
        )
    return fits, f"the Ray cluster has {free:g} of {total:g} CPUs free: running {workers_word(fits)}, not {asked} ({held})"


def workers_word(n: int) -> str:
    return f"{n} worker" + ("" if n == 1 else "s")


def probe(address: str, timeout: float = 10.0) -> None:
    """A cluster address of the form ``[ray://]host:port`` that nothing answers on is one line now, not Ray's
    minutes of retries."""
    import socket

    host, sep, port = address.removeprefix("ray://").rpartition(":")
    if not sep or not port.isdigit():
        return  # another form (a Ray Client URL with a path, ...): Ray says what is wrong with it
    try:
        socket.create_connection((host.strip("[]") or "127.0.0.1", int(port)), timeout=timeout).close()
    except OSError as e:
        raise VericiteError(f"cannot reach the Ray cluster at {address}: {e.strerror or e} (is `ray start --head` running there?)") from None
