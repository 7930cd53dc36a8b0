"""What a Ray actor knows of where it runs: whether it was restarted (:func:`reconstructed`), its node
(:func:`node_id`), and its driver's process, watched so that the actor exits once the driver is gone
(:func:`watch_driver`, :func:`driver_alive`, :func:`process_started`). Split from ``distributed/pool.py``; moved
verbatim, the private helpers made public."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any, Callable


#: seconds between two looks of a Ray actor at its driver's process (:func:`watch_driver`)
DRIVER_WATCH_S = 0.1


def watch_driver(pid: int, every: float = DRIVER_WATCH_S, exit: Callable[[int], Any] = os._exit, started: str | None = None) -> None:
    """In a Ray actor on its driver's machine: once the driver's process ``pid`` is gone (killed: SIGKILL, the OOM
    killer), ``exit`` this process at once rather than go on with its batch until Ray notices (1.4 s measured with
    ``--ray auto``, more on a busy machine), answering questions whose answers nobody will write. ``started``: the
    driver's start time (:func:`process_started`), so that a process of another number space (a container) or a number
    used again is not taken for the driver; a driver this process cannot see at the first look is not watched."""
    if not driver_alive(pid, started):
        return
    while driver_alive(pid, started):
        time.sleep(every)
    exit(1)


def process_started(pid: int) -> str | None:
    """When process ``pid`` started (``/proc``'s clock ticks since boot), None without ``/proc`` or the process."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return stat[stat.rindex(")") + 2 :].split()[19]


def driver_alive(pid: int, started: str | None = None) -> bool:
    """Whether process ``pid`` runs (a zombie, killed but not yet reaped, does not), and is the one that started
    at ``started`` when that is known."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # another user's process: it exists
        pass
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return not Path("/proc/self/stat").exists()  # no /proc (macOS): os.kill said it exists
    except OSError:
        return True
    fields = stat[stat.rindex(")") + 2 :].split()
    return fields[0] != "Z" and (started is None or fields[19] == started)


def node_id() -> str | None:
    """The Ray node this process runs on (None outside Ray)."""
    try:
        import ray

        # not connected: None (asking the runtime context would connect this process to a Ray)
        return str(ray.get_runtime_context().get_node_id()) if ray.is_initialized() else None
    except Exception:  # noqa: BLE001 - no Ray here
        return None


def reconstructed() -> bool:
    """Whether this process is a Ray actor restarted after its first process was lost."""
    import warnings

    try:
        import ray

        if not ray.is_initialized():  # asking the runtime context would connect this process to a Ray
            return False
        with warnings.catch_warnings():  # Ray 2.60's property reads its own deprecated actor_id
            warnings.simplefilter("ignore")
            return bool(ray.get_runtime_context().was_current_actor_reconstructed)
    except Exception:  # noqa: BLE001 - not in a Ray actor
        return False


# --------------------------------------------------------------------------- threads
