"""The registered metric families (``registry.metrics``): each a :class:`~vericite.protocols.Metric` that scores
a corpus of parsed answers with the code of its own module, and returns one ``MetricResult`` per name; each is
also an :class:`~vericite.protocols.AnswerScorer`, giving ``vericite evaluate`` its per-answer scores,
judgements and settings (a ``MetricRun``).

* ``kalma`` (``metrics/kalma.py``): the twelve KaLMA metrics; options ``judge`` (a Judge or a judge spec, built
  with the same build context; ``"none"`` for no judge), ``hypothesis``, ``match``, ``resamples``, ``seed``.
* ``geval:<model name>`` (``metrics/geval.py``): G-Eval's four aspects, the model loaded the way the build
  context says (or ``backend=`` a ready one); options ``resamples``, ``seed``, ``aspects``.

The numbers are the ones ``vericite evaluate`` writes: the same functions compute them. Both families are also
:class:`~vericite.protocols.PairedStatistics`: ``vericite compare`` rebuilds their statistics from the per-sample
records of samples.jsonl (on the class, which each factory names as its ``family``), and they declare which of
their settings two compared runs must share and which they may differ in.
"""

from __future__ import annotations

import contextlib
from typing import Any, Mapping, Sequence

from ..errors import VericiteError
from ..types import AttributedAnswer, Sample
from .base import DEFAULT_RESAMPLES, ScoresAnswers, check_one_answer_per_sample, DEFAULT_SEED, AllowedDifference, CorpusStatistics, MetricRun, ProgressBar


class KalmaMetric(ScoresAnswers):
    """KaLMA's citation quality, alignment and [NA] metrics (``evaluate_kalma``)."""

    inputs = ("answer", "knowledge", "gold", "absent")
    # what two compared runs must share (the judge's claim template only when a judge ran), and may differ in
    compared_settings = {"metrics": None, "match": None, "hypothesis": "judge", "entailed_at": None, "off_topic_rule": None}
    allowed_differences = (
        AllowedDifference("alignment / [NA] judge", ("evaluation", "judge"), "judge"),
        AllowedDifference("judge options", ("evaluation", "judge_options")),
    )

    def __init__(
        self,
        judge: Any = None,
        *,
        hypothesis: str = "property",
        match: str = "exact",
        resamples: int = DEFAULT_RESAMPLES,
        seed: int = DEFAULT_SEED,
    ) -> None:
        from .kalma import METRIC_NAMES, VERSION

        self.id = VERSION
        self.names = METRIC_NAMES
        self.judge = judge
        self.hypothesis = hypothesis
        self.match = match
        self.resamples = resamples
        self.seed = seed

    def score_answers(self, samples: Sequence[Sample], answers: Sequence[AttributedAnswer], *, progress: ProgressBar | None = None) -> MetricRun:
        """The results, each answer's counts and judgements (with their purpose), and how they were computed."""
        from .kalma import KalmaItem
        from .kalma_eval import evaluate_kalma

        check_one_answer_per_sample(samples, answers)
        items = [KalmaItem.from_sample(s, a) for s, a in zip(samples, answers)]
        report = evaluate_kalma(
            items, self.judge, hypothesis=self.hypothesis, match=self.match, resamples=self.resamples, seed=self.seed,  # type: ignore[arg-type]
            progress=(lambda total: progress(total, "judging")) if progress is not None else None,
        )  # fmt: skip
        return MetricRun(
            self.id, report.results, [c.to_dict() for c in report.counts], report.judgements or [[] for _ in items],
            settings=report.config, counts={"unparseable_judgements": report.config.get("unparseable_judgements", 0)},
        )  # fmt: skip

    @staticmethod
    def statistics_from_records(records: Sequence[Mapping[str, Any]]) -> CorpusStatistics:
        """The twelve metrics' statistics from each record's counts (``scores``, as ``score_answers`` wrote them)."""
        from .kalma import KalmaCounts, kalma_statistics

        return kalma_statistics([KalmaCounts.from_dict(r["scores"]) for r in records])


class GEvalMetric(ScoresAnswers):
    """G-Eval's four aspects (mean 1-5 score of the answers that got one, bootstrap CI over answers)."""

    inputs = ("answer", "question", "knowledge")
    compared_settings: dict[str, str | None] = {}
    allowed_differences = (AllowedDifference("G-Eval judge", ("judges", "geval", "id"), "geval_judge"),)

    def __init__(self, backend: Any, *, resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED, aspects: Sequence[str] | None = None) -> None:
        from .geval import ASPECTS, GEval

        self.scorer = GEval(backend, tuple(aspects) if aspects else ASPECTS)
        self.id = self.scorer.id
        self.names = tuple(f"geval_{a}" for a in self.scorer.aspects)
        self.backend = backend
        self.resamples = resamples
        self.seed = seed

    def score_answers(self, samples: Sequence[Sample], answers: Sequence[AttributedAnswer], *, progress: ProgressBar | None = None) -> MetricRun:
        """The results, and each answer's scores under ``scores["geval"]``; G-Eval's model is its judge."""
        from .geval import geval_results

        check_one_answer_per_sample(samples, answers)
        inputs = [(s.question, " ".join(x.clean for x in a.sentences), s.knowledge) for s, a in zip(samples, answers)]
        steps = len(inputs) * len(self.scorer.aspects)
        with progress(steps, "G-Eval") if progress is not None else contextlib.nullcontext(None) as advance:
            results, per_item = geval_results(inputs, self.backend, aspects=self.scorer.aspects, resamples=self.resamples, seed=self.seed, advance=advance)
        judge = f"{self.scorer.id}:{self.backend.identity().name}"
        return MetricRun(self.id, results, [{"geval": p} if p else {} for p in per_item], [[] for _ in inputs], judges={"geval": judge})

    @staticmethod
    def statistics_from_records(records: Sequence[Mapping[str, Any]]) -> CorpusStatistics:
        """Each aspect's statistic from the records' ``scores["geval"][aspect]["score"]``: the mean of the scores
        given (``geval_statistic``); not computed where no record has G-Eval scores or none could be scored."""
        from .geval import ASPECTS, geval_statistic

        cs = CorpusStatistics()
        for aspect in ASPECTS:
            name = f"geval_{aspect}"
            per = [(r["scores"].get("geval") or {}).get(aspect) for r in records]
            scores = [p.get("score") if isinstance(p, Mapping) else None for p in per]
            if all(p is None for p in per):
                cs.reasons[name] = "no G-Eval scores (--geval-model)"
            elif all(s is None for s in scores):
                cs.reasons[name] = "no reply could be scored"
            cs.statistics[name] = geval_statistic(scores)
            cs.ns[name] = sum(s is not None for s in scores)
        return cs


def kalma_from_spec(arg: str, *, ctx: Any, judge: Any = "triple", **options: Any) -> KalmaMetric:
    """Registry factory: ``kalma``; ``judge`` is a Judge, a judge spec (built with ``ctx``) or "none"."""
    if arg:
        raise VericiteError(f"the kalma metrics take no argument (got kalma:{arg}); pass judge= for the judge")
    if isinstance(judge, str):
        from ..registry import create

        judge = None if judge in ("", "none") else create("judges", judge, ctx)
    return KalmaMetric(judge, **options)


kalma_from_spec.family = KalmaMetric  # type: ignore[attr-defined]  # (protocols.FamilyFactory)


def geval_from_spec(arg: str, *, ctx: Any, backend: Any = None, **options: Any) -> GEvalMetric:
    """Registry factory: ``geval:<model name>`` (loaded with ``ctx``), or ``geval`` with ``backend=``."""
    if backend is None:
        if not arg:
            raise VericiteError("G-Eval needs a model: geval:<model name> (see `vericite models`)")
        from ..models import model_loader

        backend = model_loader(ctx)(arg)
    return GEvalMetric(backend, **options)


geval_from_spec.family = GEvalMetric  # type: ignore[attr-defined]  # (protocols.FamilyFactory)
