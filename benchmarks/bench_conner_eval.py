"""What an item of ``vericite evaluate --task conner`` costs, the call order before and after (issue 14: the Qwen runs
are blocked by cost). "Before" is the code as it was: factuality's pairs in the order sentence by sentence (the judge
calls of about 64 pairs then split a passage that several sentences retrieve), and the llama.cpp scorer evaluating
every text from its first token (``reuse_scorer_prefix=False``); "after" is the code as it is: the pairs passage by
passage (``metrics.conner.passage_major``), the scorer keeping the prefix it shares with the next text and scoring a
call's texts in the order of their tokens, and the order test's, informativeness's and helpfulness's texts in one
call (``metrics/conner_lm.py``). Nothing else differs: the same pairs, prompts and texts, the same model.

The evaluation is the command's: the judged measures (factuality, validity, answer_em) answer by answer with the
judgements memoised across answers (``evaluate/checkpoint.py``'s ``MemoJudge``), then relevance and the LM measures
over the corpus; ``--judge llm3:<model>`` and ``--lm`` the same model (one instance, as the command loads them).

Two parts:

``--count`` (no model is evaluated: the model's tokenizer only, ``vocab_only``): the tokens llama.cpp evaluates,
before and after, on every item of each ``--input``. The generating instance is a stand-in that renders each chat
prompt with the model's chat template, tokenises it and counts what llama-cpp-python evaluates (the tokens after the
longest prefix shared with what it holds, and the reply's); the scorer is the real backend's code
(``LlamaCppBackend._score_tokens``) over a stand-in context that counts. The reader's reply is a fixed word.

``--real N``: SmolLM2 (or ``--lm``), the call cache off, two instances of the model (before, after) loaded before the
clock starts: the corpus's LM measures before and after on the first ``--lm-items`` items of the first ``--input``,
then its first ``N`` items' judged measures, before and after alternately item by item (median seconds per item);
tokens, seconds, items per minute, and the largest difference of any value between the two (the tolerance). Lines
are printed as they come, so a run cut by a time limit keeps what it measured.

Run: ``nice -n 19 env VERICITE_THREADS=1 OMP_NUM_THREADS=1 python benchmarks/bench_conner_eval.py --input
runs/nq-bm25/samples.jsonl --input runs/nq-ref/samples.jsonl --index runs/nq-idx --count`` (each input a ``vericite
generate --method conner-knowledge`` run's samples.jsonl), and ``... --real 2``.
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import threading
import time
from typing import Any

import numpy as np

from vericite import registry
from vericite.evaluate.checkpoint import MemoJudge
from vericite.judges.three_way import LLM3Judge
from vericite.metrics import conner
from vericite.metrics.conner import ConnerMetric
from vericite.models import load_model
from vericite.models import llamacpp
from vericite.models.llamacpp import LlamaCppBackend, shared_prefix
from vericite.types import AttributedAnswer, Completion, ModelIdentity, Sample

JUDGED = ["factuality", "validity", "answer_em"]
CORPUS = ["relevance", "coherence_sentence", "coherence_paragraph", "informativeness", "helpfulness"]


def read_items(path: str, limit: int | None) -> tuple[list[Sample], list[AttributedAnswer]]:
    rows = [json.loads(line) for line in open(path, encoding="utf-8") if line.strip()][:limit]
    samples = [Sample(id=d["id"], question=d["question"], answers=d.get("answers"), meta=d.get("meta") or {}) for d in rows]
    return samples, [AttributedAnswer(raw=d["output"]) for d in rows]


class order:
    """The call order before (``old=True``: factuality's pairs sentence by sentence) or after, for a ``with`` block."""

    def __init__(self, old: bool) -> None:
        self.old = old

    def __enter__(self) -> None:
        self.saved = conner.passage_major
        if self.old:
            conner.passage_major = lambda pairs: list(pairs)

    def __exit__(self, *exc: Any) -> None:
        conner.passage_major = self.saved


def evaluate(judge: Any, lm: Any, retriever: Any, scorer: Any, samples: list, answers: list, *, evidence_k: int, per_item=None):
    """The command's evaluation: judged measures answer by answer (memo across answers), then the corpus's."""
    memo: dict[str, Any] = {}
    part = ConnerMetric(MemoJudge(judge, memo, {}), lm=lm, retriever=retriever, evidence_k=evidence_k, resamples=0, metrics=JUDGED)
    scores = []
    for s, a in zip(samples, answers):
        t0 = time.perf_counter()
        scores.append(part.score_answers([s], [a]).scores[0]["conner"])
        if per_item is not None:
            per_item.append(time.perf_counter() - t0)
    rest = ConnerMetric(None, lm=lm, scorer=scorer, evidence_k=evidence_k, resamples=0, metrics=CORPUS).score_answers(samples, answers)
    return [{**a, **b["conner"]} for a, b in zip(scores, rest.scores)]


# ---------------------------------------------------------------------------------------------- --count


class CountingScorer:
    """A ``logits_all`` context that counts the tokens it evaluates (its logits are zeros: nothing is computed)."""

    def __init__(self, vocab: Any, n_ctx: int) -> None:
        self.vocab = vocab
        self.input_ids = np.zeros(n_ctx, dtype=np.intc)
        self.n_tokens = 0
        self.evaluated_tokens = 0
        self._zeros = np.zeros((1, vocab.n_vocab()), dtype=np.single)

    def tokenize(self, text: bytes, add_bos: bool = True, special: bool = False) -> list[int]:
        return self.vocab.tokenize(text, add_bos=add_bos, special=special)

    def detokenize(self, tokens: list[int]) -> bytes:
        return self.vocab.detokenize(tokens)

    def reset(self) -> None:
        self.n_tokens = 0

    def eval(self, tokens: list[int]) -> None:
        self.input_ids[self.n_tokens : self.n_tokens + len(tokens)] = tokens
        self.n_tokens += len(tokens)
        self.evaluated_tokens += len(tokens)

    @property
    def scores(self) -> Any:
        return _Rows(self._zeros)


class _Rows:
    def __init__(self, zeros: np.ndarray) -> None:
        self.zeros = zeros

    def __getitem__(self, rows: slice) -> np.ndarray:
        n = len(range(*rows.indices(1 << 30)))
        return np.broadcast_to(self.zeros, (n, self.zeros.shape[1]))


class CountingBackend:
    """The llama.cpp backend's token accounting without evaluating (module docstring, ``--count``)."""

    def __init__(self, model_path: str, *, reuse_scorer_prefix: bool, scorer_n_ctx: int = llamacpp.DEFAULT_SCORER_N_CTX) -> None:
        import llama_cpp
        from llama_cpp.llama_chat_format import Jinja2ChatFormatter

        self.vocab = llama_cpp.Llama(model_path=model_path, vocab_only=True, verbose=False)
        meta = self.vocab.metadata
        bos, eos = meta.get("tokenizer.ggml.bos_token_id"), meta.get("tokenizer.ggml.eos_token_id")
        text = lambda t: self.vocab.detokenize([int(t)], special=True).decode("utf-8", "replace") if t is not None else ""  # noqa: E731
        self.format = Jinja2ChatFormatter(template=meta["tokenizer.chat_template"], eos_token=text(eos), bos_token=text(bos))
        self.held: list[int] = []
        self.evaluated_tokens = 0
        self.calls = 0
        sc = object.__new__(LlamaCppBackend)  # the real scoring code over a counting context
        sc._lock, sc._llm, sc._scorer = threading.RLock(), None, CountingScorer(self.vocab, scorer_n_ctx)
        sc.scorer_n_ctx, sc.reuse_scorer_prefix = scorer_n_ctx, reuse_scorer_prefix
        self.scoring = sc

    def identity(self) -> ModelIdentity:
        return ModelIdentity(name="counting", backend="llamacpp", model="counting", sha256="0" * 64)

    @property
    def scored_tokens(self) -> int:
        return self.scoring._scorer.evaluated_tokens

    def _prompt(self, messages: Any, reply: list[int]) -> None:
        r = self.format(messages=[dict(m) for m in messages])
        toks = self.vocab.tokenize(r.prompt.encode("utf-8"), add_bos=r.added_special is False, special=True)
        keep = shared_prefix(np.asarray(self.held, dtype=np.intc), toks)
        self.evaluated_tokens += len(toks) - keep + max(0, len(reply) - 1)  # the last sampled token is not evaluated
        self.held = toks + reply
        self.calls += 1

    def next_token_logprobs(self, prompts: Any, candidates: Any) -> list[dict[str, float]]:
        for p in prompts:
            self._prompt(p, [])
        return [{"Supports": -0.2, "Refutes": -3.0, "Neutral": -2.0, "Yes": -0.2, "No": -2.0} for _ in prompts]

    def generate(self, prompts: Any, params: Any) -> list[Completion]:
        reply = "Rome"
        for p in prompts:
            self._prompt(p, self.vocab.tokenize(reply.encode(), add_bos=False))
        return [Completion(text=reply, prompt_tokens=0, completion_tokens=1) for _ in prompts]

    def tokenize(self, text: str) -> list[int]:
        return self.scoring.tokenize(text)

    def continuation_logprobs(self, pairs: Any) -> list[list[float]]:
        return self.scoring.continuation_logprobs(pairs)

    def continuation_token_spans(self, pairs: Any) -> list[list[tuple[int, int, float]]]:
        return self.scoring.continuation_token_spans(pairs)


def count(a: argparse.Namespace, model_path: str, retriever: Any) -> None:
    saved = llamacpp.log_softmax
    llamacpp.log_softmax = lambda x: x  # zeros stay zeros: nothing to normalise
    try:
        for path in a.input:
            samples, answers = read_items(path, a.items)
            row = {}
            for name, old in (("before", True), ("after", False)):
                b = CountingBackend(model_path, reuse_scorer_prefix=not old)
                with order(old):
                    t0 = time.perf_counter()
                    evaluate(LLM3Judge(b), b, retriever, None, samples, answers, evidence_k=a.evidence_k)
                row[name] = (b.calls, b.evaluated_tokens, b.scored_tokens, time.perf_counter() - t0)
            (c0, g0, s0, _), (c1, g1, s1, _) = row["before"], row["after"]
            print(f"{path}: {len(samples)} items, evidence_k={a.evidence_k}")
            print(f"  judge and reader (generating instance): {c0} calls; tokens evaluated before {g0}, after {g1} ({g0 / g1:.2f}x)")
            print(f"  LM scoring (scorer instance):                     tokens evaluated before {s0}, after {s1} ({s0 / s1:.2f}x)")
            print(f"  all: before {g0 + s0}, after {g1 + s1} ({(g0 + s0) / (g1 + s1):.2f}x); per item before {(g0 + s0) / len(samples):.0f}, after {(g1 + s1) / len(samples):.0f}")
    finally:
        llamacpp.log_softmax = saved


# ---------------------------------------------------------------------------------------------- --real


def real(a: argparse.Namespace, retriever: Any) -> None:
    scorer = registry.create("scorers", "ms-marco")
    models = {"before": load_model(a.lm, cache=False, reuse_scorer_prefix=False), "after": load_model(a.lm, cache=False)}
    judges = {k: LLM3Judge(m) for k, m in models.items()}
    for m in models.values():  # loaded before the clock starts: each instance's two contexts
        m.llama, m.scorer
    scorer.score([("q", "a text")])
    print(f"# {platform.machine()} {platform.python_version()}, lm={a.lm} (judge llm3 of the same instance), evidence_k={a.evidence_k}, call cache off", flush=True)
    gaps: list[float] = []

    def compare(x: dict[str, Any], y: dict[str, Any]) -> None:
        for key in set(x) | set(y):
            u, v = x.get(key), y.get(key)
            if isinstance(u, (int, float)) and isinstance(v, (int, float)) and not isinstance(u, bool):
                gaps.append(abs(u - v))
            elif isinstance(u, dict) and isinstance(v, dict):
                compare(u, v)
            elif u != v:
                print(f"  differs: {key}: {u!r} / {v!r}", flush=True)

    lm_samples, lm_answers = read_items(a.input[0], a.lm_items)
    print(f"LM measures (coherence, informativeness, helpfulness; relevance), {len(lm_samples)} items of {a.input[0]}, one pass each:", flush=True)
    lm_seconds, lm_tokens, lm_values = {}, {}, {}
    for k in ("before", "after"):
        s0, t0 = models[k].scored_tokens, time.perf_counter()
        with order(k == "before"):
            r = ConnerMetric(None, lm=models[k], scorer=scorer, resamples=0, metrics=CORPUS).score_answers(lm_samples, lm_answers)
        lm_seconds[k], lm_tokens[k] = time.perf_counter() - t0, models[k].scored_tokens - s0
        lm_values[k] = [x["conner"] for x in r.scores]
        print(f"  {k:6s}: scorer tokens {lm_tokens[k]}, {lm_seconds[k]:.1f} s", flush=True)
    print(f"  ratio {lm_seconds['before'] / lm_seconds['after']:.2f}x in seconds, {lm_tokens['before'] / max(1, lm_tokens['after']):.2f}x in tokens", flush=True)
    for x, y in zip(lm_values["before"], lm_values["after"]):
        compare(x, y)
    print(f"  largest difference of a value, before vs after: {max(gaps, default=0.0):.2e}", flush=True)

    samples, answers = read_items(a.input[0], a.real)
    print(f"judged measures (factuality, validity, answer_em), {len(samples)} items, before and after alternately:", flush=True)
    seconds: dict[str, list[float]] = {"before": [], "after": []}
    tokens: dict[str, int] = {"before": 0, "after": 0}
    memos: dict[str, dict[str, Any]] = {"before": {}, "after": {}}
    for s, ans in zip(samples, answers):
        got = {}
        for k in ("before", "after"):
            part = ConnerMetric(MemoJudge(judges[k], memos[k], {}), lm=models[k], retriever=retriever, evidence_k=a.evidence_k, resamples=0, metrics=JUDGED)
            g0 = models[k].evaluated_tokens
            with order(k == "before"):
                t0 = time.perf_counter()
                got[k] = part.score_answers([s], [ans]).scores[0]["conner"]
                seconds[k].append(time.perf_counter() - t0)
            tokens[k] += models[k].evaluated_tokens - g0
        compare(got["before"], got["after"])
        print(f"  {s.id}: before {seconds['before'][-1]:.1f} s, after {seconds['after'][-1]:.1f} s", flush=True)
    for k in ("before", "after"):
        med = statistics.median(seconds[k])
        print(f"  {k:6s}: tokens {tokens[k]}, median {med:.1f} s an item = {60 / med:.2f} items/min")
    print(f"  ratio of medians {statistics.median(seconds['before']) / statistics.median(seconds['after']):.2f}x, of tokens {tokens['before'] / max(1, tokens['after']):.2f}x")
    print(f"largest difference of any value, before vs after: {max(gaps, default=0.0):.2e}")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--input", action="append", required=True, help="a conner-knowledge run's samples.jsonl (repeatable)")
    ap.add_argument("--index", required=True, help="the evidence index (vericite docs index nq-500)")
    ap.add_argument("--evidence-k", type=int, default=10)
    ap.add_argument("--items", type=int, default=50, help="--count: items of each input")
    ap.add_argument("--count", action="store_true")
    ap.add_argument("--real", type=int, default=0, help="items evaluated on the real model, before and after")
    ap.add_argument("--lm-items", type=int, default=4, help="--real: items of the LM measures' corpus pass")
    ap.add_argument("--lm", default="smollm2-135m")
    a = ap.parse_args()
    retriever = registry.create("retrievers", f"bm25:{a.index}", registry.BuildContext(cache=False), k=a.evidence_k)
    if a.count:
        count(a, str(load_model(a.lm, cache=False).model_path), retriever)
    if a.real:
        real(a, retriever)


if __name__ == "__main__":
    main()
