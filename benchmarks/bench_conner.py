"""Time CONNER's measures (issue 14's benchmarks), on the NQ reference passages of ../shared/data/conner (read in
place) as the knowledge of the first ``--n`` nq-500 questions.

1. Items per minute for all six measures (``metrics/conner.py``) with ``--judge`` (three-way), ``--lm`` and the
   embedded ms-marco cross-encoder, evidence = the item's own gold passage (``--evidence-k`` 1), over ``--n`` items
   (the call cache off: every model call is made).
2. LM scoring of the sentences: one evaluation per text (``continuation_token_spans``, all positions at once)
   against one backend call per sentence, same model, same texts (medians of ``--runs``).
3. The cross-encoder: all (query, knowledge) pairs in one batched call (batch 16) against one pair at a time,
   same model, same pairs (medians of ``--runs``).

Run (loads an LLM: under the model lock): ``flock /tmp/vericite-model.lock .venv/bin/python benchmarks/bench_conner.py
--lm smollm2-135m --judge llm3:smollm2-135m --n 20``; ``--skip-measures`` runs 2 and 3 only; ``--cross-encoder-only`` 3 alone (no LLM).
"""

from __future__ import annotations

import argparse
import platform
import statistics
import time

from vericite import registry
from vericite.attribution.sentences import split_sentences
from vericite.datasets.nq import load_nq, reference_passages
from vericite.metrics.conner import ConnerMetric
from vericite.models import load_model
from vericite.models.lm_scoring import sentence_logprobs, sentence_logprobs_one_by_one
from vericite.types import AttributedAnswer, Passage


def median_time(fn, runs: int) -> float:
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=20)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--lm", default="smollm2-135m")
    ap.add_argument("--judge", default="llm3:smollm2-135m")
    ap.add_argument("--skip-measures", action="store_true")
    ap.add_argument("--cross-encoder-only", action="store_true", help="part 3 alone (no LLM: no model lock needed)")
    a = ap.parse_args()
    print(f"# {platform.machine()} {platform.python_version()}, n={a.n}, runs={a.runs}, lm={a.lm}, judge={a.judge}")
    refs = reference_passages()
    samples = load_nq()[: a.n]
    texts = [" ".join(refs[s.meta["gold_document"]].split()[:120]) for s in samples]  # CONNER-sized knowledge
    if a.cross_encoder_only:
        return cross_encoder(samples, texts, a.runs)
    lm = load_model(a.lm, cache=False)
    if not a.skip_measures:
        judge = registry.create("judges", a.judge, registry.BuildContext(cache=False))
        scorer = registry.create("scorers", "ms-marco")
        items = [s.__class__(**{**s.__dict__, "passages": [Passage("gold", refs[s.meta["gold_document"]])]}) for s in samples]
        m = ConnerMetric(judge, lm=lm, scorer=scorer, evidence_k=1, resamples=0)
        t0 = time.perf_counter()
        run = m.score_answers(items, [AttributedAnswer(raw=t) for t in texts])
        dt = time.perf_counter() - t0
        print(f"all six measures: {a.n} items in {dt:.1f} s = {a.n / dt * 60:.1f} items/min ({run.counts['judge_calls']} judge pairs)")
        for name, r in run.results.items():
            print(f"  {name:22s} {r.value if r.value is None else round(r.value, 3)}  n={r.n}")
    spans = [[(s.start, s.end) for s in split_sentences(t) if s.clean] for t in texts]
    n_sent = sum(len(x) for x in spans)
    batched = median_time(lambda: sentence_logprobs(lm, texts, spans, context="paragraph"), a.runs)
    one = median_time(lambda: [sentence_logprobs_one_by_one(lm, t, s) for t, s in zip(texts, spans)], a.runs)
    print(f"LM sentence scoring, {len(texts)} texts, {n_sent} sentences: one evaluation per text {batched:.2f} s, one call per sentence {one:.2f} s, ratio {one / batched:.2f}x")
    cross_encoder(samples, texts, a.runs)


def cross_encoder(samples, texts, runs: int) -> None:
    from vericite.models.scorers.onnx import OnnxCrossEncoder

    pairs = [(s.question, t) for s, t in zip(samples, texts)]
    big, single = OnnxCrossEncoder(batch_size=16), OnnxCrossEncoder(batch_size=1)
    tb = median_time(lambda: big.score(pairs), runs)
    t1 = median_time(lambda: [single.score([p]) for p in pairs], runs)
    print(f"cross-encoder, {len(pairs)} pairs: batched (16) {tb:.2f} s, one pair at a time {t1:.2f} s, ratio {t1 / tb:.2f}x")


if __name__ == "__main__":
    main()
