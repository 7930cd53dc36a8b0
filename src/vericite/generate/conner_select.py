"""CONNER's two uses (seed conner_2310.07289 §5) inside ``conner-knowledge``: knowledge chosen by
Q_know = γᵀ[S_fact, S_rel, S_coh_para, S_info] (Eq. 9; ``metrics/conner_specs.py``).

- **Knowledge selection** (``select=knowledge``, Table 8): ``candidates`` = r knowledge texts sampled for the
  query with top-p (candidate j with seed ``seed + j``, so candidate 0 is what ``select=none`` generates with the
  same sampling: the unselected baseline), the one with the highest Q_know kept.
- **Demonstration selection** (``select=demonstrations``, Table 7): a pool of ``pool`` = m candidate
  demonstrations (questions of the dataset with their reference knowledge, drawn by the run's seed), each scored
  by Q_know of (its question, its reference knowledge); the top n = ``shot`` become the few-shot demonstrations
  of every item (never the item itself: an item in the pool is left out of its own). With ``select=none`` and a
  ``pool``, the first n of the same pool are the demonstrations (random ones: the unselected baseline).

Q_know's measures are computed by the ``conner`` metric family (the same code as ``vericite evaluate --task
conner``) with ``select_judge`` (default ``llm3:<the method's model>``), ``select_lm`` (default the method's
model), ``select_relevance_model`` (default ``ms-marco``) and the evidence of ``index`` (the top
``select_evidence_k`` BM25 passages per sentence). A text without all four measures (one sentence: no
paragraph coherence) ranks below every text that has them, and among such texts by γ renormalised over the
measures it has (``q_know_partial``); ties keep the earlier candidate.
"""

from __future__ import annotations

from typing import Any, Sequence

from ..errors import VericiteError
from ..metrics.conner_specs import Q_KNOW, q_know
from ..types import AttributedAnswer, Sample


def partial_q_know(scores: dict[str, Any], gamma: Sequence[float]) -> float | None:
    """γ renormalised over the Q_know measures ``scores`` has; None when it has none (or their weights sum to 0)."""
    have = [(g, float(scores[k])) for g, k in zip(gamma, Q_KNOW) if scores.get(k) is not None]
    total = sum(g for g, _ in have)
    if not have or total == 0:
        return None
    return round(sum(g * v for g, v in have) / total, 6)


class QKnowScorer:
    """Q_know of (query, knowledge) pairs, from a ``conner`` metric restricted to Q_know's four measures."""

    def __init__(self, metric: Any, gamma: Sequence[float]) -> None:
        self.metric, self.gamma = metric, tuple(float(g) for g in gamma)

    def score(self, samples: Sequence[Sample], texts: Sequence[str], *, progress: bool = False, label: str = "Q_know") -> list[dict[str, Any]]:
        """One entry per text: ``q_know`` (None unless all four measures were computed), ``q_know_partial``, the
        four measures (``scores``) and the measures ``not_computed`` with their reasons. ``progress``: a line on
        stderr while the judge works (long for a pool of demonstrations)."""
        if not texts:
            return []
        from ..progress import progress_bar

        bar = (lambda total, what: progress_bar(total, f"{label}: {what}", enabled=True)) if progress else None
        run = self.metric.score_answers(list(samples), [AttributedAnswer(raw=t) for t in texts], progress=bar)
        out = []
        for per in run.scores:
            d = dict(per.get("conner") or {})
            scores = {k: d[k] for k in Q_KNOW if d.get(k) is not None}
            entry: dict[str, Any] = {"q_know": q_know(scores, self.gamma), "q_know_partial": partial_q_know(scores, self.gamma), "scores": scores}
            missing = {k: v for k, v in (d.get("not_computed") or {}).items() if k in Q_KNOW}
            if missing:
                entry["not_computed"] = missing
            out.append(entry)
        return out


def rank_key(entry: dict[str, Any]) -> tuple[int, float]:
    """Sort key (higher first): texts with the whole Q_know before the others, then by Q_know (or partial)."""
    full = entry.get("q_know")
    if full is not None:
        return (1, float(full))
    part = entry.get("q_know_partial")
    return (0, float(part) if part is not None else float("-inf"))


def best(entries: Sequence[dict[str, Any]]) -> int:
    """The index of the best entry (:func:`rank_key`); ties keep the earliest."""
    return max(range(len(entries)), key=lambda j: (rank_key(entries[j]), -j))


def ranked(entries: Sequence[dict[str, Any]]) -> list[int]:
    """The indices of ``entries`` from best to worst (ties in their order)."""
    return sorted(range(len(entries)), key=lambda j: (rank_key(entries[j]), -j), reverse=True)


def q_know_scorer(opts: Any, ctx: Any, model: str, backend: Any, seed: int) -> Any:
    """The Q_know scorer of ``conner-knowledge``'s options ``opts``: Q_know's measures (``conner`` metric, four
    measures) with the selection's judge, LM, scorer and evidence; a model named twice (the method's, the judge's,
    the LM) is loaded once."""
    import dataclasses

    from ..models import model_loader
    from ..registry import create

    load = model_loader(ctx)
    loaded: dict[str, Any] = {model: backend} if backend is not None else {}

    def once(name: str) -> Any:
        if name not in loaded:
            loaded[name] = load(name)
        return loaded[name]

    ctx = dataclasses.replace(ctx, load_model=once)
    judge = create("judges", opts.select_judge or f"llm3:{model}", ctx)
    if not set(getattr(judge, "labels", ())) >= {"supports", "refutes", "not_enough_info"}:
        raise VericiteError(f"method conner-knowledge: select_judge must be a three-way judge (llm3:<model>, llm3c:<model>, llm3f:<fit file>, nli3:<model>, fake-3way), not {opts.select_judge}")
    lm = once(opts.select_lm or model)
    scorer = create("scorers", opts.select_relevance_model, ctx)
    coherence = create("scorers", opts.select_coherence_model, ctx) if opts.select_coherence_model else None
    retriever = create("retrievers", f"bm25:{opts.index}", ctx, k=opts.select_evidence_k)
    metric = create(
        "metrics", "conner", ctx, judge=judge, lm=lm, scorer=scorer, coherence=coherence, retriever=retriever, evidence_index=opts.index,
        evidence_k=opts.select_evidence_k, metrics=Q_KNOW, gamma=opts.gamma, seed=seed, resamples=0,
    )  # fmt: skip
    return QKnowScorer(metric, opts.gamma)
