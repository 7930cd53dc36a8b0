"""The ALCE task (ALCE / VTG, metrics.md §2): answers that cite the documents given with each question (``[1][2]``),
scored with ALCE's metrics as its ``eval.py`` computes them.

Registered as ``alce`` (the sub-task read from the input: the file's ``args`` or name, else its fields) and as
``alce-asqa``, ``alce-qampari``, ``alce-eli5`` and ``alce-short`` (a short-answer set: NQ, WebQuestions,
2WikiMultihopQA). A spec may carry options: ``alce:at_most_citations=5,qa_model=<dir>``.

What it reads (``tasks/alce_inputs.py``): an ALCE file as it is — a ``run.py`` result ``{"args", "data"}`` with an
``output`` per item, a list of items, or JSONL — or a ``vericite generate`` run folder (its ``samples.jsonl``).
A line needs ``question``, the answer (``output``) and ``passages`` (ALCE's ``docs``, ``[]`` when none); ``qa_pairs``,
``answers``, ``claims`` and the reference long answers enable the metrics that need them.

The suite: the ``alce`` family (``metrics/alce_family.py``) with the command's judge for citation recall and
precision and ELI5's claims (no judge by default: those are then not computed), ``--metrics`` to compute only
some, and ``attribution`` (with ``--attribution-judge``: every (sentence, cited document) pair classified by a
four-class judge, ``metrics/attribution.py``); with ``--reader llm:<model>`` (short-answer sets), ``answer_em`` and
``answer_f1`` score the final short answer a language model reads from each output (``metrics/alce_reader.py``),
not the whole output. Counts: citations by status (ok, unknown_source: out of range,
malformed) and judge failures. The report
colours each passage citation by the judge's verdict and shows the documents beside the answer
(``report/answers.py``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence

from ..attribution.alce import AT_MOST_CITATIONS
from ..errors import VericiteError
from ..judges.trust import ALCE_HUMAN_TASK
from ..metrics.alce import METRIC_NAMES, SPECS, SUBTASKS, detect_subtask
from ..metrics.alce_qa import QA_MODEL
from ..metrics import attribution
from ..metrics.base import MetricSpec
from ..registry import create
from ..totals import status_totals
from ..types import AttributedAnswer
from .alce_inputs import alce_record, read_alce_json, subtask_hint

#: what ``--reader``'s final short answers are scored by (``answer_hit`` stays on the whole output)
READER_METRICS = ("answer_em", "answer_f1")
#: registered task name -> its sub-task (None: read from the input)
NAMES = {"alce": None, "alce-asqa": "asqa", "alce-qampari": "qampari", "alce-eli5": "eli5", "alce-short": "short"}


class AlceTask:
    """The ``alce`` task and its sub-tasks (see the module docstring)."""

    input_fields = ("id", "question", "answer", "passages")
    optional_fields = ("qa_pairs", "answers", "claims", "meta")
    field_help = {
        "answer": "the model output as a string (ALCE's output)",
        "passages": "the documents given with the question (ALCE's docs; [] when none)",
        "qa_pairs": "ASQA's sub-questions with their short answers",
        "answers": "the gold answers, each a list of aliases (QAMPARI, short-answer sets)",
        "claims": "ELI5's gold claims",
    }
    evidence = "passages"
    metrics = ("alce", "attribution")
    judge_purposes = ("citations",)
    judge_trust = ALCE_HUMAN_TASK  # the judge's agreement with ALCE's human citation labels (judges/measured.json)
    #: without --judge, no judge is loaded (the kalma task's default, triple, cannot read documents)
    default_judge = "none"
    #: ``--reader``: the metrics a final-answer reader's short answers are scored by (evaluate/pipeline.py checks it)
    reader_metrics = READER_METRICS
    #: of the settings only some tasks read (``evaluate.pipeline.TASK_SETTINGS``), those ``suite`` reads: none; any
    #: given (``--index``, ``--lm``, ``--relevance-model``, ``--geval-model``) is said to be ignored in one line
    settings_read: tuple[str, ...] = ()

    def __init__(self, name: str = "alce", *, at_most_citations: int | None = AT_MOST_CITATIONS, qa_model: str = QA_MODEL) -> None:
        self.name = name
        self.subtask = NAMES[name]
        self.fixed = self.subtask is not None
        self.at_most_citations = at_most_citations
        self.qa_model = qa_model

    @property
    def resolved_name(self) -> str:
        """The evaluation this task is once its sub-task is known (``alce`` over ASQA answers: ``alce-asqa``), what
        ``evaluate --resume`` compares; its name while the sub-task is not known."""
        return f"alce-{self.subtask}" if self.subtask else self.name

    @property
    def citation_format(self) -> str:
        return "alce-qampari" if self.subtask == "qampari" else "alce"

    def specs(self) -> dict[str, MetricSpec]:
        """The sub-task's metrics; every ALCE metric while the sub-task is not known yet (``alce`` before its input
        is read: a threshold on any of them is accepted, and one the input's sub-task lacks is not computed); then
        the four-class diagnosis's (``attribution``)."""
        return {**{n: SPECS[n] for n in self.alce_names()}, **attribution.SPECS}

    def alce_names(self) -> tuple[str, ...]:
        """The ALCE metrics of the sub-task (all while it is not known)."""
        return tuple(SUBTASKS[self.subtask] if self.subtask else METRIC_NAMES)

    def metric_names(self) -> tuple[str, ...]:
        return tuple(self.specs())

    def spec_options(self) -> dict[str, Any]:
        """The spec's options that differ from their defaults (``evaluate --resume`` checks them): a spec that
        spells out a default is the same task as one that leaves it out."""
        given = {"at_most_citations": self.at_most_citations, "qa_model": self.qa_model}
        defaults = {"at_most_citations": AT_MOST_CITATIONS, "qa_model": QA_MODEL}
        return {k: v for k, v in given.items() if v != defaults[k]}

    # ------------------------------------------------------------------ reading

    def read_records(self, path: str | Path) -> list[tuple[int, Any]] | None:
        """The numbered records of an ALCE JSON file (None for JSONL, read line by line with :meth:`convert_record`);
        the file's ``args`` or name sets the sub-task when the task name does not."""
        doc = read_alce_json(path)
        if not self.fixed:
            self.subtask = subtask_hint(path, doc[1] if doc else None) or self.subtask
        return None if doc is None else [(n, alce_record(d, n)) for n, d in doc[0]]

    def convert_record(self, d: Any, line: int) -> Any:
        return alce_record(d, line)

    def prepare(self, samples: Sequence[Any]) -> None:
        """The sub-task from the answers' fields when neither the task name nor the file said it."""
        if self.subtask is None:
            self.subtask = detect_subtask(samples)

    # ------------------------------------------------------------------ scoring

    def suite(self, settings: Any, *, judge: Any, ctx: Any) -> list[Any]:
        if judge is not None and getattr(judge, "id", "").startswith("triple@"):
            raise VericiteError("the triple judge reads knowledge-graph claims, not documents: give the alce task --judge llm:<model>, nli:<model> or table:<file.jsonl>")
        selected = getattr(settings, "metrics", None) or None
        if selected:
            unknown = [m for m in selected if m not in self.metric_names()]
            if unknown:
                raise VericiteError(f"--metrics: not a metric of task {self.name}: {', '.join(unknown)} (known: {', '.join(self.metric_names())})")
        alce_selected = [m for m in selected if m in self.alce_names()] if selected else None
        names = tuple(n for n in self.alce_names() if not selected or n in selected)
        reader = self.reader_for(getattr(settings, "reader", None), names, ctx)
        out = [] if selected and not alce_selected else [
            create(
                "metrics", "alce", ctx, judge=judge, subtask=self.subtask, names=names, metrics=alce_selected,
                at_most_citations=self.at_most_citations, qa_model=self.qa_model, resamples=settings.resamples, seed=settings.seed,
                reader=reader,
            )
        ]  # fmt: skip
        return [*out, attribution.family_for(settings, ctx)]

    def reader_for(self, spec: str | None, names: Sequence[str], ctx: Any) -> Any:
        """``--reader llm:<model>``: the final-answer reader whose short answers ``answer_em`` and ``answer_f1``
        score (``metrics/alce_reader.py``; its model loaded at its first reading), or None without one. Refused in
        one line where it would read nothing: a sub-task without short answers, or ``--metrics`` without both."""
        if not spec or spec == "none":
            return None
        from ..metrics.alce_reader import FinalAnswerReader

        if self.subtask is not None and "answer_em" not in SUBTASKS[self.subtask]:
            raise VericiteError(f"--reader: the reader's answer is what the short-answer metrics answer_em and answer_f1 score, and this is an ALCE {self.subtask} evaluation (the reader serves alce-short: NQ, WebQuestions, 2WikiMultihopQA)")
        if not set(names) & set(READER_METRICS):
            raise VericiteError("--reader: the reader's answer is what answer_em and answer_f1 score, and --metrics leaves both out")
        from ..models import model_loader

        return FinalAnswerReader(spec, model_loader(ctx))

    def preload(self, settings: Any, ctx: Any) -> None:
        """``vericite run`` calls it before it generates: the ``reader``'s spec and model name are checked now (an
        unknown model, or a known one whose file is missing, is one line then, not after the generation:
        ``models.check_model``). The model itself is loaded by each evaluation,
        before its first answer is judged (``AlceMetric.preload``), where the run's answering model serves it when
        it is the same name (no second copy)."""
        spec = getattr(settings, "reader", None)
        if not spec or spec == "none":
            return
        from ..errors import load_failure
        from ..metrics.alce_reader import parse_reader_spec
        from ..models import check_model

        model, _ = parse_reader_spec(spec)
        try:
            check_model(model)
        except VericiteError as e:
            raise load_failure(f"the reader's model {model} (--reader {spec})", e) from None

    def counts(self, answers: Sequence[AttributedAnswer]) -> dict[str, Any]:
        return {"citation_status": status_totals(a.status_counts() for a in answers)}


def from_spec(arg: str, *, ctx: Any, _name: str = "alce", **options: Any) -> AlceTask:
    """Registry factory: ``alce[:key=value,...]`` (``at_most_citations``, ``qa_model``) for every registered name."""
    for part in filter(None, (x.strip() for x in arg.split(","))):
        key, sep, value = part.partition("=")
        if not sep or key not in ("at_most_citations", "qa_model"):
            raise VericiteError(f"task {_name}: unknown option {part!r} (want at_most_citations=N or qa_model=<dir or hub id>)")
        options[key] = value
    if "at_most_citations" in options:
        v = str(options["at_most_citations"])
        if v.lower() in ("none", "all"):
            options["at_most_citations"] = None
        elif not v.isdigit() or int(v) < 1:
            raise VericiteError(f"task {_name}: at_most_citations wants a positive number or 'all', not {v!r}")
        else:
            options["at_most_citations"] = int(v)
    return AlceTask(_name, **options)


def _named(name: str) -> Any:
    def factory(arg: str, *, ctx: Any, **options: Any) -> AlceTask:
        return from_spec(arg, ctx=ctx, _name=name, **options)

    return factory


asqa_from_spec = _named("alce-asqa")
qampari_from_spec = _named("alce-qampari")
eli5_from_spec = _named("alce-eli5")
short_from_spec = _named("alce-short")
