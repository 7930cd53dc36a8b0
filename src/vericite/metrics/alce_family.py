"""The registered ``alce`` metric family: ALCE's metrics of one sub-task over a corpus (``metrics/alce.py`` says what
each one is), with n and a bootstrap CI each, the per-answer scores and judgements ``vericite evaluate`` writes, and
how they were computed (sub-task, ``at_most_citations``, judge calls made against ALCE's).

Options: ``judge`` (a Judge, a judge spec, or none: the judged metrics are then not computed), ``subtask``
(asqa | qampari | eli5 | short; None: read from the fields), ``metrics`` (compute only these), ``at_most_citations``
(3), ``qa_model`` (ALCE's RoBERTa SQuAD model, or a local folder; it runs only when a QA metric is asked for by
name, as ALCE runs it only with ``--qa``), ``resamples``, ``seed``, ``names`` (the metrics reported: by default the
sub-task's; one of another sub-task is reported as not computed, with the reason).
"""

from __future__ import annotations

from typing import Any, Sequence

from ..attribution.alce import AT_MOST_CITATIONS, preprocess_output, remove_citations
from ..errors import VericiteError
from .alce import (
    CITATION_METRICS,
    METRIC_NAMES,
    QA_METRICS,
    QAMPARI_METRICS,
    SPECS,
    SUBTASK_TITLES,
    SUBTASKS,
    VERSION,
    RougeLsum,
    answer_scores,
    detect_subtask,
    long_answers,
    output_length,
    qampari_scores,
    rouge_unavailable,
    str_em,
)
from .alce_qa import QA_MODEL
from .base import DEFAULT_RESAMPLES, check_one_answer_per_sample, DEFAULT_SEED, MetricRun, ProgressBar, Ratios, corpus_results
from .judging import judge_id

Value = float | None


class AlceMetric:
    """ALCE's metrics (see the module docstring)."""

    inputs = ("answer", "question", "passages", "qa_pairs", "answers", "claims", "meta")

    def __init__(
        self,
        judge: Any = None,
        *,
        subtask: str | None = None,
        metrics: Sequence[str] | None = None,
        at_most_citations: int | None = AT_MOST_CITATIONS,
        qa_model: str = QA_MODEL,
        resamples: int = DEFAULT_RESAMPLES,
        seed: int = DEFAULT_SEED,
        names: Sequence[str] | None = None,
    ) -> None:
        if subtask is not None and subtask not in SUBTASKS:
            raise VericiteError(f"unknown ALCE sub-task {subtask!r}: want one of {', '.join(SUBTASKS)}")
        names = tuple(names) if names else SUBTASKS[subtask] if subtask else METRIC_NAMES
        if metrics:
            unknown = [m for m in metrics if m not in names]
            if unknown:
                raise VericiteError(f"not {'an ALCE ' + SUBTASK_TITLES[subtask] if subtask else 'an ALCE'} metric: {', '.join(unknown)} (known: {', '.join(names)})")
            names = tuple(n for n in names if n in metrics)
        self.id = VERSION
        self.names = tuple(names)
        self.judge = judge
        self.subtask = subtask
        self.selected = tuple(metrics) if metrics else None
        self.at_most = at_most_citations
        self.qa_model = qa_model
        self.resamples = resamples
        self.seed = seed

    def compute(self, samples: Sequence[Any], answers: Sequence[Any]) -> dict[str, Any]:
        return self.score_answers(samples, answers).results

    def judging_part(self) -> "AlceMetric | None":
        """Its judged metrics alone (citation recall/precision, claims): what ``evaluate`` scores answer by answer
        into its checkpoint (evaluate/checkpoint.py); None without a judge or a judged metric."""
        import copy

        names = tuple(n for n in self.names if n in (*CITATION_METRICS, "claims_nli"))
        if self.judge is None or not names:
            return None
        part = copy.copy(self)
        part.names = names
        return part

    def score_answers(self, samples: Sequence[Any], answers: Sequence[Any], *, progress: ProgressBar | None = None) -> MetricRun:
        check_one_answer_per_sample(samples, answers)
        subtask = self.subtask or detect_subtask(samples)
        outputs = [preprocess_output(a.raw) for a in answers]
        plain = [remove_citations(o) for o in outputs]
        n = len(samples)
        want = set(self.names) & set(SUBTASKS[subtask])  # reported names of another sub-task: not computed, said why
        cols: dict[str, list[Value]] = {}
        reasons: dict[str, str] = {}
        details: dict[str, dict[str, Any]] = {}
        per: list[dict[str, Any]] = [{} for _ in range(n)]
        judgements: list[list[dict[str, Any]]] = [[] for _ in range(n)]
        counts: dict[str, int] = {"unparseable_judgements": 0, "failed_judgements": 0}
        settings: dict[str, Any] = {"subtask": subtask, "at_most_citations": self.at_most, "metrics": list(self.selected) if self.selected else None}

        def col(name: str, values: list[Value], why: str, **d: Any) -> None:
            if name in want:
                cols[name] = values
                reasons[name] = why
                details[name] = d

        if want & {"output_length"}:
            col("output_length", [float(output_length(p)) for p in plain], "no answers")
        if want & {"str_em", "str_hit"}:
            got = [str_em(s.qa_pairs or [], p) for s, p in zip(samples, plain)]
            col("str_em", [g[0] if g else None for g in got], "no qa_pairs (ASQA's sub-questions and short answers) in the input")
            col("str_hit", [g[1] if g else None for g in got], "no qa_pairs (ASQA's sub-questions and short answers) in the input")
        if want & set(QAMPARI_METRICS):
            got_q = [qampari_scores(s.answers or [], p) for s, p in zip(samples, plain)]
            for name in QAMPARI_METRICS:
                col(name, [g[name] if g else None for g in got_q], "no answers (QAMPARI's answer clusters) in the input")
        if want & {"answer_em", "answer_f1"}:
            got_a = [answer_scores(s.answers or [], p) for s, p in zip(samples, plain)]
            col("answer_em", [g[0] if g else None for g in got_a], "no answers (gold short answers) in the input")
            col("answer_f1", [g[1] if g else None for g in got_a], "no answers (gold short answers) in the input")
        if "rouge_lsum" in want:
            why = rouge_unavailable()
            if why:
                col("rouge_lsum", [None] * n, why)
            else:
                rouge = RougeLsum()
                col("rouge_lsum", [rouge.score(p, long_answers(s)) for s, p in zip(samples, plain)], "no reference long answers (ASQA's annotations, ELI5's answer) in the input")
        if want & set(QA_METRICS):
            self._qa(samples, plain, col)
        judged = want & {*CITATION_METRICS, "claims_nli"}
        if judged:
            self._judged(samples, outputs, subtask, judged, col, per, judgements, counts, settings, progress)
        for i, p in enumerate(plain):
            for name, values in cols.items():
                if values[i] is not None and name not in CITATION_METRICS:
                    per[i][name] = values[i]

        r = Ratios()
        for name in self.names:
            if name == "alce_citation_f1":
                continue
            if name not in SUBTASKS[subtask]:
                r.not_computed([name], f"not an ALCE {SUBTASK_TITLES[subtask]} metric (sub-task {subtask}; --task alce-<sub-task> to choose)")
                continue
            values = cols.get(name, [None] * n)
            have = [v is not None for v in values]
            r.ratio(name, [v or 0.0 for v in values], [float(h) for h in have], n=sum(have), details={**details.get(name, {}), "left_out": n - sum(have)}, empty=reasons.get(name, "not computed"))
        if "alce_citation_f1" in self.names:
            if "alce_citation_f1" not in SUBTASKS[subtask]:
                r.not_computed(["alce_citation_f1"], f"not an ALCE {SUBTASK_TITLES[subtask]} metric")
            else:
                r.f1("alce_citation_f1", "alce_citation_precision", "alce_citation_recall", n=r.out.ns.get("alce_citation_recall", 0))
        stats = r.done(self.names)
        results = corpus_results(stats, {k: SPECS[k] for k in self.names}, n, resamples=self.resamples, seed=self.seed)
        judge = judge_id(self.judge) if self.judge is not None else None
        for name in judged:
            results[name].details.setdefault("judge", judge)
        return MetricRun(self.id, results, [{"alce": p} if p else {} for p in per], judgements, settings={"alce": settings}, counts=counts)

    def _qa(self, samples: Sequence[Any], plain: list[str], col: Any) -> None:
        from .alce_qa import QAModel, qa_scores, qa_unavailable

        why = None if self.selected and set(self.selected) & set(QA_METRICS) else f"ALCE's QA model ({self.qa_model}) runs only when asked: --metrics {','.join(QA_METRICS)}"
        why = why or qa_unavailable(self.qa_model)
        got: list[Any] = [None] * len(samples)
        if why is None:
            try:
                model = QAModel(self.qa_model)
            except Exception as e:  # noqa: BLE001 - a model that will not load is a reason, said once
                why = f"ALCE's QA model {self.qa_model} could not be loaded ({type(e).__name__}: {e})"
            else:
                got = [qa_scores(model, s.qa_pairs or [], p) for s, p in zip(samples, plain)]
                why = "no qa_pairs (ASQA's sub-questions and short answers) in the input"
        for k, name in enumerate(QA_METRICS):
            col(name, [g[k] if g else None for g in got], why, model=self.qa_model)

    def _judged(self, samples, outputs, subtask, judged, col, per, judgements, counts, settings, progress) -> None:  # type: ignore[no-untyped-def]
        from .alce_citations import score_corpus

        citations = bool(judged & set(CITATION_METRICS))
        claims = "claims_nli" in judged
        n = len(samples)
        if self.judge is None:
            why = "no judge (--judge llm:<model>, nli:<model>, table:<file.jsonl>)"
            for name in judged:
                col(name, [None] * n, why)
            return
        bar = (lambda total: progress(total, "judging")) if progress is not None else None
        scored, totals = score_corpus(samples, outputs, self.judge, qampari=subtask == "qampari", at_most=self.at_most, claims=claims, citations=citations, progress=bar)
        for key in ("unparseable_judgements", "failed_judgements"):
            counts[key] += totals[key]
        settings.update({k: totals[k] for k in ("judge_calls", "alce_judge_calls", "answers_without_sentences")})
        unjudged = sum(1 for a in scored if a.unjudged)
        settings["answers_unjudged"] = unjudged
        why = "no answer with a sentence could be judged" if unjudged else "no answer has a sentence"
        extra = {"answers_without_sentences": totals["answers_without_sentences"], "answers_unjudged": unjudged, "judge_calls": totals["judge_calls"], "alce_judge_calls": totals["alce_judge_calls"]}
        col("alce_citation_recall", [a.recall for a in scored], why, **extra)
        col("alce_citation_precision", [a.precision for a in scored], why, **extra)
        col("claims_nli", [a.claims for a in scored], "no claims (ELI5's gold claims) in the input, or none judged")
        for i, a in enumerate(scored):
            if citations or a.claims is not None:
                per[i].update({k: v for k, v in a.to_dict().items() if citations or k == "claims_nli"})
            judgements[i] = a.judgements


def from_spec(arg: str, *, ctx: Any, judge: Any = None, **options: Any) -> AlceMetric:
    """Registry factory: ``alce`` or ``alce:<sub-task>``; ``judge`` is a Judge, a judge spec (built with ``ctx``) or
    "none"."""
    if isinstance(judge, str):
        from ..registry import create

        judge = None if judge in ("", "none") else create("judges", judge, ctx)
    return AlceMetric(judge, subtask=arg or options.pop("subtask", None), **options)
