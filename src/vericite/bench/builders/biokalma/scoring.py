"""Knowledge selection (KaLMA App. A.3, Eq. 1): which pool triple to inject next.

    score_r = α · log(2N / Count_r) + (1 − α) · softmax_r(1 / perplexity_r)

* **Specificity** ``log(2N / Count_r)``: ``Count_r`` is the number of triples of the *whole graph* with property
  r, ``N`` the number of triples of the whole graph (entity labels, aliases and bookkeeping predicates not
  counted; ``GraphPool.relation_counts``). The paper counts "the occurrences Count_r of each relation r in the
  dataset with size N", derived from IDF; with N and Count_r both counted in triples, a property present on
  every person (sex or gender) gets log(2N/Count_r) ≈ log(2·18235/1064) ≈ 3.5 on BioKaLMA and one used ten
  times (handedness) ≈ 8.2. ``count_scope="pool"`` counts over the pair's own pool instead (an option, not the
  default: within one pair every property occurs once or twice, so the term barely separates anything).
* **Coherence** ``softmax_r(1/perplexity_r)``: the softmax runs over the round's candidates; perplexity_r is
  that of the current paragraph followed by a template sentence stating triple r (the whole text, as the
  paper says: "we append each sentence to the original paragraph and calculate normalized inverse
  perplexity"), ``exp(−mean token log-prob)`` from the scorer model's real log-probabilities.

  Note on scale, measured not assumed: 1/perplexity lies in (0, 1], so the softmax values of K candidates all
  lie within a factor e of each other around 1/K, while the specificity term spans several nats. With α = 0.5
  the coherence term decides only between candidates of equally frequent properties (e.g. the two people's
  occupations). That is Eq. 1 as written; the trace keeps both terms of every candidate so it can be seen.
* **Templates** (three, by the part of speech of the property, as in the paper): a noun property
  ("place of birth") reads "X's place of birth is Rome."; a verb ("participated in") "X participated in Y.";
  a property that ends in a preposition after a noun or a participle ("member of", "influenced by")
  "X is member of Y.". The part of speech comes from a small table of Wikidata properties, then from rules
  (a final preposition; an "-ed" first word), no tagger (``property_pos``).

Batching: :class:`PerplexityScorer` scores all the candidates of a round in one call. With the embedded
llama.cpp backend it evaluates the shared paragraph once and only each candidate's sentence after it
("prefix" mode, which reads the same log-probabilities as ``logprobs`` of the whole text, up to float rounding,
and stores them in the call cache under the same key); other backends get one batched ``logprobs`` call.
"""

from __future__ import annotations

import math
import time
from collections import Counter
from contextlib import nullcontext
from dataclasses import dataclass
from typing import Any, Literal, Sequence

import numpy as np

from ....models.llamacpp_scoring import log_softmax
from ....models.lm_scoring import perplexity as lm_perplexity
from ....stats import softmax
from ....types import Triple, normalise_property

PREPOSITIONS = frozenset("of in by for at to with from on into as under over about after before".split())

# part of speech of common Wikidata person properties (BioKaLMA's): noun | verb | preposition
POS_TABLE: dict[str, str] = {
    "participated in": "verb",
    "succeeds": "verb",
    "follows": "verb",
    "influenced by": "preposition",
    "succeeded by": "preposition",
    "followed by": "preposition",
    "depicted by": "preposition",
    "nominated for": "preposition",
    "convicted of": "preposition",
    "member of": "preposition",
    "student of": "preposition",
    "part of": "preposition",
    "educated at": "preposition",
    "present in work": "noun",
    "award received": "noun",
}

TEMPLATES: dict[str, str] = {
    "noun": "{subject}'s {property} is {value}.",
    "verb": "{subject} {property} {value}.",
    "preposition": "{subject} is {property} {value}.",
}

Pos = Literal["noun", "verb", "preposition"]


def property_pos(prop: str) -> Pos:
    """The part of speech a property is read as (table first, then rules)."""
    p = normalise_property(prop).lower()
    if p in POS_TABLE:
        return POS_TABLE[p]  # type: ignore[return-value]
    words = p.split()
    if len(words) >= 2 and words[-1] in PREPOSITIONS:
        # "participated in" (active past tense) vs "member of" / "influenced by" (noun or passive participle)
        if words[-1] != "by" and words[0].endswith("ed") and len(words) == 2:
            return "verb"
        return "preposition"
    if len(words) == 1 and words[0].endswith("s") and not words[0].endswith("ss") and words[0] in {"succeeds", "follows", "owns", "plays"}:
        return "verb"
    return "noun"


def template_sentence(t: Triple, subject_label: str | None = None) -> str:
    name = (subject_label or t.subject_label or t.subject).strip()
    prop = normalise_property(t.property)
    return TEMPLATES[property_pos(prop)].format(subject=name, property=prop, value=t.value.strip())


def specificity(count_r: int, n: int) -> float:
    """log(2N / Count_r); a property never counted is treated as counted once."""
    return math.log(2 * n / max(1, count_r))


def perplexity(token_logprobs: Sequence[float]) -> float:
    """exp(−mean log-prob), uncapped (CONNER's ``lm_scoring.perplexity`` without its cap); a text with no scored
    token has infinite perplexity."""
    ppl = lm_perplexity(token_logprobs, cap=None)
    return math.inf if ppl is None else ppl


@dataclass
class Candidate:
    triple: Triple
    count: int
    specificity: float
    sentence: str
    perplexity: float = math.inf
    coherence: float = 0.0
    score: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        t = self.triple
        return {
            "subject": t.subject,
            "property": t.property,
            "value": t.value,
            "count": self.count,
            "specificity": round(self.specificity, 4),
            "perplexity": round(self.perplexity, 3) if math.isfinite(self.perplexity) else None,
            "coherence": round(self.coherence, 5),
            "score": round(self.score, 5),
        }


def score_candidates(
    candidates: list[Candidate], perplexities: Sequence[float], alpha: float
) -> list[Candidate]:
    """Fill perplexity, coherence and score (Eq. 1) and return the candidates best first (ties: the order given)."""
    inv = [0.0 if not math.isfinite(p) or p <= 0 else 1.0 / p for p in perplexities]
    coh = softmax(inv)
    for c, p, s in zip(candidates, perplexities, coh):
        c.perplexity = p
        c.coherence = s
        c.score = alpha * c.specificity + (1 - alpha) * s
    order = sorted(range(len(candidates)), key=lambda i: -candidates[i].score)
    return [candidates[i] for i in order]


def make_candidates(
    triples: Sequence[Triple], counts: Counter, n: int, labels: dict[str, str]
) -> list[Candidate]:
    return [
        Candidate(t, int(counts.get(normalise_property(t.property), 0)), specificity(counts.get(normalise_property(t.property), 0), n), template_sentence(t, labels.get(t.subject)))
        for t in triples
    ]


# ------------------------------------------------------------------------------------------ perplexity


class PerplexityScorer:
    """Perplexities of ``prefix + " " + suffix`` for many suffixes.

    ``mode``: ``"auto"`` (prefix sharing when the backend is the embedded llama.cpp one, else one batched
    ``logprobs`` call), ``"prefix"``, ``"batch"`` or ``"single"`` (one ``logprobs`` call per text: the baseline
    the benchmark compares against). ``seconds`` and ``calls`` accumulate."""

    def __init__(self, backend: Any, mode: Literal["auto", "prefix", "batch", "single"] = "auto") -> None:
        self.backend = backend
        from ....models.cache import CachedBackend

        cached = isinstance(backend, CachedBackend)
        self.inner = backend.backend if cached else backend  # the model behind the call cache
        self.cache = backend.cache if cached else None
        can_prefix = all(hasattr(self.inner, a) for a in ("scorer", "tokenize", "scorer_n_ctx"))
        if mode == "auto":
            mode = "prefix" if can_prefix else "batch"
        if mode == "prefix" and not can_prefix:
            mode = "batch"
        self.mode = mode
        self.seconds = 0.0
        self.calls = 0
        self.prefix_fallbacks = 0

    @staticmethod
    def join(prefix: str, suffix: str) -> str:
        return f"{prefix.rstrip()} {suffix.strip()}" if prefix.strip() else suffix.strip()

    def perplexities(self, prefix: str, suffixes: Sequence[str]) -> list[float]:
        texts = [self.join(prefix, s) for s in suffixes]
        t0 = time.perf_counter()
        if not texts:
            return []
        if self.mode == "single":
            lps = [self.backend.logprobs([t])[0] for t in texts]
            self.calls += len(texts)
        elif self.mode == "batch":
            lps = self.backend.logprobs(texts)
            self.calls += 1
        else:
            lps = self._prefix(prefix.rstrip(), texts)
            self.calls += 1
        self.seconds += time.perf_counter() - t0
        return [perplexity(x) for x in lps]

    # -------------------------------------------------------------- prefix sharing (llama.cpp)

    def _cache_key(self, text: str) -> str | None:
        return self.backend.call_key("logprobs", text=text) if self.cache is not None else None  # a CachedBackend's

    def _prefix(self, prefix: str, texts: list[str]) -> list[list[float]]:
        out: list[list[float] | None] = [None] * len(texts)
        keys = [self._cache_key(t) for t in texts]
        for i, k in enumerate(keys):
            if k is not None:
                out[i] = self.cache.get(k)
        missing = [i for i, v in enumerate(out) if v is None]
        if missing:
            fresh = self._prefix_compute(prefix, [texts[i] for i in missing])
            fallback = [j for j, v in enumerate(fresh) if v is None]
            if fallback:  # the tokens did not split at the prefix, or the text is too long: the backend's own way
                self.prefix_fallbacks += len(fallback)
                got = self.inner.logprobs([texts[missing[j]] for j in fallback])
                for j, v in zip(fallback, got):
                    fresh[j] = v
            for i, v in zip(missing, fresh):
                out[i] = v
                if keys[i] is not None:
                    self.cache.put(keys[i], "logprobs", v)
        return out  # type: ignore[return-value]

    def _prefix_compute(self, prefix: str, texts: list[str]) -> list[list[float] | None]:
        inner = self.inner
        lock = getattr(inner, "lock", None) or nullcontext()
        out: list[list[float] | None] = []
        with lock:
            llm = inner.scorer
            n_ctx = int(inner.scorer_n_ctx)
            ptoks = list(inner.tokenize(prefix)) if prefix else []
            shared = len(ptoks) >= 2 and len(ptoks) < n_ctx
            prefix_lps: list[float] = []
            if shared:
                llm.reset()
                llm.eval(ptoks)
                rows = log_softmax(np.asarray(llm.scores[0 : len(ptoks) - 1]))
                prefix_lps = rows[np.arange(len(ptoks) - 1), np.asarray(ptoks[1:])].tolist()
            for text in texts:
                toks = list(inner.tokenize(text))
                if not shared or len(toks) > n_ctx or len(toks) <= len(ptoks) or toks[: len(ptoks)] != ptoks:
                    out.append(None)
                    continue
                suffix = toks[len(ptoks) :]
                llm.n_tokens = len(ptoks)  # keep the prefix in the KV cache; eval() drops what followed it
                llm.eval(suffix)
                rows = log_softmax(np.asarray(llm.scores[len(ptoks) - 1 : len(toks) - 1]))
                lps = rows[np.arange(len(suffix)), np.asarray(suffix)].tolist()
                out.append(prefix_lps + lps)
        return out


__all__ = [
    "Candidate",
    "PerplexityScorer",
    "TEMPLATES",
    "make_candidates",
    "perplexity",
    "property_pos",
    "score_candidates",
    "softmax",
    "specificity",
    "template_sentence",
]
