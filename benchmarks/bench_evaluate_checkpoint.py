"""What ``evaluate``'s per-answer checkpoint costs: the same answers scored by ``evaluate_items`` with the checkpoint
(each answer judged alone and appended to ``.evaluate-answers.jsonl``, then the corpus scored from the memo) and
without it (the corpus's pairs judged in calls of up to 64), in the same process, alternately, medians of ``--runs``.

A judge is loaded once per judge spec and shared by both (its load is not timed); the call cache is off, so an LLM
judge computes every pair in every run. Reported per judge: the seconds of each, the ratio (with / without) and
whether results.json's body and the records are the same. Run::

    nice -n 19 env VERICITE_THREADS=1 OMP_NUM_THREADS=1 .venv/bin/python benchmarks/bench_evaluate_checkpoint.py \\
        --answers 300 --judges triple,fake --runs 5
    ... --answers 20 --judges llm:smollm2-135m --runs 5
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import tempfile
import time
from pathlib import Path


def answers(n: int) -> list[dict]:
    """``n`` KaLMA answers: two triples each, one citation right, one wrong for two thirds, an [NA] every fourth."""
    out = []
    for i in range(n):
        k = [{"subject": f"Q{i}", "subject_label": f"P{i}", "property": "occupation", "value": f"job{i}"},
             {"subject": f"Q{i}", "subject_label": f"P{i}", "property": "place of birth", "value": f"town{i}"}]  # fmt: skip
        wrong = "town0" if i % 3 else f"town{i}"
        answer = f"P{i} worked as job{i} [Q{i}, occupation: job{i}]. P{i} was born in {wrong} [Q{i}, place of birth: {wrong}]."
        if i % 4 == 0:
            answer += f" P{i} liked tea [NA]."
        out.append({"id": f"a{i:03d}", "question": f"Who is P{i}?", "answer": answer, "knowledge": k, "gold": k[:1], "absent": []})
    return out


def once(items_of, cfg, judge, folder: Path | None) -> tuple[float, dict, list]:
    from vericite.evaluate import evaluate_items
    from vericite.evaluate.checkpoint import AnswerCheckpoint

    items = items_of()
    ck = AnswerCheckpoint.open(folder, {"config": {}, "input_sha256": "bench"}) if folder is not None else None
    t = time.perf_counter()
    body, records = evaluate_items(items, cfg, judge=judge, checkpoint=ck)
    return time.perf_counter() - t, body, records


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--answers", type=int, default=300)
    ap.add_argument("--judges", default="triple,fake")
    ap.add_argument("--runs", type=int, default=5)
    a = ap.parse_args()

    from vericite.evaluate import EvaluateConfig, item_from_record, load_task
    from vericite.judges import load_judge

    task = load_task("kalma")
    records = answers(a.answers)
    items_of = lambda: [item_from_record(r, n, task) for n, r in enumerate(records, 1)]  # noqa: E731  (fresh items each run)
    print(f"# {platform.machine()} {platform.python_version()}, answers={a.answers}, runs={a.runs}, call cache off")
    for spec in a.judges.split(","):
        cfg = EvaluateConfig(judge=spec, cache=False, resamples=1000)
        judge = load_judge(spec, cache=False)
        with_s, without_s, same = [], [], True
        for _ in range(a.runs):
            with tempfile.TemporaryDirectory() as d:
                s1, b1, r1 = once(items_of, cfg, judge, Path(d))
            s0, b0, r0 = once(items_of, cfg, judge, None)
            with_s.append(s1)
            without_s.append(s0)
            same = same and json.dumps(b1, sort_keys=True) == json.dumps(b0, sort_keys=True) and r1 == r0
        w, wo = statistics.median(with_s), statistics.median(without_s)
        print(f"{spec}: with checkpoint {w:.3f} s, without {wo:.3f} s, ratio {w / wo:.2f}x; same results: {same}")
        print(f"  runs with: {' '.join(f'{x:.3f}' for x in with_s)} | without: {' '.join(f'{x:.3f}' for x in without_s)}")


if __name__ == "__main__":
    main()
