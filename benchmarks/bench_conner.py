"""Time CONNER's measures (issue 14's benchmarks), on the NQ reference passages of ../shared/data/conner (read in
place) as the knowledge of the first ``--n`` nq-500 questions.

1. Items per minute for all six measures (``metrics/conner.py``) with ``--judge`` (three-way), ``--lm`` and the
   embedded ms-marco cross-encoder, evidence = the item's own gold passage cut to ``--evidence-words``
   (``evidence_k`` 1), over ``--n`` items (the call cache off: every model call is made): all measures in one
   pass, then each measure alone on the same items (coherence as its two parts), after one untimed warm-up item
   that loads the models.
2. LM scoring of the sentences: one evaluation per text (``continuation_token_spans``, all positions at once)
   against one backend call per sentence, same model, same texts, medians of ``--runs``. Two baselines: each
   sentence alone (what CONNER's ppl.py does, fewer tokens) and each sentence after the text before it (the same
   log-probabilities as the one evaluation: the like-for-like baseline; the largest difference of a sentence's
   mean log-prob is printed).
3. The cross-encoder: all (query, knowledge) pairs in one batched call (batch 16) against one pair at a time,
   same model, same pairs (medians of ``--runs``).

Run (loads an LLM): ``nice -n 19 env VERICITE_THREADS=1 OMP_NUM_THREADS=1 .venv/bin/python
benchmarks/bench_conner.py --lm smollm2-135m --judge llm3:smollm2-135m --n 10``; ``--skip-measures`` runs 2 and 3
only; ``--skip-cross-encoder`` leaves 3 out; ``--cross-encoder-only`` runs 3 alone (no LLM).
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


#: the measures timed one by one (coherence as its two parts; answer_em comes with validity's reader)
ALONE = ("factuality", "relevance", "coherence_sentence", "coherence_paragraph", "informativeness", "helpfulness", "validity")


def median_time(fn, runs: int) -> float:
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def with_evidence(sample, text: str, words: int):
    """The sample with its gold passage, cut to ``words`` words, as its one evidence passage."""
    return sample.__class__(**{**sample.__dict__, "passages": [Passage("gold", " ".join(text.split()[:words]))]})


def mean_logprob_gap(a, b) -> float:
    """The largest difference, over sentences, of the mean token log-prob in ``a`` and in ``b``."""
    gaps = [abs(sum(x) / len(x) - sum(y) / len(y)) for ra, rb in zip(a, b) for x, y in zip(ra, rb) if x and y]
    return max(gaps) if gaps else float("nan")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=20)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--lm", default="smollm2-135m")
    ap.add_argument("--judge", default="llm3:smollm2-135m")
    ap.add_argument("--evidence-words", type=int, default=300, help="the gold passage (whole articles in nq-500) cut to this many words")
    ap.add_argument("--skip-measures", action="store_true")
    ap.add_argument("--skip-alone", action="store_true", help="time all measures together only, not each alone")
    ap.add_argument("--skip-cross-encoder", action="store_true")
    ap.add_argument("--baselines", default="alone,context", help="the one-call-per-sentence baselines of part 2: alone, context or both")
    ap.add_argument("--cross-encoder-only", action="store_true", help="part 3 alone (no LLM)")
    a = ap.parse_args()
    print(f"# {platform.machine()} {platform.python_version()}, n={a.n}, runs={a.runs}, lm={a.lm}, judge={a.judge}, evidence_words={a.evidence_words}")
    refs = reference_passages()
    samples = load_nq()[: a.n + 1]
    texts = [" ".join(refs[s.meta["gold_document"]].split()[:120]) for s in samples]  # CONNER-sized knowledge
    warm, samples, warm_text, texts = samples[a.n], samples[: a.n], texts[a.n], texts[: a.n]
    if a.cross_encoder_only:
        return cross_encoder(samples, texts, a.runs)
    lm = load_model(a.lm, cache=False)
    if not a.skip_measures:
        judge = registry.create("judges", a.judge, registry.BuildContext(cache=False))
        scorer = registry.create("scorers", "ms-marco")
        items = [with_evidence(s, refs[s.meta["gold_document"]], a.evidence_words) for s in samples]
        answers = [AttributedAnswer(raw=t) for t in texts]

        def measure(names):
            return ConnerMetric(judge, lm=lm, scorer=scorer, evidence_k=1, resamples=0, metrics=names)

        # warm-up, untimed: loads the LM, the judge's model and the cross-encoder
        measure(None).score_answers([with_evidence(warm, refs[warm.meta["gold_document"]], a.evidence_words)], [AttributedAnswer(raw=warm_text)])
        t0 = time.perf_counter()
        run = measure(None).score_answers(items, answers)
        dt = time.perf_counter() - t0
        print(f"all six measures: {a.n} items in {dt:.1f} s = {a.n / dt * 60:.2f} items/min ({run.counts['judge_calls']} judge pairs)")
        for name, r in run.results.items():
            print(f"  {name:22s} {r.value if r.value is None else round(r.value, 3)}  n={r.n}")
        if not a.skip_alone:
            for name in ALONE:
                t0 = time.perf_counter()
                measure([name]).score_answers(items, answers)
                dt = time.perf_counter() - t0
                print(f"  alone: {name:20s} {dt:7.1f} s = {a.n / dt * 60:8.2f} items/min")
    spans = [[(s.start, s.end) for s in split_sentences(t) if s.clean] for t in texts]
    n_sent = sum(len(x) for x in spans)
    sentence_logprobs(lm, texts[:1], spans[:1], context="paragraph")  # warm-up: the scorer's context
    print(f"LM sentence scoring, {len(texts)} texts, {n_sent} sentences, medians of {a.runs}:", flush=True)
    batched = median_time(lambda: sentence_logprobs(lm, texts, spans, context="paragraph"), a.runs)
    print(f"  one evaluation per text            {batched:.2f} s", flush=True)
    if "alone" in a.baselines:
        alone = median_time(lambda: [sentence_logprobs_one_by_one(lm, t, s) for t, s in zip(texts, spans)], a.runs)
        print(f"  one call per sentence, alone       {alone:.2f} s ({alone / batched:.2f}x)", flush=True)
    if "context" in a.baselines:
        after = median_time(lambda: [sentence_logprobs_one_by_one(lm, t, s, context="paragraph") for t, s in zip(texts, spans)], a.runs)
        print(f"  one call per sentence, in context  {after:.2f} s ({after / batched:.2f}x)", flush=True)
        gap = mean_logprob_gap(sentence_logprobs(lm, texts, spans, context="paragraph"),
                               [sentence_logprobs_one_by_one(lm, t, s, context="paragraph") for t, s in zip(texts, spans)])
        print(f"  largest gap of a sentence's mean log-prob, one evaluation vs one call per sentence in context: {gap:.4f}")
    if not a.skip_cross_encoder:
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
