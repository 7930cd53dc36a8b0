"""``vericite evaluate`` locally against the same evaluation with its judge on 1 and 2 Ray actors (``--ray auto``).

The workload: N KaLMA answers (two citations each, every fourth with an [NA] sentence) scored by the task's whole
suite with a judge that gives the triple judge's verdicts but spends ``--ms`` milliseconds of CPU per pair (a
stand-in for a model judge whose cost is compute; a real one would also load its model once per actor). Each
configuration is timed ``--runs`` times (median); Ray is started once per configuration and that start is
reported apart (``start``: ``ray.init`` and the actors' first call), so the medians are what an evaluation costs
once the actors are up. The files are checked equal to the local run's each time.

    python benchmarks/bench_ray.py                       # 150 answers, 20 ms a pair, 5 runs
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import time

from vericite.distributed import RayPool
from vericite.evaluate import EvaluateConfig, evaluate_items, load_task
from vericite.evaluate.inputs import item_from_record
from vericite.runs.distributed import JudgeWorker, PoolJudge

MS = 20.0


class CpuJudge:
    """The triple judge's verdicts, after ``ms`` milliseconds of busy CPU per pair."""

    def __init__(self, ms: float) -> None:
        from vericite.judges import load_judge

        self._inner = load_judge("triple")
        self.id, self.labels, self.ms = self._inner.id, self._inner.labels, ms

    def __getattr__(self, name):
        return getattr(self._inner, name)

    def judge(self, pairs):
        for _ in pairs:
            end = time.perf_counter() + self.ms / 1000
            while time.perf_counter() < end:
                pass
        return self._inner.judge(pairs)


def cpu_judge(ms: float) -> JudgeWorker:
    return JudgeWorker(CpuJudge(ms))


def answers(n: int) -> list[dict]:
    out = []
    for i in range(n):
        k = [{"subject": f"Q{i}", "property": "occupation", "value": f"job{i}"}, {"subject": f"Q{i}", "property": "place of birth", "value": f"town{i}"}]
        wrong = "town0" if i % 3 else f"town{i}"
        text = f"P{i} worked as job{i} [Q{i}, occupation: job{i}]. P{i} was born in {wrong} [Q{i}, place of birth: {wrong}]."
        if i % 4 == 0:
            text += f" P{i} liked tea [NA]."
        out.append({"id": f"a{i:03d}", "question": f"Who is P{i}?", "answer": text, "knowledge": k, "gold": k[:1]})
    return out


def evaluate(records, judge):
    task = load_task("kalma")
    items = [item_from_record(r, n, task) for n, r in enumerate(records, 1)]
    cfg = EvaluateConfig(resamples=1000)
    t0 = time.perf_counter()
    body, recs = evaluate_items(items, cfg, task=task, judge=judge)
    return time.perf_counter() - t0, body, recs


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--answers", type=int, default=150)
    ap.add_argument("--ms", type=float, default=MS)
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()
    import functools

    import ray

    records = answers(args.answers)
    print(f"python {platform.python_version()}, ray {ray.__version__}, {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f} at start; "
          f"{args.answers} answers, {args.ms:g} ms of CPU per judged pair, median of {args.runs} runs")
    local_times, ref = [], None
    for _ in range(args.runs):
        t, body, recs = evaluate(records, CpuJudge(args.ms))
        local_times.append(t)
        ref = (body, recs)
    pairs = sum(len([j for j in r["judgements"]]) for r in ref[1])
    local = statistics.median(local_times)
    print(f"local      {local:6.2f} s  (runs {' '.join(f'{t:.2f}' for t in local_times)}; {pairs} judgements)")
    for workers in (1, 2):
        t0 = time.perf_counter()
        pool = RayPool(functools.partial(cpu_judge, args.ms), workers, "auto")
        list(pool.map("judge_pairs", [(str(i), []) for i in range(workers)]))  # every actor up and its judge built
        start = time.perf_counter() - t0
        times = []
        try:
            for _ in range(args.runs):
                t, body, recs = evaluate(records, PoolJudge(CpuJudge(args.ms), pool))
                assert (body, recs) == ref, "the Ray evaluation differs from the local one"
                times.append(t)
        finally:
            pool.close()
        med = statistics.median(times)
        print(f"{workers} worker{'s' if workers > 1 else ' '}  {med:6.2f} s  (runs {' '.join(f'{t:.2f}' for t in times)}; start {start:.1f} s)  "
              f"{local / med:.2f}x the local run (ideal {workers}x)")
    print(f"load average {os.getloadavg()[0]:.2f} at the end")


if __name__ == "__main__":
    main()
