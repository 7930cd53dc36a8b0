"""A task's metric suite over a corpus of answers: the results body of ``results.json`` and the records of
``samples.jsonl``. Compute only: reading is ``inputs.py``, writing is ``runs/results.py``.

Every answer is parsed by the task's citation format against the evidence it was given; the task's judge
(``--judge``, loaded only when the task has judge purposes) and settings build its suite (``Task.suite``), and
each metric family runs over the whole corpus (``metrics.base.MetricRun``). ``metrics`` (``--metrics``) keeps only
the metrics named; a task that can compute only those (ALCE) is told them through the settings. ``reader``
(``--reader llm:<model>``) serves a task that declares ``reader_metrics`` (ALCE's ``answer_em``, ``answer_f1``).
A family's ``preload()`` (CONNER's relevance model, ALCE's reader and QA model) is called before any answer is judged. The body holds what the families
give: each family's version (``metric_versions``), how it was computed (``evaluation``), the judges by purpose
with their measured accuracy (``judges``), one entry per metric (``metrics``), the counts (``counts``: the
answers, the empty ones, the unparseable judgements, then the task's own), and what the model calls of the
judges and model-scored metrics cost, per model name (``judge_usage``). Each record is the input record
with the sample as read, the raw output, the parsed answer, the judgements and every family's per-answer scores.
With a checkpoint, each answer is first scored alone into it, here or on a pool's workers (``answer_scoring.py``).
"""

from __future__ import annotations

import dataclasses
from typing import Any, Literal, Mapping, Sequence

from pydantic import BaseModel, ConfigDict, Field

from ..judges.trust import measured_trust
from ..metrics.base import MetricResult, MetricRun, MetricSpec
from ..metrics.judging import judge_id
from ..protocols import Task
from ..registry import BuildContext
from .answer_scoring import reuse_checkpointed_scores, score_answer_by_answer, score_answers_on_pool
from .inputs import DEFAULT_TASK, AnswerItem, load_task
from .lifecycle import close_evaluation, preload


class EvaluateConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    judge: str = "triple"  # triple | nli:<model> | llm:<model> | none
    geval_model: str | None = None  # LLM for G-Eval; None: G-Eval not computed
    base_url: str | None = None
    hypothesis: Literal["property", "entity"] = "property"
    match: Literal["exact", "normalised"] = "exact"
    resamples: int = Field(default=1000, ge=0)
    seed: int = 0
    threads: int | None = Field(default=None, ge=1)
    cache: bool = True
    timeout: float | None = Field(default=None, gt=0)  # seconds per request to a model server [300]
    request_retries: int | None = Field(default=None, ge=0)
    task: str = DEFAULT_TASK  # a name in registry.tasks: input fields, citation format, metric suite
    metrics: list[str] | None = None  # compute only these metrics of the task's suite (--metrics a,b,c)
    evidence_index: str | None = None  # --index: an index folder, evidence retrieved per sentence (conner's factuality)
    lm: str | None = None  # the causal LM of the conner task's LM measures (default: an llm3 judge's model)
    relevance_model: str | None = None  # the conner task's relevance scorer [ms-marco]; none: not computed
    attribution_judge: str | None = None  # a four-class judge: every (sentence, citation) pair classified (kalma, alce)
    reader: str | None = None  # llm:<model>: the final short answer read from each output, what answer_em/f1 score (alce)


#: ``judge`` not given to :func:`evaluate_items`: load the settings' judge
LOAD: Any = object()


def build_context(cfg: Any, models: Mapping[str, Any] | None = None, meters: dict[str, Any] | None = None, *, cache: Any = None, loaded: list[Any] | None = None) -> BuildContext:
    """The BuildContext of every model role of one evaluation (the judge's model, G-Eval's, the four-class
    judge's, CONNER's LM): the settings' threads, server, time limits and cache. A model name is loaded once per
    evaluation, however many roles name it (``--judge llm:X --attribution-judge llm4:X`` hold one copy of X);
    ``models`` are backends already loaded, by model name (a run's answering model), used instead of loading;
    ``cache``: the call cache instead of the settings' (a path: an evaluation's own). ``meters``: given, each
    model name loaded gets a ``UsageMeter`` there that counts the evaluation's calls to it (apart from any meter
    a run's answering model already reports to). ``loaded``: a list that gets each model loaded here (not ``models``)."""
    from ..models import load_model, model_options
    from ..models.usage import UsageMeter, metered

    base = BuildContext(**{**model_options(cfg), **({"cache": cache} if cache is not None else {})})
    ready = dict(models or {})
    served: dict[str, Any] = {}

    def load(name: str) -> Any:
        if name not in served:
            backend = ready[name] if name in ready else load_model(name, ctx=base)
            if loaded is not None and name not in ready:
                loaded.append(backend)
            served[name] = backend if meters is None else metered(backend, meters.setdefault(name, UsageMeter()))
        return served[name]

    return dataclasses.replace(base, load_model=load)


def judge_spec(cfg: Any, task: Task) -> str:
    """The judge an evaluation loads: the settings' when given, else the task's ``default_judge`` when it declares
    one (ALCE: none, as the default triple judge cannot read documents), else the settings' default."""
    given = getattr(cfg, "model_fields_set", None)
    if given is not None and "judge" not in given and getattr(task, "default_judge", None) is not None:
        return str(task.default_judge)
    return cfg.judge or "none"


def check_attribution_judge(cfg: Any, task: Task) -> None:
    """``--attribution-judge`` serves only a task whose suite has the four-class diagnosis (``attribution``), and
    names a registered judge: both checked before any model loads (whether it is four-class, when it is built)."""
    spec = getattr(cfg, "attribution_judge", None)
    if not spec or spec == "none":
        return
    from ..errors import VericiteError
    from ..registry import registry_for

    if "attribution" not in task.metrics:
        raise VericiteError(f"--attribution-judge: task {task.name} has no four-class diagnosis of its citations (the kalma and alce tasks have)")
    judges = registry_for("judges")
    judges.get(judges.split(spec)[0])  # an unknown name: one line with a did-you-mean


def check_reader(cfg: Any, task: Task, selected: set[str] | None) -> None:
    """``--reader``: its spec, and a task that scores a reader's short answers (``reader_metrics``: ALCE's
    ``answer_em``, ``answer_f1``) among the metrics it computes here (its sub-task's, those ``--metrics`` asks
    for); each refused in one line before any model loads."""
    spec = getattr(cfg, "reader", None)
    if not spec or spec == "none":
        return
    from ..errors import VericiteError
    from ..metrics.alce_reader import parse_reader_spec

    parse_reader_spec(spec)
    served = tuple(getattr(task, "reader_metrics", ()) or ())
    if not served:
        raise VericiteError(f"--reader: task {task.name} scores no final short answer (the alce tasks' answer_em and answer_f1 do: --task alce-short)")
    if not set(served) & set(task.metric_names()):
        raise VericiteError(f"--reader: the reader's answer is what {' and '.join(served)} score, and this {task.name} evaluation's sub-task has neither (the reader serves alce-short: NQ, WebQuestions, 2WikiMultihopQA)")
    if selected is not None and not set(served) & selected:
        raise VericiteError(f"--reader: the reader's answer is what {' and '.join(served)} score, and --metrics leaves both out")


#: the settings only some tasks read (``--index``, ``--lm``, ``--relevance-model``: conner's; ``--geval-model``:
#: kalma's); a task says which of them its suite reads with ``settings_read``
TASK_SETTINGS = ("evidence_index", "lm", "relevance_model", "geval_model")


def ignored_settings(cfg: Any, task: Task) -> list[str]:
    """The settings of :data:`TASK_SETTINGS` given in ``cfg`` (not None) that ``task`` does not read: not an error
    (the evaluation goes on, and results.json records them as given), but what the commands say in one line. A task
    that does not declare ``settings_read`` (a plugin's) is not second-guessed: nothing is said of it."""
    read = getattr(task, "settings_read", None)
    if read is None:
        return []
    return [k for k in TASK_SETTINGS if getattr(cfg, k, None) is not None and k not in read]


def ignored_note(names: Sequence[str], task: Task, spelled: Mapping[str, str] | None = None) -> str | None:
    """The one line saying that ``task`` ignores the settings ``names`` (:func:`ignored_settings`), each spelled as the
    command takes it (``spelled``: ``evidence_index`` -> ``--index``); None when there is none."""
    if not names:
        return None
    shown = ", ".join((spelled or {}).get(n, n) for n in names)
    which = "it is" if len(names) == 1 else "they are"
    return f"warning: task {task.name} does not read {shown}: {which} ignored (recorded in results.json as given)"


def check_metric_selection(names: Any, task: Task) -> set[str] | None:
    """``--metrics``: the names asked for (None: all), each checked against the task's suite with a did-you-mean."""
    if names is None:
        return None
    from ..errors import VericiteError, did_you_mean

    known = task.metric_names()
    if not names:  # `metrics: []` in a config: not "all of them" in disguise
        raise VericiteError(f"metrics: an empty list names no metric; give some of task {task.name}'s ({', '.join(known)}), or leave it out for all")
    for name in names:
        if name not in known:
            hint = did_you_mean(name, known)
            raise VericiteError(f"--metrics: {name!r} is not a metric of task {task.name}" + (f"; {hint}" if hint else f" (known: {', '.join(known)})"))
    return set(names)


def evaluate_items(
    items: Sequence[AnswerItem],
    cfg: Any,
    *,
    task: str | Task | None = None,
    judge: Any = LOAD,
    models: Mapping[str, Any] | None = None,
    progress: bool = False,
    checkpoint: Any = None,
    workers: Any = None,
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Score ``items`` with ``task``'s suite (default: the settings' task); returns (results body, per-sample
    records). ``cfg``: the settings (an EvaluateConfig, or an object with its fields). ``judge``: a ready judge,
    or None for none (default: the settings' judge, loaded). ``models``: backends already loaded, by model name.
    ``progress``: show the progress of judging and of model-scored metrics (a bar on a terminal, a plain line
    every 30 s elsewhere). ``checkpoint``: an ``evaluate.checkpoint.AnswerCheckpoint``: the answers are judged
    one at a time into it first (those already there are not judged again), then the corpus is scored from it.
    ``workers`` (with ``checkpoint``; ``--ray``): called with the task once prepared, it gives the pool
    (``distributed.Pool``) whose workers score those answers instead (:func:`score_answers_on_pool`), the
    driver writing each answer's line as it comes back; it is opened only when some answer is left to judge. What
    it built is closed on the way out, as a pool's worker closes its own (``lifecycle.close_evaluation``): the judge
    it loaded and the suite's families, then the models loaded for them; ``judge`` and ``models`` given are the
    caller's."""
    task = load_task(task if task is not None else getattr(cfg, "task", None))
    check_attribution_judge(cfg, task)
    selected = check_metric_selection(getattr(cfg, "metrics", None), task)
    meters: dict[str, Any] = {}
    built: list[Any] = []  # the judge loaded here and the suite's families, then the models loaded: closed at the end
    loaded: list[Any] = []
    # with --no-cache, a checkpointed evaluation keeps its own model calls (in --out) for --resume
    ctx = build_context(cfg, models, meters, cache=checkpoint.calls if checkpoint is not None and getattr(cfg, "cache", True) is False else None, loaded=loaded)
    try:
        return _evaluated(items, cfg, task, selected, judge, ctx, meters, progress, checkpoint, workers, built)
    finally:
        close_evaluation(built, loaded)


def _evaluated(items: Sequence[AnswerItem], cfg: Any, task: Any, selected: Any, judge: Any, ctx: Any, meters: dict[str, Any],
               progress: bool, checkpoint: Any, workers: Any, built: list[Any]) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """:func:`evaluate_items` once its context is made; what it builds goes into ``built``, as it is built."""
    from ..progress import progress_bar
    from ..registry import create

    from ..models.usage import UsageMeter
    from ..types import Usage
    from ..protocols import CorpusPreparing

    if isinstance(task, CorpusPreparing):
        task.prepare([it.sample for it in items])
    check_reader(cfg, task, selected)
    fmt = create("formats", task.citation_format, ctx)
    for it in items:
        it.answer = fmt.parse(it.raw, getattr(it.sample, task.evidence))
    given = judge if judge is not LOAD else None  # a ready judge: its model was not loaded (nor metered) here
    if judge is LOAD:
        from ..judges import load_judge

        judge = load_judge(judge_spec(cfg, task), ctx=ctx) if task.judge_purposes else None
        built.append(judge)
    samples = [it.sample for it in items]
    answers = [it.answer for it in items]
    bar = lambda total, label: progress_bar(total, label, enabled=progress)  # noqa: E731
    suite = list(task.suite(cfg, judge=judge, ctx=ctx))
    built.extend(suite)
    preload(suite)  # a model the corpus's scoring would load first (CONNER's relevance model, ALCE's reader): now
    with _metering_ready(given, meters):
        if checkpoint is not None:
            for name, used in checkpoint.usage.items():  # the answers read back: what their judging cost then
                meters.setdefault(name, UsageMeter()).add(Usage.from_dict(used))
            if workers is not None:
                score_answers_on_pool(suite, items, checkpoint, lambda: workers(task), progress, meters)
            else:
                score_answer_by_answer(suite, items, checkpoint, progress, meters)
            reuse_checkpointed_scores(suite, samples, answers, checkpoint)
        runs = [MetricRun.of(m, samples, answers, bar) for m in suite]

    judges: dict[str, Any] = {}
    if judge is not None:
        jid = judge_id(judge)
        calibration = getattr(judge, "calibration", None)  # llm3c: its content-free prior (judges/calibrated.py)
        cal = calibration() if callable(calibration) else None
        fit = cal.get("fit_sha256") if isinstance(cal, Mapping) else None  # llm3f: measured per fit file (judges/trust.py)
        for purpose in task.judge_purposes:
            judges[purpose] = {"id": jid, "measured": measured_trust(jid, task.judge_trust, fit_sha256=fit)}
            if callable(calibration):
                judges[purpose]["calibration"] = cal
    metrics: dict[str, Any] = {}
    counts: dict[str, Any] = {"samples": len(items), "unparseable_outputs": sum(1 for it in items if not it.raw.strip()), "unparseable_judgements": 0}
    for run in runs:
        for purpose, jid in run.judges.items():
            judges[purpose] = {"id": jid, "measured": measured_trust(jid)}
        names = set(task.metric_names())  # a task that has read its input may report fewer (ALCE: its sub-task's)
        for name, r in run.results.items():
            if name in names and (selected is None or name in selected):  # a task that cannot leave metrics out: only those asked for
                metrics[name] = {**r.to_dict(), "judge": r.details.get("judge")}
        for key, n in run.counts.items():
            counts[key] = counts.get(key, 0) + n
    unnamed = list(dict.fromkeys(run.unnamed for run in runs if run.unnamed))
    if unnamed:  # a plugin family failed and its names could not be read: the task's metrics no family gave are its
        for name in task.metric_names():
            if name not in metrics and (selected is None or name in selected):
                metrics[name] = {**MetricResult.not_computed(MetricSpec(name, ("answer",)), "; ".join(unnamed)).to_dict(), "judge": None}
    counts.update(task.counts(answers))  # type: ignore[arg-type]
    body = {
        "metric_versions": {run.id.partition("@")[0]: run.id for run in runs if run.id},
        "evaluation": {k: v for run in runs for k, v in run.settings.items()},
        "judges": judges,
        "metrics": metrics,
        "counts": counts,
        # what the evaluation's own model calls cost, per model name (judges, G-Eval, CONNER's LM)
        "judge_usage": {name: m.usage.to_dict() for name, m in sorted(meters.items())},
    }
    records = []
    for i, it in enumerate(items):
        rec = dict(it.record)
        rec.update(it.sample.to_dict())
        rec["output"] = it.raw
        rec.pop("answer", None)
        rec["answer"] = it.answer.to_dict()  # type: ignore[union-attr]
        rec["judgements"] = [j for run in runs for j in run.judgements[i]]
        rec["scores"] = {k: v for run in runs for k, v in run.scores[i].items()}
        records.append(rec)
    return body, records


def _metering_ready(judge: Any, meters: dict[str, Any]) -> Any:
    """A judge given ready (``vericite run``'s) that holds its model itself (``backend`` among its own
    attributes, as the LLM judges do) has its calls counted under its model's name too. A judge without a
    language model of its own is not counted: its model then has no entry here, never a zero."""
    import contextlib

    from ..models.usage import UsageMeter, metering

    backend = vars(judge).get("backend") if judge is not None and hasattr(judge, "__dict__") else None
    if backend is None or not callable(getattr(backend, "identity", None)):  # no language model of its own
        return contextlib.nullcontext()
    name = backend.identity().name
    return metering(judge, meters.setdefault(name, UsageMeter()))
