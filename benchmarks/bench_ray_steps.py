"""What generate's progress per step costs under ``--ray`` (the step board, ``distributed.StepBoard``): the same
batches answered by two actors without the board and with it (each actor noting when it starts and ends each
question, its own thread sending what changed to the board every ``STEP_PUSH_S``, and the driver reading the board
every second as ``generate_pooled`` does), the two pools started once and timed in turns. The workload is the
worst case for the board: KaLMA with the fake model, which answers at once, so the board's work is all there is
besides the answering itself. The records are checked equal each time.

    python benchmarks/bench_ray_steps.py                 # 400 questions, batches of 4, 5 runs each
"""

from __future__ import annotations

import argparse
import functools
import os
import platform
import statistics
import time

from vericite.distributed import RayPool
from vericite.progress import Advance
from vericite.runs import distributed as D
from vericite.runs.config import GenerateConfig
from vericite.types import Sample, Triple


def timed(pool: RayPool, batches, steps: bool) -> tuple[float, dict]:
    order = {s.id: i for _k, b in batches for i, s in enumerate(b)}
    got: dict = {}
    t0 = time.perf_counter()
    with D.showing_steps(pool, Advance(), order, lambda sid: sid in got, enabled=steps):
        for key, result in pool.map("answer", batches):
            for o in result:
                got[o["id"]] = o["record"]["output"]
    return time.perf_counter() - t0, got


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--questions", type=int, default=400)
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()
    import ray

    print(f"python {platform.python_version()}, ray {ray.__version__}, {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f} at start; "
          f"{args.questions} questions (KaLMA, fake model), batches of 4, 2 actors, median of {args.runs} runs")
    ray.init(address="local", num_cpus=4, include_dashboard=False, log_to_driver=False, logging_level="ERROR")
    cfg = GenerateConfig(dataset="x", model="fake", knowledge="given", cache=False)
    samples = [Sample(f"s{i:04d}", f"Question {i}?", [Triple("Q1", "occupation", "painter", "Ann")]) for i in range(args.questions)]
    batches = [(str(i), samples[i : i + 4]) for i in range(0, len(samples), 4)]
    factory = functools.partial(D._generation_worker, cfg, None)
    pools = {False: RayPool(factory, 2, "auto"), True: RayPool(factory, 2, "auto", steps=True)}  # 4 actors (Ray given 4 CPUs), 2 busy at a time
    try:
        times: dict[bool, list[float]] = {False: [], True: []}
        outputs = {}
        for steps in (False, True):
            timed(pools[steps], batches[:4], steps)  # the actors' first call: the method built
        for _ in range(args.runs):
            for steps in (False, True):
                t, got = timed(pools[steps], batches, steps)
                times[steps].append(t)
                outputs[steps] = got
        assert outputs[False] == outputs[True] and len(outputs[True]) == args.questions
        base = statistics.median(times[False])
        for steps, name in ((False, "without the board"), (True, "with the board   ")):
            m = statistics.median(times[steps])
            print(f"{name} {m:6.2f} s, {1000 * m / args.questions:.2f} ms a question, {m / base:.2f}x  (runs {' '.join(f'{t:.2f}' for t in times[steps])})")
    finally:
        for p in pools.values():
            p.close()
        ray.shutdown()
    print(f"load average {os.getloadavg()[0]:.2f} at the end")


if __name__ == "__main__":
    main()
