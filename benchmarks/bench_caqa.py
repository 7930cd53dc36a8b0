"""CAQA benchmark: how fast the builder makes items (template verbalisation) and grounds queries with SPARQL,
and a four-class judge's pairs/s batched against one pair at a time (the same judge, the same items, one run).

- build: ``build_caqa`` with ``--verbalise template`` of ``--n`` items from the store ``--store`` into a temporary
  file, ``--runs`` times (seeds 0..runs-1): items per minute (the build's own timing, graph loading left out),
  and the median SPARQL grounding time per query (every query grounded, kept or not);
- judge: ``--judge`` (a spec, default the trained ``caqa:<folder>`` if given with ``--judge``) on the first
  ``--pairs`` test items of ``--data``, ``--runs`` times with batch size 16 and with batch size 1, alternating;
  pairs/s medians and their ratio. LLM verbalisation (``--verbalise llm``) and the ``llm4`` judge's speed need
  the model lock and are not run by default: ``--judge llm4:qwen2.5-coder-1.5b --pairs 8`` runs the
  judge part with it (wrap in ``flock /tmp/vericite-model.lock``).

Example: ``python benchmarks/bench_caqa.py --store runs/kg --data datasets/caqa-bio.jsonl --judge
caqa:runs/caqa-minilm --runs 5``
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path


def bench_build(store: str, n: int, runs: int) -> None:
    from vericite.bench.builders.caqa.build import CaqaConfig, build_caqa

    per_min, ground_ms, wall = [], [], []
    for seed in range(runs):
        with tempfile.TemporaryDirectory() as tmp:
            t = time.perf_counter()
            log = build_caqa(CaqaConfig(store=store, out=str(Path(tmp) / "c.jsonl"), n=n, verbalise="template", seed=seed), progress=False)
            wall.append(time.perf_counter() - t)
        per_min.append(log["timing"]["items_per_minute"])
        ground_ms.append(log["timing"]["median_grounding_ms"])
        print(f"  build seed {seed}: {log['items']} items, {log['timing']['items_per_minute']} items/min, "
              f"grounding median {log['timing']['median_grounding_ms']} ms, wall {wall[-1]:.1f} s (graph load included)", flush=True)
    print(f"build (template, n={n}, {runs} runs): median {statistics.median(per_min):.0f} items/min; "
          f"SPARQL grounding median {statistics.median(ground_ms):.2f} ms a query; wall median {statistics.median(wall):.1f} s")


def bench_judge(spec: str, data: str, pairs: int, runs: int) -> None:
    from vericite.judges.meta_caqa import item_pair, read_items
    from vericite.registry import BuildContext, create

    judge = create("judges", spec, BuildContext(cache=False))
    items = read_items(data, "test", pairs).items
    ps = [item_pair(it) for it in items]
    rates: dict[int, list[float]] = {16: [], 1: []}
    judge.judge(ps[:2])  # warm up
    for r in range(runs):
        for bs in (16, 1):
            if hasattr(judge, "batch_size"):
                judge.batch_size = bs
            t = time.perf_counter()
            if bs == 1:
                for p in ps:
                    judge.judge([p])
            else:
                judge.judge(ps)
            rates[bs].append(len(ps) / (time.perf_counter() - t))
        print(f"  judge run {r}: batched {rates[16][-1]:.1f} pairs/s, one at a time {rates[1][-1]:.1f} pairs/s", flush=True)
    b, o = statistics.median(rates[16]), statistics.median(rates[1])
    print(f"judge {judge.id} on {len(ps)} test items ({runs} runs): batched (16) {b:.1f} pairs/s, one at a time {o:.1f} pairs/s, ratio {b / o:.2f}x")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--store", help="graph store to build from (build part)")
    ap.add_argument("--n", type=int, default=300)
    ap.add_argument("--data", help="a CAQA file whose test items are judged (judge part)")
    ap.add_argument("--judge", help="judge spec, e.g. caqa:runs/caqa-minilm")
    ap.add_argument("--pairs", type=int, default=200)
    ap.add_argument("--runs", type=int, default=5)
    a = ap.parse_args(argv)
    if a.store:
        bench_build(a.store, a.n, a.runs)
    if a.judge and a.data:
        bench_judge(a.judge, a.data, a.pairs, a.runs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
