"""``generate``, ``evaluate`` and ``judge-eval`` on a pool of workers (``--ray auto|ADDRESS --workers N``; threads
for ``generate --concurrency N``), with the files of a local run.

Generation: the questions still to answer go in batches to the workers, each of which built the method once
(``build_method``, its own usage meter, and what the driver's ``check_samples`` kept that the answers read, shipped
to it: a ``SamplesPrepared`` method's, conner-knowledge's few-shot pools) and answers a batch sample by sample, as
the local loop does; a worker returns one outcome per sample (the record with its ``usage``, or the model call's
error). The driver writes each finished batch to ``OUT/.ray-calls.jsonl`` at once (fsynced), then the outcomes in
the order of the questions into
``samples.jsonl`` / ``errors.jsonl``, with the local loop's rules (three failed calls in a row stop the run, the
failures allowed, the summary), so ``samples.jsonl`` is byte for byte a local run's. ``--resume`` after a killed
driver takes the answers of ``.ray-calls.jsonl`` whose samples are not in ``samples.jsonl`` yet (a driver killed
while writing a batch's samples leaves part of that batch there) and sends only the other samples, in batches cut
anew: nothing is lost, nothing answered twice. Ctrl-C (threads, ``--concurrency``, or Ray) checkpoints the batches
the workers had finished that the driver had not written yet (``distributed.keep_finished``, evaluate's and
judge-eval's too) and waits for none in flight. Progress: the
pool is opened with a step board (``distributed.StepBoard``) to which each worker reports the question it is on and
the steps a ``StepShowing`` method names (:meth:`GenerationWorker.report_steps_to`); the driver reads it every
:data:`STEP_POLL_S` and its progress line names the questions in flight with their steps (:func:`showing_steps`), as
a local run's names its one.

Evaluation: the answers not in the evaluation's checkpoint (``OUT/.evaluate-answers.jsonl``) go in batches to the
workers, each an :class:`AnswerWorker` (the judges loaded once, the task's suite built once), which score each answer
alone as the local evaluate does and send back its checkpoint line; the driver writes each line as it comes back and
scores the corpus from the checkpointed judgements (``evaluate.answer_scoring.score_answers_on_pool``), so the files and
``--resume`` (its settings check included) are a local evaluate's; on Ctrl-C the lines of the batches the workers had
finished that the driver had not written yet are written first.

judge-eval: the judge is ``PoolJudge`` (``runs/distributed_judge.py``, re-exported here), which splits each
call's pairs over the workers, each of which loaded the judge once.

The call cache: each worker opens the SQLite call cache of its own machine (WAL journal, busy timeout), so the
workers of one machine share one cache and write it safely at once; nothing is merged between machines.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import hashlib
import json
import threading
from pathlib import Path
from typing import Any, Callable, Iterator, Sequence

from ..distributed import Checkpoint, Pool, keep_finished, open_pool
from ..errors import BackendError
from ..types import Sample
# the judge side (judge-eval's PoolJudge), its names re-exported here
from .distributed_judge import JudgeWorker, PoolJudge, judge_settings, pool_judge  # noqa: F401

#: samples per batch sent to a worker (generation): small, so a killed driver loses little and workers stay busy
GEN_BATCH = 4


def batch_key(prefix: str, material: Any) -> str:
    return f"{prefix}:" + hashlib.sha256(json.dumps(material, sort_keys=True, ensure_ascii=False, default=str).encode("utf-8")).hexdigest()[:32]


# --------------------------------------------------------------------------- generation


class GenerationWorker:
    """Built once in a worker: the method of ``cfg`` with its own usage meter; ``answer(samples)`` gives one
    outcome per sample, ``{"id", "record"}`` or ``{"id", "error"}`` (a model call that failed; with ``kind`` when what
    failed was a plugin's component, the PluginError's kind). ``close()`` closes what it built: the method (its graph
    store) and the models the method loaded (a judge's own model, the method's model with Ray), not the backend
    ``backend_factory`` gives (the shared backend of threads: its run closes it)."""

    def __init__(self, cfg: Any, backend_factory: Callable[[], Any] | None = None, prepared: Any = None) -> None:
        from ..models.usage import UsageMeter
        from ..protocols import SamplesPrepared
        from .loop import build_method

        self.meter = UsageMeter()
        self.loaded: list[Any] = []  # the models build_method loaded for this worker
        self.method = build_method(cfg, meter=self.meter, backend=backend_factory() if backend_factory else None, loaded=self.loaded)
        if prepared is not None and isinstance(self.method, SamplesPrepared):  # what the driver's check_samples kept
            self.method.use_prepared(prepared)
        self.report: Callable[[str, str | None], None] | None = None

    def close(self) -> None:
        close_worker([self.method], self.loaded)
        self.loaded = []

    def report_steps_to(self, report: Callable[[str, str | None], None]) -> None:
        """The pool's step board (``distributed.StepBoard``): each sample is reported when it starts (step ``""``),
        at each step a ``StepShowing`` method names (VTG: ``"sentence 2, trial 1"``), and when it is done (None), so
        the driver's progress names the questions in flight and their steps, as a local run's does."""
        from ..protocols import StepShowing

        self.report = report
        if isinstance(self.method, StepShowing):
            self.method.show_steps(self._step)

    _now: str | None = None  # the sample being answered

    def answer(self, samples: Sequence[Sample]) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        for sample in samples:
            self._started(sample.id)
            before = self.meter.usage
            try:
                record = self.method.answer(sample)
            except BackendError as e:
                out.append({"id": sample.id, "error": str(e), **({"kind": e.kind} if getattr(e, "kind", None) else {})})  # what failed
                continue
            finally:
                self._started(None)
            used = self.meter.since(before)
            if used.calls or "usage" not in record:
                record["usage"] = used.to_dict()
            out.append({"id": sample.id, "record": record})
        return out

    def _step(self, step: str) -> None:
        if self.report is not None and self._now is not None:
            self.report(self._now, str(step))

    def _started(self, sample_id: str | None) -> None:
        if self.report is not None and self._now is not None:
            self.report(self._now, None)
        self._now = sample_id
        if self.report is not None and sample_id is not None:
            self.report(sample_id, "")


def close_worker(objects: Sequence[Any], models: Sequence[Any]) -> None:
    """What a pool's worker built, closed: ``models.close_all`` (``objects``, then the ``models`` loaded for them)."""
    from ..models import close_all

    close_all(objects, models)


def _generation_worker(cfg: Any, backend_factory: Callable[[], Any] | None = None, prepared: Any = None) -> GenerationWorker:
    return GenerationWorker(cfg, backend_factory, prepared)


def generate_pooled(
    cfg: Any,
    out: str | Path,
    *,
    ray: str | None,
    workers: int,
    resume: bool = False,
    progress: bool = True,
    batch_size: int = GEN_BATCH,
    samples: list[Sample] | None = None,
    backend_factory: Callable[[], Any] | None = None,
    max_consecutive_failures: int = 3,
) -> dict[str, Any]:
    """``vericite generate`` with ``workers`` workers: Ray actors at ``ray`` (``auto`` or an address), else
    threads (``--concurrency``). ``samples``: the questions instead of ``cfg``'s dataset; ``backend_factory``:
    builds the model each worker uses instead of ``cfg.model`` (tests: a fake). Same manifest, files and errors as
    :func:`~vericite.runs.loop.generate_run`."""
    from ..models import Closing
    from ..progress import progress_bar
    from ..protocols import Closeable, ManifestUpgrading, ProgressShowing, SamplesPrepared
    from .loop import build_method, check_failures, check_samples, check_same_questions, close_after_run, in_a_row, kept_options, questions_of, recorded_config, resumed_config, summarise
    from .rundir import RunDir

    samples = questions_of(cfg, out, samples)
    shared = None
    if ray is None and backend_factory is None:  # threads: one backend (its HTTP client, its cache) for all of them,
        from ..models import load_model, model_options  # each worker metering its own calls

        shared = load_model(cfg.model, **model_options(cfg))
        backend_factory = lambda: shared  # noqa: E731
    built = resumed_config(cfg, out, resume)  # the method's options, with those a resumed folder sets; cfg is recorded
    driver_models: list[Any] = []  # the models the driver's copy loaded itself (its judge's): closed with it
    method = build_method(built, backend=backend_factory() if backend_factory else None, loaded=driver_models)  # the driver's: its manifest and sample checks (models load lazily)
    if isinstance(method, ProgressShowing):
        method.show_progress(progress)
    prepared = None  # what the driver's check_samples kept that the answers read, shipped to each worker's method
    try:
        check_samples(method, samples, cfg)
        if isinstance(method, SamplesPrepared):
            prepared = method.prepared()
        header: dict[str, Any] = {"kind": "generate", "config": recorded_config(cfg, out, resume)}
        header.update((k, v) for k, v in method.manifest().items() if k not in header)
        header["n_samples"] = len(samples)
    finally:
        # the driver's method is done with: a close that fails does not stop the run
        close_after_run(Closing([method], driver_models), "of the driver's copy, before the run; the run goes on")

    same_questions = lambda run: check_same_questions(run, samples) if run.done_ids else None  # noqa: E731
    upgrade = method.upgrade_manifest if isinstance(method, ManifestUpgrading) else None
    with RunDir.open(out, header, resume=resume, defaults=cfg.record_defaults(), check=same_questions, upgrade=upgrade) as run:
        note = kept_options(cfg, header["config"], out)
        if note:
            from ..progress import warn

            warn(note)
        todo = [s for s in samples if s.id not in run.done_ids]
        ck = Checkpoint(run.path, resume=resume)
        # outcomes of samples checkpointed by an earlier driver, whatever batch they were in
        earlier: dict[str, dict[str, Any]] = {}
        for key in ck.keys():
            for o in ck.get(key) or []:
                if "record" in o and str(o["id"]) not in run.done_ids:
                    earlier[str(o["id"])] = o
        outcomes: dict[str, dict[str, Any]] = dict(earlier)
        # the batches are cut from the samples not answered yet: a driver killed while writing a batch's samples
        # leaves the rest of that batch checkpointed, and a batch cut from ``todo`` would ask them again
        ask = [s for s in todo if s.id not in earlier]
        batches = [ask[i : i + batch_size] for i in range(0, len(ask), batch_size)]
        send = [(batch_key("generate", [s.id for s in b]), b) for b in batches]
        failures = consecutive = 0
        last_error = ""
        kinds: set[str | None] = set()  # what failed (runs/loop.py's check_failures words its message by it)
        next_i = 0

        def flush(advance: Callable[..., None]) -> None:
            nonlocal next_i, failures, consecutive, last_error
            while next_i < len(todo) and todo[next_i].id in outcomes:
                o = outcomes.pop(todo[next_i].id)
                next_i += 1
                if "error" in o:
                    failures += 1
                    consecutive += 1
                    last_error = str(o["error"])
                    kinds.add(o.get("kind"))
                    run.fail(str(o["id"]), last_error)
                    if consecutive >= max_consecutive_failures:
                        summarise(run, failures, samples, method)
                        raise BackendError(f"{last_error} ({in_a_row(consecutive, o.get('kind'))}; finished samples are kept, rerun with --resume)")
                else:
                    consecutive = 0
                    run.append(o["record"])
                advance()

        pool = _open(functools.partial(_generation_worker, built, backend_factory, prepared), workers, ray, steps=progress) if send else None
        try:
            with progress_bar(len(samples), "generating", enabled=progress, completed=len(samples) - len(todo)) as advance:
                flush(advance)
                if pool is not None:
                    order = {s.id: i for i, s in enumerate(todo)}
                    with showing_steps(pool, advance, order, lambda sid: sid in outcomes or order[sid] < next_i, enabled=progress):
                        try:
                            for key, result in pool.map("answer", send):
                                ck.put(key, result)
                                for o in result:
                                    outcomes[str(o["id"])] = o
                                flush(advance)
                        except KeyboardInterrupt:
                            keep_finished(pool, ck.put, ck.__contains__)
                            raise
        finally:
            if pool is not None:
                pool.close()
            if shared is not None and isinstance(shared, Closeable):
                close_after_run(shared)
        manifest = summarise(run, failures, samples, method)
    check_failures(manifest, cfg.max_failures, last_error, kinds)
    return manifest


def _open(factory: Callable[[], Any], workers: int, ray: str | None, *, steps: bool = False) -> Pool:
    return open_pool(factory, workers, ray, steps=steps)


#: seconds between two readings of the workers' steps for the progress line
STEP_POLL_S = 1.0
#: questions in flight named on the progress line, the others counted
STEPS_SHOWN = 4


def steps_label(steps: dict[str, str], order: dict[str, int], done: Callable[[str], bool]) -> str:
    """The questions in flight, in the order of the questions, each with the step its worker last reported:
    ``sample q3, sentence 2, trial 1; sample q7, evidence finder ...``, at most :data:`STEPS_SHOWN` of them named
    (``and N more``). A question whose answer came back (``done``) is left out, a worker's word being later than
    the driver's knowledge at times."""
    live = sorted((sid for sid in steps if sid in order and not done(sid)), key=order.__getitem__)
    named = [f"sample {sid}" + (f", {steps[sid]}" if steps[sid] else "") for sid in live[:STEPS_SHOWN]]
    more = len(live) - len(named)
    return "; ".join(named) + (f"; and {more} more" if more > 0 else "")


@contextlib.contextmanager
def showing_steps(pool: Any, advance: Any, order: dict[str, int], done: Callable[[str], bool], *, enabled: bool = True) -> Iterator[None]:
    """While the batches run: a thread that reads the workers' steps (``pool.steps()``) every :data:`STEP_POLL_S`
    and names them on the progress line (``advance.running``), as a local run names its one question. A board that
    does not answer three times in a row is given up (the line then counts questions only); nothing of it touches
    the answers."""
    read = getattr(pool, "steps", None)
    if not enabled or not callable(read):
        yield
        return
    stop = threading.Event()

    def poll() -> None:
        misses = 0
        while not stop.wait(STEP_POLL_S):
            try:
                steps = read()
            except Exception:  # noqa: BLE001 - the progress line's steps only
                steps = None
            if steps is None:
                misses += 1
                if misses >= 3:
                    return
                continue
            misses = 0
            label = steps_label(steps, order, done)
            if label:
                advance.running(label)

    thread = threading.Thread(target=poll, name="vericite-steps", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()


# --------------------------------------------------------------------------- evaluation, answer by answer


class AnswerWorker:
    """Built once in a worker for ``evaluate --ray``: the evaluation's judges (``cfg``'s, loaded here with their
    own usage meters) and ``task``'s suite (the task as the driver prepared it); ``score(batch)`` scores each
    ``(index, sample, parsed answer)`` of the batch alone with the judged families, as the local evaluate does
    (``evaluate.answer_scoring.score_one``), and gives each answer's checkpoint line (``evaluate/checkpoint.py``), which
    the driver writes; ``close()`` closes what it built."""

    def __init__(self, cfg: Any, task: Any) -> None:
        from ..evaluate.answer_scoring import judged_parts
        from ..evaluate.pipeline import build_context, judge_spec
        from ..judges import load_judge

        self.meters: dict[str, Any] = {}
        self.loaded: list[Any] = []  # the models loaded for this worker, each once (close())
        ctx = build_context(cfg, None, self.meters)
        load = ctx.load_model

        def load_tracked(name: str) -> Any:
            backend = load(name)
            if not any(backend is b for b in self.loaded):
                self.loaded.append(backend)
            return backend

        ctx = dataclasses.replace(ctx, load_model=load_tracked)
        judge = load_judge(judge_spec(cfg, task), ctx=ctx) if task.judge_purposes else None
        suite = list(task.suite(cfg, judge=judge, ctx=ctx))
        self.built = [judge, *suite]
        self.memo: dict[str, Any] = {}
        self.fresh: dict[str, Any] = {}
        self.parts = judged_parts(suite, self.memo, self.fresh)

    def score(self, batch: Sequence[tuple[int, Sample, Any]]) -> list[dict[str, Any]]:
        from ..evaluate.checkpoint import answer_line
        from ..evaluate.answer_scoring import score_one

        lines = []
        for index, sample, answer in batch:
            self.fresh.clear()
            scores, judgements, usage = score_one(self.parts, sample, answer, self.meters)
            lines.append(answer_line(index, sample.id, self.fresh, scores, judgements, usage))
        return lines

    def close(self) -> None:
        """Close the judge and the suite's parts that have ``close()``, and the models loaded for them."""
        close_worker([o for o in self.built if o is not None], self.loaded)
        self.built, self.loaded = [], []


def _answer_worker(cfg: Any, task: Any) -> AnswerWorker:
    return AnswerWorker(cfg, task)


def answer_pool(cfg: Any, *, ray: str | None, workers: int) -> Callable[[Any], Pool]:
    """What ``evaluate_items(workers=...)`` opens once the task is prepared: ``workers`` Ray actors at ``ray`` (threads
    without it), each an :class:`AnswerWorker` of ``cfg`` and that task."""
    return lambda task: open_pool(functools.partial(_answer_worker, cfg, task), workers, ray)
