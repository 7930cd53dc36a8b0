"""Work handed to a pool of workers and gathered back by key: Ray actors (``--ray auto|ADDRESS --workers N``) or
threads (``--concurrency N``), behind one interface (:class:`Pool`), plus the per-batch checkpoint
(``OUT/.ray-calls.jsonl``) that lets a killed driver resume with nothing lost or done twice, and what a driver
interrupted by Ctrl-C keeps of the batches its workers finished (``keep_finished``).

Floor 1: this package knows nothing of methods, judges or runs. A worker is built in its own process (or thread)
by a *factory*, a picklable callable the caller passes (``functools.partial`` of a module-level function), so each
worker loads its model or judge once and keeps it; a batch is ``(key, payload)`` and the pool calls
``worker.<method>(payload)`` and yields ``(key, result)`` as batches finish, in any order. The caller gathers the
results by key (``runs/distributed.py`` writes them in input order, so the files are those of a local run). A pool
opened with ``steps=True`` has a :class:`StepBoard` its workers report what they are on to (a worker with
``report_steps_to(report)`` is given the reporter), read by ``pool.steps()`` for a progress line.

Why Ray core actors and not Ray Data: Ray Data's ``map_batches`` moves batches as Arrow tables, and our records
are nested JSON (samples with documents, judgements, usage) that would be flattened and rebuilt at each hop;
actors take and return the Python records as they are, and an actor loads its model or judge once.
"""

from .checkpoint import keep_finished
from .pool import Checkpoint, Pool, RayPool, StepBoard, ThreadPool, open_pool, ray_available

__all__ = ["Checkpoint", "keep_finished", "Pool", "RayPool", "StepBoard", "ThreadPool", "open_pool", "ray_available"]
