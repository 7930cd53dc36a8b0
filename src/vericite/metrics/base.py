"""What every metric shares: its declaration, its corpus result, and its statistics before any number is drawn.

Per-item scores are kept apart from corpus aggregation (huggingface/evaluate's ``_info``/``_compute``,
lm-eval's metric/aggregation split): a metric module computes small per-item records once, then aggregates
them; the bootstrap resamples *items* (answers), the unit that is independent, and recomputes the corpus
statistic exactly as the point estimate does — the ratio of sums for micro metrics, the mean of per-item
ratios for macro metrics. The statistics and the bootstrap themselves are ``vericite/stats.py`` (re-exported
here).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Mapping, NamedTuple, Sequence

import numpy as np

# the statistics a metric is computed with live on the ground floor (judge meta-evaluation uses them too);
# importable from here as before
from ..stats import (  # noqa: F401
    DEFAULT_LEVEL,
    DEFAULT_RESAMPLES,
    DEFAULT_SEED,
    Statistic,
    bootstrap_cis,
    f1_of,
    harmonic,
    point,
    ratio_of_sums,
    resample_weights,
)

@dataclass(frozen=True)
class MetricSpec:
    """A metric's declaration, next to its code: what it needs, which way is better, which version, and how a
    reader groups and labels it. The last three are written into every result (``MetricResult.to_dict``), so the
    report draws any metric from results.json alone:

    - ``family``: the group it is charted with, by its title ("Citation quality"); None: with the others;
    - ``range``: the values it can take, the family's chart axis ((0, 1); G-Eval (1, 5)); None: from the data;
    - ``short_name``: its label in a chart legend ("precision"); empty: the name.

    ``inputs`` names what the metric needs: ``answer``, Sample fields (``knowledge``, ``gold``, ``absent`` ...)
    and ``judge``. It is a declaration: its family's ``Metric.inputs`` (what callers check) must cover every
    Sample field its specs name, which tests/contract/test_metric_specs.py checks for every registered family.
    """

    name: str
    inputs: tuple[str, ...]
    higher_is_better: bool = True
    version: str = "1"
    description: str = ""
    family: str | None = None
    range: tuple[float, float] | None = None
    short_name: str = ""

    def presentation(self) -> dict[str, Any]:
        """The fields a reader groups and labels the metric by, as results.json holds them."""
        return {
            "family": self.family,
            "range": list(self.range) if self.range is not None else None,
            "short_name": self.short_name or self.name,
        }

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "inputs": list(self.inputs),
            "higher_is_better": self.higher_is_better,
            "version": self.version,
            "description": self.description,
            **self.presentation(),
        }


@dataclass
class MetricResult:
    """One corpus number. ``value`` is None when the metric could not be computed, and ``reason`` says why
    (missing inputs are never reported as 0). ``n`` counts the answers that contributed; ``details`` holds
    the units behind the ratio (citations, pairs, ...) and anything excluded."""

    name: str
    value: float | None
    n: int
    ci_low: float | None = None
    ci_high: float | None = None
    reason: str | None = None
    version: str = "1"
    higher_is_better: bool = True
    resamples: int = 0
    seed: int | None = None
    details: dict[str, Any] = field(default_factory=dict)
    spec: MetricSpec | None = field(default=None, repr=False)  # its declaration: family, range, short name

    @property
    def computed(self) -> bool:
        return self.value is not None

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "value": self.value,
            "n": self.n,
            "ci": [self.ci_low, self.ci_high] if self.value is not None else None,
            "ci_level": DEFAULT_LEVEL if self.resamples else None,
            "resamples": self.resamples,
            "seed": self.seed,
            "reason": self.reason,
            "version": self.version,
            "higher_is_better": self.higher_is_better,
            "details": self.details,
            **(self.spec.presentation() if self.spec is not None else MetricSpec(self.name, ()).presentation()),
        }

    @classmethod
    def not_computed(cls, spec: MetricSpec, reason: str, n: int = 0, **details: Any) -> "MetricResult":
        return cls(spec.name, None, n, reason=reason, version=spec.version, higher_is_better=spec.higher_is_better, details=details, spec=spec)


class AllowedDifference(NamedTuple):
    """A setting two compared runs may differ in, because it is the thing compared (a judge, a G-Eval model):
    ``vericite compare`` lists it under ``differences`` when A and B differ in it. ``path`` is where results.json
    holds it, ``label`` how the comparison names it, ``key`` (when given) the name it is shown under in each
    run's identity in compare.json. A family declares these with :class:`~vericite.protocols.PairedStatistics`."""

    label: str
    path: tuple[str, ...]
    key: str | None = None


@dataclass
class CorpusStatistics:
    """A corpus's metrics before any number is drawn: each metric's :data:`Statistic` over the corpus's items,
    or the reason it cannot be computed, with its n and details. The point value, the bootstrap CI and the
    paired comparison of two runs are all computed from these, so a metric is defined in one place."""

    statistics: dict[str, Statistic] = field(default_factory=dict)
    reasons: dict[str, str] = field(default_factory=dict)
    ns: dict[str, int] = field(default_factory=dict)
    details: dict[str, dict[str, Any]] = field(default_factory=dict)

    @property
    def live(self) -> dict[str, Statistic]:
        """The statistics of the metrics that can be computed."""
        return {k: s for k, s in self.statistics.items() if k not in self.reasons}


class Ratios:
    """Builds a corpus's :class:`CorpusStatistics` one metric at a time: each metric a ratio of two columns over
    the items (:func:`ratio_of_sums`) or the F1 of two such metrics, with its n and details; a ratio whose
    denominator sums to 0 is not computed, with the reason given (``empty``), an F1 not when either part is not
    (the precision's reason first); a group of metrics whose input no item has is not computed at all."""

    def __init__(self) -> None:
        self.out = CorpusStatistics()

    def ratio(
        self, name: str, num: Sequence[float] | np.ndarray, den: Sequence[float] | np.ndarray, *, n: int,
        details: Mapping[str, Any] | None = None, empty: str | None = None,
    ) -> None:  # fmt: skip
        self.out.statistics[name] = ratio_of_sums(num, den)
        self._describe(name, n, details)
        if empty is not None and float(np.sum(den)) == 0:
            self.out.reasons[name] = empty

    def f1(self, name: str, precision: str, recall: str, *, n: int, details: Mapping[str, Any] | None = None) -> None:
        st, why = self.out.statistics, self.out.reasons
        st[name] = f1_of(st[precision], st[recall])
        self._describe(name, n, details)
        reason = why.get(precision) or why.get(recall)
        if reason:
            why[name] = reason

    def not_computed(self, names: Iterable[str], reason: str) -> None:
        for name in names:
            self.out.reasons[name] = reason

    def done(self, names: Iterable[str]) -> CorpusStatistics:
        """The statistics; a name of ``names`` that got none is "not computed"."""
        for name in names:
            if name not in self.out.statistics:
                self.out.reasons.setdefault(name, "not computed")
        return self.out

    def _describe(self, name: str, n: int, details: Mapping[str, Any] | None) -> None:
        self.out.ns[name] = n
        self.out.details[name] = dict(details or {})


def check_one_answer_per_sample(samples: Sequence[Any], answers: Sequence[Any]) -> None:
    """A metric family scores one answer per sample: unequal lengths are a caller's mistake, said in one line."""
    if len(samples) != len(answers):
        from ..errors import VericiteError

        raise VericiteError(f"{len(samples)} samples but {len(answers)} answers: a metric scores one answer per sample")


def corpus_results(
    cs: CorpusStatistics, specs: Mapping[str, MetricSpec], n_items: int, *, resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED
) -> dict[str, MetricResult]:
    """One result per spec from a corpus's statistics: the point value, n, details and a bootstrap CI over the
    ``n_items`` items, or not computed with the reason."""
    live = cs.live
    cis = bootstrap_cis(live, n_items, resamples=resamples, seed=seed) if live else {}
    out: dict[str, MetricResult] = {}
    for name, spec in specs.items():
        if name not in live:
            out[name] = MetricResult.not_computed(spec, cs.reasons.get(name, "not computed"), cs.ns.get(name, 0), **cs.details.get(name, {}))
            continue
        lo, hi = cis.get(name, (None, None))
        out[name] = MetricResult(
            name, point(live[name], n_items), cs.ns.get(name, n_items), lo, hi, None, spec.version, spec.higher_is_better,
            resamples, seed, cs.details.get(name, {}), spec,
        )  # fmt: skip
    return out


# --------------------------------------------------------------------------- a family's run, for evaluate


#: ``progress(total, label)`` is entered with a number of steps and yields ``advance(n)``
ProgressBar = Callable[[int, str], Any]


@dataclass
class MetricRun:
    """What one metric family gives an evaluation (``protocols.AnswerScorer``): its corpus results; per answer,
    the scores merged into the answer's ``scores`` in samples.jsonl and the judgements they used; the settings it
    was computed with (results.json ``evaluation``), its counts (added to ``counts``), and the judges of its own
    by purpose (``judges``; the command's judge is the task's). ``id`` is the family's ``name@N`` for
    ``metric_versions``; None when it did not run (:class:`Unavailable`). ``unnamed``: the line of a family that
    failed and whose ``names`` could not be read either (:meth:`failed`); its caller, who knows the task's metric
    names, gives the ones no family reported that line as their reason (``evaluate.pipeline``)."""

    id: str | None
    results: dict[str, MetricResult]
    scores: list[dict[str, Any]]
    judgements: list[list[dict[str, Any]]]
    settings: dict[str, Any] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=dict)
    judges: dict[str, str] = field(default_factory=dict)
    unnamed: str | None = None

    @classmethod
    def of(cls, metric: Any, samples: Sequence[Any], answers: Sequence[Any], progress: ProgressBar | None = None) -> "MetricRun":
        """Run ``metric`` over a corpus: its own run when it is an AnswerScorer, else its results alone. A plugin's
        family that fails (a ``PluginError`` of kind ``metric``: its own bug, not a model's or judge's it uses;
        its ``id`` that raises when read too) has every metric not computed, with that one line as the reason:
        the evaluation goes on."""
        from ..errors import PluginError, VericiteError
        from ..protocols import AnswerScorer

        try:
            if isinstance(metric, AnswerScorer):
                run = metric.score_answers(samples, answers, progress=progress)
                if not isinstance(run, MetricRun):
                    raise VericiteError(f"metric {getattr(metric, 'id', metric)!r}: score_answers returned a {type(run).__name__}, not a MetricRun")
                return run
            results = dict(metric.compute(samples, answers))
            return cls(metric.id, results, [{} for _ in samples], [[] for _ in samples])
        except PluginError as e:
            if e.kind != "metric":
                raise
            return cls.failed(metric, samples, str(e))

    @classmethod
    def failed(cls, metric: Any, samples: Sequence[Any], reason: str) -> "MetricRun":
        """The run of a family that failed: each of its metrics (its ``specs`` when it declares them, else its
        ``names``) not computed, with ``reason``; no version recorded. A declaration of a plugin's family that
        raises when read is left out (its ``id``: version "1"; its ``inputs``: the answer), and so is one that is
        not what the Protocol says; without ``names`` no metric is named here: ``unnamed`` is ``reason``."""
        declared = _declared(metric, "specs", ())
        specs = {s.name: s for s in (declared if isinstance(declared, (tuple, list)) else ()) if isinstance(s, MetricSpec)}
        version = str(_declared(metric, "id", "")).partition("@")[2] or "1"
        inputs = _declared(metric, "inputs", ("answer",))
        inputs = tuple(inputs) if _strings(inputs) else ("answer",)
        names = _declared(metric, "names", None)
        if not _strings(names):
            return cls(None, {}, [{} for _ in samples], [[] for _ in samples], unnamed=reason)
        results = {}
        for name in names:
            spec = specs.get(name) or MetricSpec(name, inputs, version=version)
            results[name] = MetricResult.not_computed(spec, reason)
        return cls(None, results, [{} for _ in samples], [[] for _ in samples])


def _declared(metric: Any, name: str, default: Any) -> Any:
    """``metric``'s declaration ``name``; ``default`` when it has none, or when reading it fails (a plugin's
    property: a ``PluginError`` of kind ``metric``, its family having failed already)."""
    from ..errors import PluginError

    try:
        return getattr(metric, name, default)
    except PluginError as e:
        if e.kind != "metric":
            raise
        return default


class ScoresAnswers:
    """A built-in family's ``compute`` (the Metric protocol): the results of its own ``score_answers``, the one
    place each family scores a corpus."""

    def score_answers(self, samples: Sequence[Any], answers: Sequence[Any], *, progress: Any = None) -> MetricRun:
        raise NotImplementedError(f"{type(self).__name__} scores no answers")

    def compute(self, samples: Sequence[Any], answers: Sequence[Any]) -> dict[str, MetricResult]:
        return dict(self.score_answers(samples, answers).results)


def _strings(value: Any) -> bool:
    """Whether ``value`` is a tuple or list of strings (a family's ``names``, ``inputs``)."""
    return isinstance(value, (tuple, list)) and all(isinstance(v, str) for v in value)


@dataclass
class Unavailable:
    """A family of a task's suite that cannot run in this evaluation (G-Eval without a model): every metric of it
    is not computed, with ``reason`` ("no answers" on an empty corpus), and no version is recorded."""

    id: str
    specs: tuple[MetricSpec, ...]
    reason: str
    inputs: tuple[str, ...] = ("answer",)

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(s.name for s in self.specs)

    def compute(self, samples: Sequence[Any], answers: Sequence[Any]) -> dict[str, MetricResult]:
        why = self.reason if len(samples) else "no answers"
        return {s.name: MetricResult.not_computed(s, why) for s in self.specs}

    def score_answers(self, samples: Sequence[Any], answers: Sequence[Any], *, progress: Any = None) -> MetricRun:
        return MetricRun(None, self.compute(samples, answers), [{} for _ in samples], [[] for _ in samples])
