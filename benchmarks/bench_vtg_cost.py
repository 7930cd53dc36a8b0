"""What VTG's calls cost on an embedded llama.cpp model, and what two changes save (issue 12's benchmark: "the share
of VTG's time in generation, verification and retrieval; verifier judgements batched and the stable memory prefix
reused across trials: the gain against one call per check"):

    VERICITE_THREADS=1 nice -n 19 python benchmarks/bench_vtg_cost.py --model smollm2-135m \\
        --dataset ../shared/data/alce/samples/eli5_eval_bm25_top10_30q.json --questions 1 --runs 1 \\
        --method-arg max_sentences=2 [--variants sequential,batched,state-cache,both] [--json out.json]

Each variant answers the same questions with VTG (``vtg@1``, the judge ``llm:<model>`` on the method's own
backend, as the method's default), on a newly loaded model and a new, empty call cache per run, so every call
runs:

- ``sequential``: the code before this benchmark: the simplifier's checks one judge call each, llama.cpp keeping
  only the last prompt's tokens (``simplifier_batch=false``, ``state_cache_mb=0``);
- ``batched``: the simplifier's checks of a round in one judge call (``simplifier_batch=true``);
- ``state-cache``: one call per check, and llama.cpp's states kept in a RAM cache of ``--state-cache-mb`` MiB,
  each prompt starting from the cached state that shares its longest token prefix (``state_cache_mb``);
- ``both``;
- ``own-judge`` (not run by default): one call per check, the judge on a second instance of the model;
- ``per-step`` (``--replay`` only): one instance per step (sentence, citation, queries, judge).

Per variant (medians over runs): the tokens llama.cpp evaluated (``evaluated_tokens``: prompt tokens not reused
plus generated ones; the model-independent measure of work), the prompt and completion tokens the calls asked
for (metered, as the run's usage), judge calls (invocations of the judge) and pairs judged, the simplifier's checks
and its speculative checks, wall seconds, and the share of VTG's time by component (sentence, cite, queries,
verify, retrieval, from the trace). Each variant's answers and traces (every trial's sentence, citations, both
verdicts with their probabilities, the simplifier's removals and checks) are compared with the first variant's:
``same answers`` says whether they are identical ("yes"), identical but for probabilities ("yes but P (±gap)", the
largest gap: a judge's batched pairs move P(yes) a little) or not ("NO").

A real run of every variant costs minutes on a loaded machine. ``--replay CACHE`` costs seconds: it answers the same
questions again from the call cache of one real run (``--keep-caches``; a call missing from it is an error), for
each simplifier mode, and counts what llama.cpp would evaluate for those calls under each prefix policy by
replaying llama-cpp-python's rules on the calls' real prompt tokens (the model's chat template and tokenizer: the
model is loaded and evaluates two tokens, to measure a state's size): :class:`ReuseSim`. Its counts are checked against the real runs'
``evaluated_tokens`` (printed beside them when ``--json`` files of real runs are given with ``--real``)."""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

VARIANTS = {
    "sequential": {"simplifier_batch": False, "state_cache_mb": 0},
    "batched": {"simplifier_batch": True, "state_cache_mb": 0},
    "state-cache": {"simplifier_batch": False, "state_cache_mb": None},
    "both": {"simplifier_batch": True, "state_cache_mb": None},
    # not in the default list: the judge on a second llama.cpp instance of the same model (built here; `--judge
    # llm:<model>@2` loaded one before it shared the method's model), so its prompts never displace the generator's
    "own-judge": {"simplifier_batch": False, "state_cache_mb": 0, "judge_instance": True},
    # replay only: one instance per step (sentence, citation, queries, judge), each keeping its last prompt
    "per-step": {"simplifier_batch": False, "state_cache_mb": 0, "replay_only": True},
}
DEFAULT_VARIANTS = ("sequential", "batched", "state-cache", "both")


class CountingJudge:
    """An LLM judge that counts its calls (each a batch of pairs) and the pairs judged."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.id = inner.id
        self.calls = 0
        self.pairs = 0

    @property
    def backend(self) -> Any:  # the method meters the judge's model calls by swapping this
        return self.inner.backend

    @backend.setter
    def backend(self, value: Any) -> None:
        self.inner.backend = value

    def judge(self, pairs: Any) -> Any:
        self.calls += 1
        self.pairs += len(pairs)
        return self.inner.judge(pairs)


def comparable(record: dict) -> dict:
    """What must not change between variants: the answer, and each trial's texts, citations and verdicts."""
    trials = []
    for s in record["vtg"]["sentences"]:
        for t in s["trials"]:
            simp = {k: v for k, v in (t.get("simplifier") or {}).items() if k not in ("calls", "speculative")}
            trials.append({k: t.get(k) for k in ("sentence", "raw", "cite_raw", "citations", "generation_verifier", "memory_verifier", "queries", "retrieved", "outcome")} | {"simplifier": simp})
    return {"output": record["output"], "trials": trials}


def float_gap(a: Any, b: Any) -> float | None:
    """The largest difference between the numbers of two records equal in everything else (0.0 when identical),
    None when they differ in anything but a probability: batching a judge's pairs moves P(yes) a little."""
    if isinstance(a, float) and isinstance(b, float):
        return abs(a - b)
    if isinstance(a, dict) and isinstance(b, dict):
        if a.keys() != b.keys():
            return None
        a, b = [a[k] for k in a], [b[k] for k in a]
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            return None
        gaps = [float_gap(x, y) for x, y in zip(a, b)]
        return None if None in gaps else max(gaps, default=0.0)  # type: ignore[type-var]
    return 0.0 if a == b and type(a) is type(b) else None


def sameness(ref: list, *runs: list) -> str:
    """The ``same answers`` column for the records of one or more runs against ``ref``: yes, the same but for
    probabilities (the largest gap of any run), or NO (any run differing otherwise)."""
    gaps = [float_gap(records, ref) for records in runs]
    gap = None if None in gaps else max(gaps, default=0.0)  # type: ignore[type-var]
    return "NO" if gap is None else "yes" if gap == 0 else f"yes but P (±{gap:.3f})"


def one_run(model: str, samples: list, method_args: dict, variant: dict, state_cache_mb: int, keep: Path | None = None) -> dict:
    from vericite.generate.vtg import build
    from vericite.judges.llm import LLMJudge
    from vericite.models import load_model
    from vericite.registry import BuildContext

    mb = state_cache_mb if variant["state_cache_mb"] is None else variant["state_cache_mb"]
    with tempfile.TemporaryDirectory() as tmp:
        path = keep if keep is not None else Path(tmp) / "calls.sqlite"
        if path.exists():
            raise SystemExit(f"{path} exists: each run needs an empty call cache")
        backend = load_model(model, cache=str(path), state_cache_mb=mb)
        judge_backend = load_model(model, cache=str(path), state_cache_mb=mb) if variant.get("judge_instance") else backend
        judge = CountingJudge(LLMJudge(judge_backend))
        method = build("", ctx=BuildContext(cache=False), backend=backend, judge=judge, simplifier_batch=variant["simplifier_batch"], **method_args)
        backend.backend.llama  # load the model before the clock starts
        judge_backend.backend.llama
        records, t0 = [], time.perf_counter()
        for s in samples:
            records.append(method.answer(s))
        seconds = time.perf_counter() - t0
        inner = backend.backend
        out = {
            "evaluated_tokens": inner.evaluated_tokens + (judge_backend.backend.evaluated_tokens if judge_backend is not backend else 0),
            "state_cache": inner.state_cache_stats,
            "seconds": seconds,
            "judge_calls": judge.calls,
            "judge_pairs": judge.pairs,
            "records": records,
        }
        backend.close()
        judge_backend.close()
    comps: dict[str, list[int]] = {}
    secs: dict[str, float] = {}
    checks = spec = 0
    for r in records:
        v = r["vtg"]
        for c, u in v["components"].items():
            comps.setdefault(c, [0, 0, 0])
            comps[c][0] += u.get("prompt_tokens", 0)
            comps[c][1] += u.get("completion_tokens", 0)
            comps[c][2] += u.get("calls", 0)
        for c, x in v["seconds"].items():
            secs[c] = secs.get(c, 0.0) + x
        for s in v["sentences"]:
            for t in s["trials"]:
                checks += (t.get("simplifier") or {}).get("checks", 0)
                spec += (t.get("simplifier") or {}).get("speculative", 0)
    out.update(components=comps, component_seconds=secs, simplifier_checks=checks, speculative=spec,
               prompt_tokens=sum(c[0] for c in comps.values()), completion_tokens=sum(c[1] for c in comps.values()),
               model_calls=sum(c[2] for c in comps.values()))
    return out


class ReuseSim:
    """llama-cpp-python 0.3.36's prefix reuse, token for token: ``Llama.generate`` evaluates what follows the
    longest common prefix of the prompt with the live context (all of it when nothing is shared; one token again
    when the whole prompt is shared), and with a state cache ``create_completion`` first restores the cached state
    whose key (prompt + completion tokens) shares the longest prefix with the prompt (the oldest of equals; moved
    to the newest end) when its tokens share more than the live context does, and saves the state after each call.
    ``capacity``: the cache's bytes (None: it never evicts), a state of n tokens taking ``overhead + per_token * n``
    bytes (:meth:`Replay.state_bytes` measures both on the model); above it the least recently used states go first,
    as ``LlamaRAMCache`` drops them."""

    def __init__(self, cache: bool, capacity: int | None = None, overhead: int = 0, per_token: int = 0) -> None:
        self.cache: dict[tuple[int, ...], list[int]] | None = {} if cache else None
        self.capacity, self.overhead, self.per_token = capacity, overhead, per_token
        self.live: list[int] = []
        self.evaluated = 0
        self.restored = 0
        self.evicted = 0
        self.by_kind: dict[str, int] = {}

    @staticmethod
    def lcp(a: Any, b: Any) -> int:
        n = 0
        for x, y in zip(a, b):
            if x != y:
                break
            n += 1
        return n

    def call(self, prompt: list[int], completion: list[int], key_tail: list[int], kind: str = "") -> int:
        """One call: ``prompt`` tokens, the ``completion`` tokens it evaluated after them, ``key_tail`` the
        completion tokens of the cache key (the sampled ones, the last not evaluated). Returns tokens evaluated."""
        if self.cache:
            best, best_len = None, 0
            for k in self.cache:
                n = self.lcp(k, prompt)
                if n > best_len:
                    best, best_len = k, n
            if best is not None:
                state = self.cache.pop(best)
                self.cache[best] = state  # most recently used
                if self.lcp(state, prompt) > self.lcp(self.live, prompt):
                    self.live = list(state)
                    self.restored += 1
        shared = self.lcp(self.live, prompt)
        reuse = shared - 1 if shared == len(prompt) else shared
        n = len(prompt) - max(reuse, 0) + len(completion)
        self.evaluated += n
        self.by_kind[kind] = self.by_kind.get(kind, 0) + n
        self.live = list(prompt) + list(completion)
        if self.cache is not None:
            key = tuple(prompt) + tuple(key_tail)
            self.cache.pop(key, None)
            self.cache[key] = list(self.live)
            if self.capacity is not None:
                size = lambda: sum(self.overhead + self.per_token * len(v) for v in self.cache.values())  # noqa: E731
                while self.cache and size() > self.capacity:
                    del self.cache[next(iter(self.cache))]
                    self.evicted += 1
        return n


class SplitSim:
    """Several llama.cpp instances, each keeping its last prompt: ``route`` maps a call's kind (``sentence``,
    ``cite``, ``queries``, ``verify``) to its instance (a kind not in it: instance ``""``)."""

    def __init__(self, route: dict[str, str]) -> None:
        self.route = route
        self.sims: dict[str, ReuseSim] = {}
        self.restored = self.evicted = 0

    def call(self, prompt: list[int], completion: list[int], key_tail: list[int], kind: str = "") -> int:
        return self.sims.setdefault(self.route.get(kind, ""), ReuseSim(cache=False)).call(prompt, completion, key_tail, kind)

    @property
    def evaluated(self) -> int:
        return sum(x.evaluated for x in self.sims.values())

    @property
    def by_kind(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for x in self.sims.values():
            for k, v in x.by_kind.items():
                out[k] = out.get(k, 0) + v
        return out


class Replay:
    """A backend that answers from the call cache of a real run (a miss is an error) and tells :class:`ReuseSim`s
    the real prompt tokens of every call (the loaded model's chat template and tokenizer; nothing evaluated)."""

    def __init__(self, model: str, cache_path: Path, sims: list[ReuseSim]) -> None:
        from vericite.models import load_model

        self.cached = load_model(model, cache=str(cache_path))
        self.llm = self.cached.backend.llama
        self.sims = sims
        self.calls = 0
        self.missing = 0  # judgements not in the cache, answered arbitrarily

    def identity(self) -> Any:
        return self.cached.identity()

    def state_bytes(self) -> tuple[int, int]:
        """(overhead, bytes per token) of a saved llama.cpp state: its size after evaluating one token and two."""
        import llama_cpp

        bos = self.llm.tokenize(b"", add_bos=True, special=False)[:1] or [0]
        self.llm.reset()
        self.llm.eval(bos)
        one = int(llama_cpp.llama_state_get_size(self.llm.ctx))
        self.llm.eval(bos)
        two = int(llama_cpp.llama_state_get_size(self.llm.ctx))
        self.llm.reset()
        return one - (two - one), two - one

    def prompt_tokens(self, messages: Any) -> list[int]:
        """The tokens ``create_chat_completion`` would evaluate for ``messages`` (caught where it hands them on)."""
        got: list[list[int]] = []

        class Caught(Exception):
            pass

        def catch(*a: Any, **kw: Any) -> Any:
            got.append(list(kw["prompt"] if "prompt" in kw else a[0]))
            raise Caught

        self.llm.create_completion = catch
        try:
            self.llm.create_chat_completion(messages=[dict(m) for m in messages], max_tokens=1)
        except Caught:
            pass
        finally:
            del self.llm.create_completion
        return got[0]

    def _tell(self, messages: Any, completion: list[int], key_tail: list[int]) -> None:
        from vericite.models.fake import last_user_message

        prompt = self.prompt_tokens(messages)
        self.calls += 1
        user = last_user_message(messages)
        kind = "verify" if key_tail == [-2] else "cite" if "Sentence with citation:" in user else "queries" if "Generated questions:" in user else "sentence"
        for sim in self.sims:
            sim.call(prompt, completion, key_tail, kind)

    def generate(self, prompts: Any, params: Any) -> list:
        from vericite.types import Completion

        out = []
        for msgs in prompts:
            hit = self.cached.cache.get(self.cached.call_key("generate", messages=[dict(m) for m in msgs], params=params.to_dict()))
            if hit is None:
                raise SystemExit("replay: a generation missing from the call cache (the replay is not the run it was filled by)")
            c = Completion.from_dict(hit)
            toks = list(self.llm.tokenize(c.text.encode("utf-8"), add_bos=False, special=False))
            # every sampled token is evaluated before the next is sampled, except the last one when the length
            # limit ended the completion (an end-of-generation token is sampled, never evaluated nor counted)
            n_eval = c.completion_tokens - (1 if c.finish_reason == "length" else 0)
            toks = (toks + [-1] * c.completion_tokens)[: c.completion_tokens]
            self._tell(msgs, toks[:n_eval], toks)
            out.append(c)
        return out

    def next_token_logprobs_usage(self, prompts: Any, candidates: Any) -> list:
        from vericite.types import Usage

        out = []
        for msgs in prompts:
            item = {"messages": [dict(m) for m in msgs], "candidates": list(candidates)}
            scores = self.cached.cache.get(self.cached.call_key("next_token_logprobs", **item))
            if scores is None:
                # a check the real run never asked: a batched simplifier's speculative check when the cache was filled
                # by a run of one call per check. No removal depends on it (the records are compared with the real
                # runs' to show it); its prompt still counts
                self.missing += 1
                scores = {c: -0.7 for c in candidates}
            u = self.cached.cache.get(self.cached.call_key("next_token_usage", **item), count=False)
            self._tell(msgs, [], [-2])  # the one token sampled to read the distribution is never evaluated
            out.append((scores, Usage.from_dict(u) if isinstance(u, dict) else None))
        return out

    def next_token_logprobs(self, prompts: Any, candidates: Any) -> list:
        return [s for s, _ in self.next_token_logprobs_usage(prompts, candidates)]


def replay(model: str, cache_path: Path, samples: list, method_args: dict, names: list[str], capacity_mb: int) -> dict[str, dict]:
    """Each simplifier mode once over the cache, both prefix policies simulated: the variants' counts."""
    from vericite.generate.vtg import build
    from vericite.judges.llm import LLMJudge
    from vericite.registry import BuildContext

    out: dict[str, dict] = {}
    for batch in (False, True):
        backend = Replay(model, cache_path, [])
        overhead, per_token = backend.state_bytes()
        sims: dict[str, Any] = {"last": ReuseSim(cache=False), "cache": ReuseSim(cache=True, capacity=capacity_mb << 20, overhead=overhead, per_token=per_token), "split": SplitSim({"verify": "judge"}),
                                "per-step": SplitSim({k: k for k in ("sentence", "cite", "queries", "verify")})}
        backend.sims = list(sims.values())
        judge = CountingJudge(LLMJudge(backend))
        method = build("", ctx=BuildContext(cache=False), backend=backend, judge=judge, simplifier_batch=batch, **method_args)
        records = [method.answer(s) for s in samples]
        for n in names:
            v = VARIANTS[n]
            if v["simplifier_batch"] is batch:
                sim = sims["per-step" if v.get("replay_only") else "split" if v.get("judge_instance") else "cache" if v["state_cache_mb"] != 0 else "last"]
                out[n] = {"evaluated_tokens": sim.evaluated, "restored": sim.restored, "evicted": sim.evicted, "model_calls": backend.calls,
                          "state_bytes": (overhead, per_token), "by_kind": dict(sim.by_kind),
                          "judge_calls": judge.calls, "judge_pairs": judge.pairs, "missing": backend.missing,
                          "records": [comparable(r) for r in records]}
        backend.cached.close()
    return out


def print_replay(args: argparse.Namespace, samples: list, method_args: dict, names: list[str]) -> None:
    got = replay(args.model, args.replay, samples, method_args, names, args.state_cache_mb)
    real: dict[str, list[dict]] = {}
    folders = []
    for path in args.real:
        if path.is_dir():  # a `vericite generate` run folder: its answers, to compare with the replay's
            recs = {r["id"]: r for r in (json.loads(line) for line in (path / "samples.jsonl").read_text(encoding="utf-8").splitlines() if line.strip())}
            folders.append((path, [comparable(recs[s.id]) if s.id in recs else None for s in samples]))
            continue
        for n, xs in json.loads(path.read_text(encoding="utf-8")).items():
            real.setdefault(n, []).extend(xs)
    print(f"replay of {args.replay} (model {args.model}'s tokenizer and chat template; two tokens evaluated), "
          f"{len(samples)} question(s): {', '.join(s.id for s in samples)}; vtg {method_args}; state cache {args.state_cache_mb} MiB, "
          + "a state {:,} bytes + {:,} per token".format(*got[names[0]]["state_bytes"]))
    base = got[names[0]]["evaluated_tokens"]
    print(f"{'variant':<13}{'evaluated':>10}{'ratio':>7}{'model calls':>12}{'judge calls':>12}{'pairs':>7}{'restored':>9}{'evicted':>8}{'not cached':>11}{'real evaluated':>16}  same answers")
    ref = got[names[0]]["records"]
    for n in names:
        x = got[n]
        r = ", ".join(f"{y['evaluated_tokens']:,}" for y in real.get(n, [])) or "-"
        same_real = all(y["records"] == x["records"] for y in real.get(n, []))
        print(f"{n:<13}{x['evaluated_tokens']:>10,}{x['evaluated_tokens'] / base:>7.2f}{x['model_calls']:>12}{x['judge_calls']:>12}"
              f"{x['judge_pairs']:>7}{x['restored']:>9}{x['evicted']:>8}{x['missing']:>11}{r:>16}  {'yes' if x['records'] == ref and same_real else 'NO'}")
    for n in names:
        k = got[n]["by_kind"]
        print(f"{n}: evaluated by component: " + ", ".join(f"{c} {k.get(c, 0):,}" for c in ("sentence", "cite", "queries", "verify")))
    for path, recs in folders:
        # a run written before the simplifier traced each check (`checked`) is compared without them
        old = any(r and all("checked" not in t["simplifier"] for t in r["trials"]) for r in recs)
        same = (without_checks(recs) == without_checks(ref)) if old else recs == ref
        print(f"the replay's answers and traces are those of the run in {path}: {'yes' if same else 'NO'}"
              + (" (each check's verdict not compared: that run did not trace them)" if old else ""))
        if not same:
            mine, theirs = (without_checks(ref), without_checks(recs)) if old else (ref, recs)
            for s, a, b in zip(samples, mine, theirs):
                if a != b:
                    print(f"  {s.id}: {first_difference(a, b)}")


def first_difference(replayed: dict, recorded: dict | None) -> str:
    """Where a question's replayed answer first differs from the run's record (what ``comparable`` keeps)."""
    if recorded is None:
        return "not in the run's answers"
    if len(replayed["trials"]) != len(recorded["trials"]):
        return f"{len(replayed['trials'])} trials replayed, {len(recorded['trials'])} recorded"
    for i, (a, b) in enumerate(zip(replayed["trials"], recorded["trials"])):
        keys = [k for k in a if a.get(k) != b.get(k)]
        if keys:
            return f"trial {i + 1} differs in {', '.join(keys)}: {str(a[keys[0]])[:80]!r} replayed, {str(b.get(keys[0]))[:80]!r} recorded"
    return "the output differs"


def without_checks(records: list) -> list:
    return [None if r is None else {**r, "trials": [{**t, "simplifier": {k: v for k, v in t["simplifier"].items() if k != "checked"}} for t in r["trials"]]} for r in records]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", default="smollm2-135m")
    ap.add_argument("--dataset", required=True)
    ap.add_argument("--questions", type=int, default=1, help="the first N questions")
    ap.add_argument("--runs", type=int, default=1)
    ap.add_argument("--variants", default=",".join(DEFAULT_VARIANTS), help=f"of {', '.join(VARIANTS)}")
    ap.add_argument("--state-cache-mb", type=int, default=512)
    ap.add_argument("--method-arg", action="append", default=[], help="KEY=VALUE for vtg (e.g. max_sentences=2)")
    ap.add_argument("--json", type=Path, help="write every run's figures here")
    ap.add_argument("--keep-caches", type=Path, help="keep each run's call cache here (<variant>-<run>.sqlite), for --replay")
    ap.add_argument("--replay", type=Path, help="a kept call cache: count every variant by replay (the model evaluates two tokens)")
    ap.add_argument("--real", type=Path, action="append", default=[], help="--json files of real runs, or a generate run folder, to check the replay against")
    args = ap.parse_args()
    import yaml

    from vericite.datasets import load_samples

    method_args = {k: yaml.safe_load(v) for k, _, v in (a.partition("=") for a in args.method_arg)}
    method_args = {"k": 5, "queries": 2, "docs_per_query": 2, "trials": 1, **method_args}
    samples = load_samples(args.dataset)[: args.questions]
    names = [v.strip() for v in args.variants.split(",") if v.strip()]
    unknown = [n for n in names if n not in VARIANTS]
    if unknown:
        raise SystemExit(f"unknown variant(s) {unknown} (known: {', '.join(VARIANTS)})")
    if args.replay:
        print_replay(args, samples, method_args, names)
        return
    if any(VARIANTS[n].get("replay_only") for n in names):
        raise SystemExit(f"only --replay counts {', '.join(n for n in names if VARIANTS[n].get('replay_only'))}")
    runs: dict[str, list[dict]] = {n: [] for n in names}
    for r in range(args.runs):  # variants interleaved, so load on the machine falls on all of them alike
        for n in names:
            print(f"run {r + 1}/{args.runs}: {n} ...", file=sys.stderr, flush=True)
            keep = None
            if args.keep_caches:
                args.keep_caches.mkdir(parents=True, exist_ok=True)
                keep = args.keep_caches / f"{n}-{r + 1}.sqlite"
            runs[n].append(one_run(args.model, samples, method_args, VARIANTS[n], args.state_cache_mb, keep))
    print(f"model {args.model}, {len(samples)} question(s): {', '.join(s.id for s in samples)}; vtg {method_args}; "
          f"{args.runs} run(s) per variant, each on a new model and an empty call cache; state cache {args.state_cache_mb} MiB")
    base = runs[names[0]]
    ref = [comparable(x) for x in base[0]["records"]]
    med = lambda xs: statistics.median(xs)  # noqa: E731
    b_eval = med([x["evaluated_tokens"] for x in base])
    b_sec = med([x["seconds"] for x in base])
    print(f"{'variant':<13}{'evaluated':>10}{'ratio':>7}{'prompt+compl':>14}{'model calls':>12}{'judge calls':>12}{'pairs':>7}"
          f"{'checks':>7}{'spec.':>6}{'restored':>9}{'seconds':>9}{'ratio':>7}  same answers")
    for n in names:
        xs = runs[n]
        ev, sec = med([x["evaluated_tokens"] for x in xs]), med([x["seconds"] for x in xs])
        same = sameness(ref, *([comparable(r) for r in x["records"]] for x in xs))
        x0 = xs[0]
        print(f"{n:<13}{ev:>10,.0f}{ev / b_eval:>7.2f}{x0['prompt_tokens'] + x0['completion_tokens']:>14,}{x0['model_calls']:>12}"
              f"{x0['judge_calls']:>12}{x0['judge_pairs']:>7}{x0['simplifier_checks']:>7}{x0['speculative']:>6}"
              f"{x0['state_cache']['restored_states']:>9}{sec:>9.1f}{sec / b_sec:>7.2f}  {same}")
    for n in names:
        secs: dict[str, float] = {}
        for x in runs[n]:
            for c, v in x["component_seconds"].items():
                secs[c] = secs.get(c, 0.0) + v
        total = sum(secs.values()) or 1.0
        print(f"{n}: time by component: " + ", ".join(f"{c} {v / total:.0%}" for c, v in secs.items())
              + "; seconds per run: " + ", ".join(f"{x['seconds']:.1f}" for x in runs[n]))
    if args.json:
        for xs in runs.values():
            for x in xs:
                x["records"] = [comparable(r) for r in x["records"]]
        args.json.write_text(json.dumps(runs, indent=1, ensure_ascii=False), encoding="utf-8")


if __name__ == "__main__":
    main()
