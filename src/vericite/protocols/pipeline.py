"""The Protocols of what runs over evidence: metrics, generation methods, datasets, builders, experiments,
tasks, with their capabilities."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, Callable, Iterator, Mapping, Protocol, Sequence, runtime_checkable

if TYPE_CHECKING:
    from ..types import AttributedAnswer, Sample

__all__ = [
    "Metric",
    "AnswerScorer",
    "PairedStatistics",
    "FamilyFactory",
    "Method",
    "MethodOptions",
    "SampleChecking",
    "SamplesPrepared",
    "DatasetReading",
    "ReferenceProviding",
    "ManifestUpgrading",
    "Summarising",
    "StepShowing",
    "Dataset",
    "Demonstrating",
    "CorpusProviding",
    "Builder",
    "LevelSamples",
    "Experiment",
    "GenerationVarying",
    "Task",
    "RecordReading",
    "CorpusPreparing",
]


# --------------------------------------------------------------------------- metrics, methods, data


@runtime_checkable
class Metric(Protocol):
    """A family of corpus metrics computed together (KaLMA's twelve, G-Eval's four).

    ``inputs`` names what every item must carry: ``answer`` (the parsed answer) and Sample fields
    (``knowledge``, ``gold``, ``absent``, ``passages`` ...). ``compute`` returns one result per name of
    ``names`` (a ``vericite.metrics.base.MetricResult``, or an object with the same fields)."""

    id: str  # family@version, e.g. "kalma@1"
    names: tuple[str, ...]
    inputs: tuple[str, ...]

    def compute(self, samples: Sequence[Sample], answers: Sequence[AttributedAnswer]) -> Mapping[str, Any]: ...


@runtime_checkable
class AnswerScorer(Protocol):
    """Capability of a Metric: besides its corpus results, what each answer scored and the judgements behind it,
    the settings it was computed with, its counts and the judges of its own — what ``vericite evaluate`` writes
    to samples.jsonl and results.json. Returns a ``vericite.metrics.base.MetricRun``. ``progress(total, label)``,
    when given, is entered with a number of steps and yields ``advance(n)`` (a bar on a terminal).

    A family with a ``judge`` is also run on each answer alone for ``evaluate``'s checkpoint (evaluate/checkpoint.py);
    an optional ``judging_part()`` gives a copy that computes only what its judge decides (None: nothing), and an
    optional ``reuse_checkpointed(samples, answers, scores)`` is given, before the corpus is scored, what the
    checkpoint holds of each answer scored alone (its scores by answer index), to reuse rather than ask a model
    again (CONNER's reader answers and the evidence its retriever found)."""

    def score_answers(self, samples: Sequence[Sample], answers: Sequence[AttributedAnswer], *, progress: Any = None) -> Any: ...


@runtime_checkable
class PairedStatistics(Protocol):
    """Capability of a Metric family: its statistics rebuilt from the per-sample records an evaluation wrote
    (samples.jsonl), so ``vericite compare`` pairs two runs sample by sample (``metrics/paired.py``).

    ``statistics_from_records(records)`` returns a ``vericite.metrics.base.CorpusStatistics`` over ``records`` in
    their order: for each metric of the family the Statistic its corpus value is computed with, its n, and the
    reason when it cannot be computed. It reads the records alone: compare calls it on the family's class
    (:class:`FamilyFactory`), with no judge or model built, so it is a static method or a classmethod.
    ``compared_settings`` maps each setting of results.json ``evaluation`` that changes what the family's metrics
    measure (its path there, dotted: ``alce.subtask``) to the setting it matters only with (None: always; KaLMA's
    ``hypothesis`` only with a ``judge``; the setting itself: only when both runs record it, ALCE's QA model):
    two runs that differ in one are not compared. ``allowed_differences`` are ``metrics.base.AllowedDifference``:
    the settings the runs may differ in (the family's judge), listed when they do."""

    compared_settings: Mapping[str, str | None]
    allowed_differences: Sequence[Any]

    def statistics_from_records(self, records: Sequence[Mapping[str, Any]]) -> Any: ...


@runtime_checkable
class FamilyFactory(Protocol):
    """A metric factory's declaration of the class it builds (``family``), so a caller reads the family's
    class-level declarations (its ``inputs``, :class:`PairedStatistics`) without building it: G-Eval's family
    needs a model to be built, reading its scores back does not. A factory that is itself the class needs none."""

    family: type


@runtime_checkable
class Method(Protocol):
    """A generation method: answers one sample at a time. The run loop (``vericite.runs.loop``) owns resume,
    failures, progress, files and usage: every backend a method gets from the loop is metered, and the loop
    writes each record's ``usage`` (prompt and completion tokens, calls) itself.

    Its registry factory is ``(arg, *, ctx, seed=0, backend=None, **method_args)``: ``arg`` names the model
    (``kalma:<model>``), loaded with ``vericite.models.model_loader(ctx)``; ``backend`` a ready one instead;
    ``seed`` the run's sampling seed. A factory may carry ``options_model``, a pydantic model of its
    ``method_args`` (see :class:`MethodOptions`)."""

    id: str  # e.g. "kalma@1"

    def answer(self, sample: Sample) -> dict[str, Any]:
        """The record written to samples.jsonl for this sample."""
        ...

    def manifest(self) -> dict[str, Any]:
        """What decides this method's answers (model, prompt, parameters), recorded in the run's manifest."""
        ...


@runtime_checkable
class MethodOptions(Protocol):
    """A method factory's declaration of its options (lm-eval task-config style): ``options_model`` is a
    pydantic model of its ``method_args``. A run config validates them with it, fills its defaults and records
    them; a flat key of the config that is not the run's own is one of these. Options the model names in a class
    attribute ``recorded_when_set`` (a tuple) are recorded only when they are not None (an option added later, so
    that the runs written before it stay the same runs). An optional classmethod ``notes(method_args)`` returns the
    warning lines the options given deserve (VTG's k with a store), said by ``generate`` and, once per distinct
    line over every level's generation, by ``run``. An optional classmethod ``resumed_options(method_args,
    manifest)`` returns the options a folder being resumed sets where ``method_args`` leave them unset (VTG's
    ``repeat_overlap``: what the folder's manifest records, 1.0 for one written before the option): the method
    of ``generate --resume`` / ``run --resume`` is built with them, the config recorded is left as given
    (``runs/loop.resumed_config``), but for one the folder's config holds (it was given to the folder): that is the
    folder's value, recorded and said on stderr (``runs/loop.recorded_config``)."""

    options_model: type


@runtime_checkable
class SampleChecking(Protocol):
    """Capability of a Method: refuse, before anything is written, questions it cannot answer (KaLMA without a
    graph, on questions that carry no knowledge). ``dataset`` names them in the message."""

    def check_samples(self, samples: Sequence[Sample], dataset: str) -> None: ...


@runtime_checkable
class DatasetReading(Protocol):
    """Capability of a SampleChecking Method that reads the run's whole dataset, beyond the questions it answers
    (conner-knowledge's few-shot demonstrations: ``demo_draw=dataset``, ``pool``). Before ``check_samples`` the run
    gives it ``read_dataset_with(load)``: ``load()`` returns the dataset as the run reads its questions (the same
    loader, ``phrasing`` and ``data_path``, each id once, before ``--limit``), so a custom data file or the other
    phrasing is what it reads, not the named dataset's defaults. ``reference_file``: where the gold passages of
    those questions are (``ReferenceProviding``, ``datasets.reference_file``), None for a dataset without."""

    def read_dataset_with(self, load: Callable[[], Sequence[Sample]], reference_file: str | None = None) -> None: ...


@runtime_checkable
class SamplesPrepared(Protocol):
    """Capability of a SampleChecking Method whose ``check_samples`` keeps what its answers read (conner-knowledge:
    the few-shot pool, the drawn demonstration pool in its Q_know order). A pool's workers (``generate --ray`` /
    ``--concurrency``) each build their own copy, which never sees the samples: the driver's copy gives
    ``prepared()`` (picklable) and each worker's takes it with ``use_prepared(state)`` before it answers, so that
    its answers are a local run's and nothing is prepared twice."""

    def prepared(self) -> Any: ...

    def use_prepared(self, state: Any) -> None: ...


@runtime_checkable
class ManifestUpgrading(Protocol):
    """Capability of a Method: ``generate --resume`` / ``run --resume`` compare what its folder's manifest
    recorded with what it records now (``runs/rundir.py``), only in the keys both hold; a key this version records
    that an older manifest lacks is no difference, unless the method says here what that manifest meant by its
    absence (conner-knowledge: a few-shot manifest without ``demo_words`` put its demonstrations in whole, one without
    ``demo_draw`` drew them from the run's questions).
    ``upgrade_manifest(old)``: ``old`` as this version would have recorded it (nothing written)."""

    def upgrade_manifest(self, old: Mapping[str, Any]) -> dict[str, Any]: ...


@runtime_checkable
class ProgressShowing(Protocol):
    """Capability of a Method: long work of its own before the loop (conner-knowledge scoring its demonstration
    pool) shows progress as the run does: ``show_progress(False)`` under ``--quiet``."""

    def show_progress(self, enabled: bool) -> None: ...


@runtime_checkable
class StepShowing(Protocol):
    """Capability of a Method: names the step a long answer is on (VTG: the sentence and the trial), for the run's
    progress. The loop calls ``show_steps(report)`` before each answer; the method calls ``report("sentence 2,
    trial 1")`` as it goes, and the progress line names the sample and that step."""

    def show_steps(self, report: Any) -> None: ...


@runtime_checkable
class Summarising(Protocol):
    """Capability of a Method: what a run's summary says about its answers, beside the loop's own counts
    (KaLMA: citation-status totals, [NA] count, retrieval counts and accuracy), from the records written."""

    def summarise(self, records: Sequence[Mapping[str, Any]]) -> dict[str, Any]: ...


@runtime_checkable
class Dataset(Protocol):
    """A question set."""

    name: str

    def load(self, **options: Any) -> list[Sample]: ...


@runtime_checkable
class Demonstrating(Protocol):
    """Capability of a Dataset: the demonstration file (a worked example) that methods showing one should use
    for its questions, for the same options as ``load`` (BioKaLMA's released one-shot prompt for a phrasing);
    None when it has none (the method's own default then)."""

    def demonstration(self, **options: Any) -> str | None: ...


@runtime_checkable
class CorpusProviding(Protocol):
    """Capability of a Dataset: the corpus its questions are answered from by retrieval (``nq-500``: CONNER's
    gold passages), as a file the document loaders read (``vericite docs index <dataset name>``)."""

    def corpus_file(self, **options: Any) -> str: ...


@runtime_checkable
class ReferenceProviding(Protocol):
    """Capability of a Dataset whose questions name gold passages held in a file (``meta.gold_document``; ``nq-500``:
    the questions' own file): ``reference_file(path=...)`` is where they are for the questions ``load(path=...)``
    reads (``path``: ``--data-path``), so a method reading reference knowledge (conner-knowledge's ``source=reference``
    and few-shot demonstrations) reads the run's file, not the default one (``runs/loop.check_samples``). A dataset
    without it (a file of questions) has no such file: conner-knowledge's ``reference_file`` option names it, or the
    questions carry their passages (``meta.reference_knowledge``); else a question naming one is refused."""

    def reference_file(self, *, path: Any = None) -> str: ...


@runtime_checkable
class Builder(Protocol):
    """Builds a dataset file (``vericite build``); returns the build log."""

    id: str

    def build(self, out: str | os.PathLike[str], *, resume: bool = False) -> dict[str, Any]: ...


class LevelSamples(Protocol):
    """The samples of one level of an experiment (a sequence of ``Sample``), and those left out: ``n_skipped``
    of them, for ``skip_reason`` (``vericite run`` writes both into the level's row)."""

    skip_reason: str

    @property
    def n_skipped(self) -> int: ...

    def __len__(self) -> int: ...

    def __iter__(self) -> Iterator[Sample]: ...


@runtime_checkable
class Experiment(Protocol):
    """What varies across the levels of a run (``x_label``), and the samples of each level. ``section`` names
    the part of the report the experiment belongs to, and ``presentation()`` how a reader draws it (written into
    results.json beside the rows: ``descending``, ``curves``, ``token_figure``?)."""

    name: str
    x_label: str
    levels: tuple[Any, ...]
    section: str

    def samples_at(self, samples: Sequence[Sample], level: Any, seed: int = 0, *, levels: Sequence[Any] | None = None) -> LevelSamples: ...

    def presentation(self) -> dict[str, Any]: ...


@runtime_checkable
class GenerationVarying(Protocol):
    """Capability of an Experiment: its levels change the generation, not (only) the samples (VTG's sweeps of N,
    M, T and its ablations): the GenerateConfig fields a level sets (``method``, ``method_args``), given the
    config's own ``method_args``."""

    def generation_at(self, level: Any, method_args: dict[str, Any]) -> dict[str, Any]: ...


@runtime_checkable
class Task(Protocol):
    """A benchmark task (kalma; alce, caqa, conner next): what an input line carries, how its answers cite, which
    metrics score it and what it counts. ``evaluate``, ``run`` and ``report`` serve any task from this declaration
    (``vericite/tasks/``; the report reads what the suite wrote into results.json).

    An input line becomes a ``Sample`` from its ``input_fields`` (each required, worded by ``field_help`` when
    missing; ``id`` may be absent: the line number stands in; ``answer`` is the model's raw output, or a ``vericite
    generate`` record's ``output``) and the ``optional_fields`` it has. The answer is parsed by the
    ``citation_format`` against the Sample field named by ``evidence`` (what the model was given: ``knowledge``
    triples, ``passages``). ``suite`` builds the metric families of ``metrics`` for one evaluation; ``metric_names``
    lists every metric they report, without building them (a threshold is checked before any model loads). The
    command's judge serves ``judge_purposes`` (none: no judge is loaded), and its measured accuracy is looked up
    for ``judge_trust`` (a task key of judges/measured.json). ``counts`` are the task's own totals of the parsed
    answers (results.json ``counts``). Optionally ``settings_read``: which of the settings only some tasks read
    (``evaluate.pipeline.TASK_SETTINGS``: ``--index``, ``--lm`` ...) ``suite`` reads; one given that it does not is
    said to be ignored in one warning line."""

    name: str
    input_fields: tuple[str, ...]  # fields every input line must have
    optional_fields: tuple[str, ...]  # fields read when a line has them (a metric that needs a missing one is not computed)
    field_help: Mapping[str, str]  # what a field holds, for the message when it is missing
    citation_format: str  # a name in registry.formats
    evidence: str  # the Sample field the answers cite, given to the citation format
    metrics: tuple[str, ...]  # names in registry.metrics: the task's suite
    judge_purposes: tuple[str, ...]  # what the command's judge decides (results.json "judges")
    judge_trust: str | None  # the judges/measured.json task its judge is trusted by

    def metric_names(self) -> tuple[str, ...]:
        """Every metric the suite reports, in order."""
        ...

    def suite(self, settings: Any, *, judge: Judge | None, ctx: Any) -> list[Metric]:
        """The suite's metric families for one evaluation: ``settings`` are the command's (resamples, seed and
        what the task reads of them), ``judge`` the command's judge (or None), ``ctx`` the BuildContext to
        build them with. A family that cannot run here (a model not given) is one whose every metric is not
        computed, with the reason (``metrics.base.Unavailable``)."""
        ...

    def counts(self, answers: Sequence[AttributedAnswer]) -> dict[str, Any]:
        """The task's totals of a corpus's parsed answers (citations by status, [NA] markers ...)."""
        ...


@runtime_checkable
class RecordReading(Protocol):
    """Capability of a Task: input files of its own shape. ``read_records(path)`` gives a JSON file's records,
    numbered from 1 (None: the file is JSONL, read line by line as usual); ``convert_record(record, number)`` turns
    each record, from either, into the shape its ``input_fields`` name (ALCE's ``output`` and ``docs``)."""

    def read_records(self, path: str | os.PathLike[str]) -> list[tuple[int, Any]] | None: ...

    def convert_record(self, record: Any, number: int) -> Any: ...


@runtime_checkable
class CorpusPreparing(Protocol):
    """Capability of a Task: look at the corpus's samples before its answers are parsed (ALCE reads its sub-task,
    and with it the citation format, from the fields when nothing named it)."""

    def prepare(self, samples: Sequence[Sample]) -> None: ...
