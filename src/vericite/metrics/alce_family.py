"""The registered ``alce`` metric family: ALCE's metrics of one sub-task over a corpus (``metrics/alce.py`` says what
each one is), with n and a bootstrap CI each, the per-answer scores and judgements ``vericite evaluate`` writes, and
how they were computed (sub-task, ``at_most_citations``, judge calls made against ALCE's).

Options: ``judge`` (a Judge, a judge spec, or none: the judged metrics are then not computed), ``subtask``
(asqa | qampari | eli5 | short; None: read from the fields), ``metrics`` (compute only these), ``at_most_citations``
(3), ``qa_model`` (ALCE's RoBERTa SQuAD model, or a local folder; it runs only when a QA metric is asked for by
name, as ALCE runs it only with ``--qa``), ``reader`` (a ``metrics.alce_reader.FinalAnswerReader``: ``answer_em`` and
``answer_f1`` score its final short answer of each output instead of the whole output), ``resamples``, ``seed``,
``names`` (the metrics reported: by default the sub-task's; one of another sub-task is reported as not computed, with
the reason).

The family is also :class:`~vericite.protocols.PairedStatistics`: ``vericite compare`` rebuilds every metric from
each record's per-answer values in samples.jsonl (``statistics_from_records``, the same :func:`alce_statistics`
``evaluate`` computes with); two compared runs must share the sub-task, ``at_most_citations``, the final-answer
reader (or both have none) and (when both ran it) the QA model, and may differ in their judge.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any, Mapping, Sequence

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
    answer_hit,
    answer_scores,
    detect_subtask,
    long_answers,
    output_length,
    qampari_scores,
    rouge_unavailable,
    str_em,
)
from .alce_qa import QA_MODEL
from .base import DEFAULT_RESAMPLES, ScoresAnswers, check_one_answer_per_sample, DEFAULT_SEED, AllowedDifference, CorpusStatistics, MetricRun, ProgressBar, Ratios, corpus_results
from .judging import judge_id

Value = float | None


class AlceMetric(ScoresAnswers):
    """ALCE's metrics (see the module docstring)."""

    inputs = ("answer", "question", "passages", "qa_pairs", "answers", "claims", "meta")
    # what two compared runs must share (results.json ``evaluation.alce``; the QA model only when both ran it; the
    # final-answer reader and its prompt, none being one), and
    # may differ in: the judge of citations and claims
    compared_settings = {"alce.subtask": None, "alce.at_most_citations": None, "alce.qa_model": "alce.qa_model", "alce.reader": None, "alce.reader_prompt": None}
    allowed_differences = (AllowedDifference("citation / claims judge", ("judges", "citations", "id"), "citations_judge"),)

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
        reader: Any = None,
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
        self.reader = reader  # a metrics.alce_reader.FinalAnswerReader, or None: EM and F1 of the whole output
        self.resamples = resamples
        self.seed = seed

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

    def preload(self) -> str | None:
        """Loads now what the corpus's scoring would first load; the evaluation's driver calls it before any answer is
        judged (``evaluate/pipeline.py``). The ``--reader``'s model, when answer_em or answer_f1 is computed: one that
        cannot be loaded is one line then (an error), not after the judging. ALCE's QA model, when a QA metric is
        asked for: one that cannot be had here (offline, not in the Hugging Face cache, no transformers) or loaded
        leaves qa_em, qa_f1 and qa_hit not computed with the reason, as documented, decided now; the line returned says
        so (the driver prints it on stderr, once), and the corpus's scoring uses what was decided."""
        load = getattr(self.reader, "load", None)
        if set(self.names) & {"answer_em", "answer_f1"} and callable(load):
            load()
        if self._qa_wanted():
            _, why = self._qa_loaded()
            if why is not None:
                return f"warning: {why}: {', '.join(QA_METRICS)} will not be computed (results.json says why)"
        return None

    def _qa_wanted(self) -> bool:
        """Whether ALCE's QA model is to run: a QA metric asked for by name (``--metrics``), of the sub-task."""
        asked = set(self.selected or ()) & set(QA_METRICS) & set(self.names)
        return bool(asked) and (self.subtask is None or bool(asked & set(SUBTASKS[self.subtask])))

    def _qa_loaded(self) -> tuple[Any, str | None]:
        """ALCE's QA model loaded, or why it cannot be (``alce_qa.qa_unavailable``, or the load's error), decided once
        per metric (by :meth:`preload`, else by the corpus's scoring)."""
        if getattr(self, "_qa_decided", None) is None:
            from .alce_qa import QAModel, qa_unavailable

            why = qa_unavailable(self.qa_model)
            model = None
            if why is None:
                try:
                    model = QAModel(self.qa_model)
                except Exception as e:  # noqa: BLE001 - a model that will not load is a reason, said once
                    why = f"ALCE's QA model {self.qa_model} could not be loaded ({type(e).__name__}: {e})"
            self._qa_decided = (model, why)
        return self._qa_decided

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
            if self.reader is None:
                got_a = [answer_scores(s.answers or [], p) for s, p in zip(samples, plain)]
                col("answer_em", [g[0] if g else None for g in got_a], "no answers (gold short answers) in the input")
                col("answer_f1", [g[1] if g else None for g in got_a], "no answers (gold short answers) in the input")
            else:
                self._read(samples, plain, col, per, counts, settings, progress)
        if "answer_hit" in want:
            col("answer_hit", [answer_hit(s.answers or [], p) for s, p in zip(samples, plain)], "no answers (gold short answers) in the input")
        if "rouge_lsum" in want:
            why = rouge_unavailable()
            if why:
                col("rouge_lsum", [None] * n, why)
            else:
                rouge = RougeLsum()
                col("rouge_lsum", [rouge.score(p, long_answers(s)) for s, p in zip(samples, plain)], "no reference long answers (ASQA's annotations, ELI5's answer) in the input")
        if want & set(QA_METRICS):
            self._qa(samples, plain, col, settings, progress)
        judged = want & {*CITATION_METRICS, "claims_nli"}
        if judged:
            self._judged(samples, outputs, subtask, judged, col, per, judgements, counts, settings, progress)
        for i, p in enumerate(plain):
            for name, values in cols.items():
                if values[i] is not None and name not in CITATION_METRICS:
                    per[i][name] = values[i]

        stats = alce_statistics(self.names, subtask, cols, n, reasons, details)
        results = corpus_results(stats, {k: SPECS[k] for k in self.names}, n, resamples=self.resamples, seed=self.seed)
        judge = judge_id(self.judge) if self.judge is not None else None
        for name in judged:
            results[name].details.setdefault("judge", judge)
        return MetricRun(self.id, results, [{"alce": p} if p else {} for p in per], judgements, settings={"alce": settings}, counts=counts)

    @staticmethod
    def statistics_from_records(records: Sequence[Mapping[str, Any]]) -> CorpusStatistics:
        """Every ALCE metric's statistics from each record's per-answer values (``scores["alce"]``, as
        :meth:`score_answers` wrote them), by :func:`alce_statistics`: the corpus values of results.json. The
        sub-task is read from the records' fields (:func:`~vericite.metrics.alce.detect_subtask`), or from the
        metrics that have values when those are another's; a metric no record has a value of is not computed,
        with what samples.jsonl says of it."""
        per = [((r.get("scores") or {}).get("alce") or {}) for r in records]
        fields = [SimpleNamespace(qa_pairs=r.get("qa_pairs"), claims=r.get("claims"), answers=r.get("answers")) for r in records]
        # the sub-task: the one read from the fields, unless a metric of another has values (--task alce-qampari on
        # answers of one cluster each), then the first whose metrics hold every metric with a value
        valued = {m for m in METRIC_NAMES if any(p.get(RECORD_KEYS.get(m, m)) is not None for p in per)}
        subtask = next((t for t in (detect_subtask(fields), *SUBTASKS) if valued <= set(SUBTASKS[t])), detect_subtask(fields))
        cols: dict[str, list[Value]] = {}
        reasons: dict[str, str] = {}
        for name in SUBTASKS[subtask]:
            if name == "alce_citation_f1":
                continue
            key = RECORD_KEYS.get(name, name)
            values = [p.get(key) for p in per]
            cols[name] = [None if v is None else float(v) for v in values]
            if all(v is None for v in values):
                reasons[name] = _record_reason(name, per, records)
        return alce_statistics(METRIC_NAMES, subtask, cols, len(records), reasons)

    def _read(self, samples, plain, col, per, counts, settings, progress) -> None:  # type: ignore[no-untyped-def]
        """``answer_em`` and ``answer_f1`` of the reader's final short answers (``metrics/alce_reader.py``): one
        reading per answer with gold answers; a failed reading leaves that answer's two values out, with its
        reason in its record (``not_computed``) and the failures counted (``counts.reader_failures``)."""
        import contextlib

        reader = self.reader
        n = len(samples)
        em: list[Value] = [None] * n
        f1: list[Value] = [None] * n
        todo = [i for i, s in enumerate(samples) if any(a for cluster in (s.answers or []) for a in cluster)]
        failures = calls = 0
        bar = progress(len(todo), "reading final answers") if progress is not None and todo else contextlib.nullcontext(None)
        with bar as advance:
            for i in todo:
                r = reader.read(samples[i].question, plain[i])
                calls += r.called
                per[i]["reader_answer"] = r.answer
                if r.answer is None:
                    failures += 1
                    per[i]["not_computed"] = {"answer_em": r.reason, "answer_f1": r.reason}
                else:
                    em[i], f1[i] = answer_scores(samples[i].answers or [], r.answer)  # type: ignore[misc]
                if advance is not None:
                    advance(1)
        settings.update({"reader": reader.spec, "reader_prompt": reader.prompt, "reader_calls": calls, "reader_failures": failures})
        counts["reader_failures"] = failures
        why = "no answers (gold short answers) in the input" if not todo else f"the reader failed on every answer ({failures}; see scores.alce.not_computed in samples.jsonl)"
        extra = {"judge": reader.id, "reader_failures": failures}
        col("answer_em", em, why, **extra)
        col("answer_f1", f1, why, **extra)

    def _qa(self, samples: Sequence[Any], plain: list[str], col: Any, settings: dict[str, Any], progress: ProgressBar | None = None) -> None:
        """QA-EM, QA-F1 and QA-Hit: ALCE's QA model answers each answer's sub-questions (a bar over the answers)."""
        import contextlib

        from .alce_qa import qa_scores

        why = None if self.selected and set(self.selected) & set(QA_METRICS) else f"ALCE's QA model ({self.qa_model}) runs only when asked: --metrics {','.join(QA_METRICS)}"
        got: list[Any] = [None] * len(samples)
        if why is None:
            model, why = self._qa_loaded()  # decided by preload() before the judging, when the driver called it
            if why is None:
                todo = [i for i, s in enumerate(samples) if s.qa_pairs]
                bar = progress(len(todo), "answering sub-questions (ALCE's QA model)") if progress is not None and todo else contextlib.nullcontext(None)
                with bar as advance:
                    for i in todo:
                        got[i] = qa_scores(model, samples[i].qa_pairs, plain[i])
                        if advance is not None:
                            advance(1)
                settings["qa_model"] = self.qa_model  # recorded only when it ran: compare checks it then
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


def alce_statistics(
    names: Sequence[str], subtask: str, cols: Mapping[str, Sequence[Value]], n: int,
    reasons: Mapping[str, str] | None = None, details: Mapping[str, Mapping[str, Any]] | None = None,
) -> CorpusStatistics:
    """The corpus statistics of ALCE's metrics ``names`` from their per-answer values (``cols``: one value or None
    per answer, of ``n``): each a mean over the answers that have a value (a ratio of sums: the value over a count
    of 1 each), not computed with ``reasons[name]`` when none has; ``alce_citation_f1`` the harmonic mean of the
    corpus citation precision and recall (ALCE's, from the two means), its n the recall's; a name that is not a
    metric of ``subtask`` not computed, with that reason. Both ``evaluate`` (:meth:`AlceMetric.score_answers`) and
    ``compare`` (:meth:`AlceMetric.statistics_from_records`) compute the numbers here."""
    reasons, details = reasons or {}, details or {}
    r = Ratios()
    for name in names:
        if name == "alce_citation_f1":
            continue
        if name not in SUBTASKS[subtask]:
            r.not_computed([name], f"not an ALCE {SUBTASK_TITLES[subtask]} metric (sub-task {subtask}; --task alce-<sub-task> to choose)")
            continue
        values = cols.get(name, [None] * n)
        have = [v is not None for v in values]
        r.ratio(name, [v or 0.0 for v in values], [float(h) for h in have], n=sum(have), details={**details.get(name, {}), "left_out": n - sum(have)}, empty=reasons.get(name, "not computed"))
    if "alce_citation_f1" in names:
        if "alce_citation_f1" not in SUBTASKS[subtask]:
            r.not_computed(["alce_citation_f1"], f"not an ALCE {SUBTASK_TITLES[subtask]} metric")
        else:
            r.f1("alce_citation_f1", "alce_citation_precision", "alce_citation_recall", n=r.out.ns.get("alce_citation_recall", 0))
    return r.done(names)


#: where each metric's per-answer value is in a record's ``scores["alce"]`` (the metric's own name otherwise)
RECORD_KEYS = {"alce_citation_recall": "citation_recall", "alce_citation_precision": "citation_precision"}


def _record_reason(name: str, per: Sequence[Mapping[str, Any]], records: Sequence[Mapping[str, Any]]) -> str:
    """Why no record has a value of ``name``: what samples.jsonl says of it."""
    key = RECORD_KEYS.get(name, name)
    if name in CITATION_METRICS:
        if not any(key in p for p in per):
            return "no citation scores in samples.jsonl (evaluated without a judge, or without the citation metrics)"
        if any(p.get("unjudged") for p in per):
            return "no answer with a sentence could be judged"
        return "no answer has a sentence"
    if name == "claims_nli":
        if not any(r.get("claims") for r in records):
            return "no claims (ELI5's gold claims) in the input"
        return "no claims_nli score in samples.jsonl (evaluated without a judge, or none judged)"
    failed = [str(p["not_computed"][name]) for p in per if isinstance(p.get("not_computed"), Mapping) and p["not_computed"].get(name)]
    if failed:
        return f"the reader failed on every answer with gold answers ({len(failed)}; first: {failed[0]})"
    needs = {"str_em": "qa_pairs", "str_hit": "qa_pairs", **{m: "qa_pairs" for m in QA_METRICS}, **{m: "answers" for m in (*QAMPARI_METRICS, "answer_em", "answer_f1", "answer_hit")}}
    field = needs.get(name)
    if field and not any(r.get(field) for r in records):
        return f"no {field} in the input"
    if name in QA_METRICS:
        return f"no {name} score in samples.jsonl (ALCE's QA model runs only when asked: --metrics {','.join(QA_METRICS)})"
    return f"no {name} score in samples.jsonl (not computed by the evaluation: its results.json says why)"


def from_spec(arg: str, *, ctx: Any, judge: Any = None, **options: Any) -> AlceMetric:
    """Registry factory: ``alce`` or ``alce:<sub-task>``; ``judge`` is a Judge, a judge spec (built with ``ctx``) or
    "none"."""
    if isinstance(judge, str):
        from ..registry import create

        judge = None if judge in ("", "none") else create("judges", judge, ctx)
    return AlceMetric(judge, subtask=arg or options.pop("subtask", None), **options)


from_spec.family = AlceMetric  # type: ignore[attr-defined]  # (protocols.FamilyFactory)
