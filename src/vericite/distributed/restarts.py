"""Which of a pool's Ray actors Ray restarted, as the driver reads it from Ray's actor table
(:func:`actor_table`, :func:`restarted_actors`), so that ``RayPool.steps()`` marks a lost process's questions
:data:`~vericite.distributed.steps.RESTARTED` before its new process is up. Split from ``distributed/pool.py``; moved
verbatim, the private helper made public (``actor_table``)."""

from __future__ import annotations

from typing import Any


def actor_table(ray: Any) -> dict[str, dict[str, Any]]:
    """This job's actors as Ray's control store lists them (``State``, ``NumRestarts``, ``Pid`` ...); ``{}`` where
    that cannot be read (a Ray Client, another Ray version): Ray's own ``ray._private.state.actors``, as no public
    call says an actor is restarting (``ray.util.state`` needs the dashboard, which ``auto`` does not start)."""
    try:
        from ray._private.state import actors
        from ray._raylet import JobID

        return dict(actors(job_id=JobID.from_hex(ray.get_runtime_context().get_job_id())))
    except Exception:  # noqa: BLE001 - only the progress line's steps depend on it
        return {}


def restarted_actors(table: dict[str, dict[str, Any]], seen: dict[str, int]) -> list[tuple[str, int | None]]:
    """The actors of ``table`` (:func:`actor_table`) restarted since ``seen`` (their restarts, updated here), each
    with its new process's id once Ray lists it alive (None while it is restarting): its questions are the lost
    process's, whatever process reported them, but those the new process reported are its own."""
    out = []
    for actor, info in table.items():
        n = int(info.get("NumRestarts") or 0)
        if n > seen.get(actor, 0):
            seen[actor] = n
            pid = info.get("Pid") if info.get("State") == "ALIVE" else None
            out.append((str(actor), int(pid) if pid else None))
    return out
