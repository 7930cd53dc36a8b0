"""One generic run loop: any :class:`~vericite.protocols.Method` over any questions into a run folder.

:func:`run_method` owns what every method shares: the run folder (``RunDir``: its lock, resume, one fsynced
line per answered sample, ``errors.jsonl`` for the failed ones), failures (a model call that fails is written
to errors.jsonl and the run goes on; 3 in a row abort it; more than ``max_failures`` unanswered questions, or
all of them, end it ``incomplete`` with :class:`IncompleteRun`), progress (a plain line while a long sample is
still running, naming its step when the method is ``StepShowing``), usage metering, and the manifest with its summary. A method only answers a sample.

Usage: the loop gives the method's backends one :class:`~vericite.models.usage.UsageMeter` (see
:func:`build_method`) and writes, as each record's ``usage``, what the meter counted while that sample was
answered: ``prompt_tokens``, ``completion_tokens`` and ``calls``, over every model call the method made. The
summary totals the tokens; a method that is :class:`~vericite.protocols.Summarising` adds its own fields.

:func:`generate_run` is ``vericite generate``: a :class:`~vericite.runs.config.GenerateConfig` in, the
dataset loaded, the method built through ``registry.create("methods", ...)``, and the loop run.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from ..errors import BackendError, DataError, VericiteError
from ..models.usage import UsageMeter, metered
from ..protocols import DatasetReading, Demonstrating, ManifestUpgrading, Method, ProgressShowing, SampleChecking, StepShowing, Summarising
from ..totals import token_totals
from ..types import Sample

Record = dict[str, Any]


def allowed_failures(spec: str, n: int) -> int:
    """How many of ``n`` questions may go unanswered under ``--max-failures spec`` (a count or "P%")."""
    if spec.endswith("%"):
        share = float(spec[:-1])
        if not 0 <= share <= 100:
            raise ValueError(spec)
        return int(n * share / 100 + 1e-9)
    count = int(spec)
    if count < 0:
        raise ValueError(spec)
    return count


class IncompleteRun(VericiteError):
    """Model calls (or a plugin's component: a retriever, a graph ...) failed for more questions than
    ``--max-failures`` allows, or for all of them. The run folder
    keeps what was answered, its manifest says "incomplete", and ``--resume`` retries the failed questions."""

    exit_code = 1

    def __init__(self, message: str, manifest: dict[str, Any]) -> None:
        super().__init__(message)
        self.manifest = manifest


def run_method(
    method: Method,
    samples: Sequence[Sample],
    out: str | Path,
    *,
    config: Mapping[str, Any],
    meter: UsageMeter | None = None,
    resume: bool = False,
    progress: bool = True,
    on_record: Callable[[Record], None] | None = None,
    max_failures: str = "0",
    max_consecutive_failures: int = 3,
    kind: str = "generate",
    defaults: Mapping[str, Any] | None = None,
    note: str | None = None,
) -> dict[str, Any]:
    """Answer every sample of ``samples`` not answered yet in ``out`` with ``method``. ``config`` is recorded
    in the manifest (a resumed run must have the same, but for the keys ``RunDir`` lets change, and an option the
    folder's config lacks set at its default, ``defaults``); ``meter`` is
    the meter the method's backends report to (None: records keep the usage the method wrote). Returns the
    finished manifest; raises :class:`IncompleteRun` (after writing it) when more questions failed than
    ``max_failures`` allows, or all did. ``note``: a line said on stderr once the folder is open (a resume found
    the same run: :func:`kept_options`)."""
    from ..progress import progress_bar, warn
    from .rundir import RunDir

    header: dict[str, Any] = {"kind": kind, "config": dict(config)}
    header.update((k, v) for k, v in method.manifest().items() if k not in header)
    header["n_samples"] = len(samples)
    same_questions = lambda run: check_same_questions(run, samples) if run.done_ids else None  # noqa: E731
    upgrade = method.upgrade_manifest if isinstance(method, ManifestUpgrading) else None
    with RunDir.open(out, header, resume=resume, defaults=defaults, check=same_questions, upgrade=upgrade) as run:
        if note:
            warn(note)
        todo = [s for s in samples if s.id not in run.done_ids]
        failures = consecutive = 0
        last_error = ""
        kinds: set[str | None] = set()  # what failed: None for a model call, else the plugin's kind
        with progress_bar(len(samples), "generating", enabled=progress, completed=len(samples) - len(todo)) as advance:
            for sample in todo:
                advance.running(f"sample {sample.id}")
                if isinstance(method, StepShowing):  # e.g. VTG: "sample q17, sentence 2, trial 1 running for 65 s"
                    method.show_steps(lambda step, label=f"sample {sample.id}": advance.running(f"{label}, {step}"))
                before = meter.usage if meter is not None else None
                try:
                    record = method.answer(sample)
                except BackendError as e:
                    failures += 1
                    consecutive += 1
                    last_error = str(e)
                    kinds.add(failed_kind(e))
                    run.fail(sample.id, last_error)
                    if consecutive >= max_consecutive_failures:
                        summarise(run, failures, samples, method)
                        raise BackendError(f"{e} ({in_a_row(consecutive, failed_kind(e))}; finished samples are kept, rerun with --resume)") from None
                    advance()
                    continue
                consecutive = 0
                if meter is not None and before is not None:
                    used = meter.since(before)
                    if used.calls or "usage" not in record:
                        record["usage"] = used.to_dict()  # in place: a key the method wrote keeps its position
                run.append(record)
                if on_record:
                    on_record(record)
                advance()
        manifest = summarise(run, failures, samples, method)
    check_failures(manifest, max_failures, last_error, kinds)
    return manifest


#: the kinds whose failures are model calls ("N calls failed in a row"); a plain BackendError is a model call's
MODEL_CALL_KINDS = (None, "backend", "model", "judge")


def failed_kind(e: BaseException) -> str | None:
    """What failed, by its registry's word (a :class:`~vericite.errors.PluginError`'s ``kind``); None: a model call."""
    return getattr(e, "kind", None)


def in_a_row(n: int, kind: str | None) -> str:
    """The abort's words for ``n`` failures in a row of ``kind``: model calls as calls, any other component (a
    plugin's retriever, method, graph ...) by its name, whose failure cost each question its answer."""
    if kind in MODEL_CALL_KINDS:
        return f"{n} calls failed in a row"
    return f"the {kind} failed on {n} questions in a row"


def close_after_run(obj: Any, when: str = "after the run; its answers are written") -> None:
    """Close ``obj`` (a method, a shared model) after the run: its answers are written by then, so a close that
    fails (a plugin's ``close`` that raises: a ``PluginError`` naming it) is a warning on stderr, not the end of a
    run whose answers are all there (nor does it hide the error a run that failed is ending with). ``when``: what
    the warning says of the moment (the pooled run's driver closes its method before the run)."""
    try:
        obj.close()
    except BackendError as e:
        from ..progress import warn

        warn(f"warning: {e} (on close, {when})")


def check_same_questions(run: Any, samples: Sequence[Sample]) -> None:
    """A resumed run's answered ids must still ask the same questions: a dataset file edited or reordered in place
    (ids by position) would otherwise mix answers to other questions under the ids it skips."""
    now = {s.id: s.question for s in samples}
    for r in run.records():
        sid = str(r.get("id"))
        if sid in now and isinstance(r.get("question"), str) and r["question"] != now[sid]:
            raise VericiteError(
                f"cannot resume {run.path}: sample {sid} asked {r['question'][:60]!r} in the run, the dataset now asks "
                f"{now[sid][:60]!r} (the dataset changed since); use another --out"
            )


def check_failures(manifest: dict[str, Any], max_failures: str, last_error: str = "", kinds: Any = ()) -> None:
    """Raise ``IncompleteRun`` when the run's unanswered questions exceed ``max_failures`` or are all of them;
    ``kinds``: what failed in this run (:func:`failed_kind` of each failure), which the message is worded by."""
    s = manifest["summary"]
    missing, n = s["unanswered"], s["n_samples"]
    if not missing:
        return
    allowed = allowed_failures(max_failures, n)
    if missing < n and missing <= allowed:
        return
    kinds = set(kinds)
    if kinds <= set(MODEL_CALL_KINDS):  # model calls (and a run with no failure of its own: questions left unanswered before)
        why = "every model call failed" if missing == n else f"the model call failed for {missing} of {n} questions"
    elif len(kinds) == 1:  # one component that is not a model: said by its name
        why = f"the {next(iter(kinds))} failed for {'every question' if missing == n else f'{missing} of {n} questions'}"
    else:
        why = "every question failed" if missing == n else f"{missing} of {n} questions failed"
    why += f" (--max-failures {max_failures})" if missing < n else ""
    last = f"; last error: {last_error}" if last_error else ""
    raise IncompleteRun(f"run incomplete: {why}{last}; the failures are in errors.jsonl, rerun with --resume to retry them", manifest)


def summarise(run: Any, failures: int, samples: Sequence[Sample] | None = None, method: Any = None) -> dict[str, Any]:
    """Write the run's summary and final status into its manifest: "complete" when every question of
    ``samples`` has an answer, else "incomplete" (``unanswered`` says how many have none). A
    :class:`~vericite.protocols.Summarising` method adds its fields after the loop's own."""
    records = run.records()
    n_samples = len(samples) if samples is not None else len(records)
    unanswered = sum(1 for s in samples if s.id not in run.done_ids) if samples is not None else 0
    summary: dict[str, Any] = {
        "n_samples": n_samples,
        "n_done": len(records),
        "unanswered": unanswered,
        "failed_calls": failures,
        "tokens": token_totals(r.get("usage") for r in records),
    }
    if isinstance(method, Summarising):
        for key, value in method.summarise(records).items():
            summary.setdefault(key, value)
    run.finish(status="incomplete" if unanswered else "complete", summary=summary)
    return run.manifest


# --------------------------------------------------------------------------- vericite generate


def dataset_demonstration(spec: str, phrasing: str = "specific") -> str | None:
    """The demonstration the dataset ``spec`` supplies for ``phrasing`` (:class:`~vericite.protocols.Demonstrating`),
    or None: a file of questions, a name not registered (questions given directly) or a dataset without one."""
    from .. import registry

    name, _ = registry.datasets.split(spec)
    if spec.endswith(".jsonl") or Path(spec).is_file() or name not in registry.datasets:
        return None
    dataset = registry.create("datasets", spec)
    return dataset.demonstration(phrasing=phrasing) if isinstance(dataset, Demonstrating) else None


def build_method(cfg: Any, *, meter: UsageMeter | None = None, backend: Any = None, loaded: list[Any] | None = None, **objects: Any) -> Method:
    """The method of ``cfg`` (a GenerateConfig), built with ``registry.create("methods", "<method>:<model>")``:
    its options validated by its own model, ``seed`` the run's, ``demonstration`` (when the method has that
    option and it is unset) the dataset's, and every backend it gets (``backend``, or loaded through the build
    context) reporting to ``meter``. ``objects`` are ready objects for the factory (KaLMA's ``graph``).

    A model name is loaded once per method, whatever role names it: a judge of the method's own model
    (``--judge llm:<model>@2`` for VTG or rerank, whatever its prompt number) gets the method's backend (``backend``
    when given, under ``cfg.model``), not a second copy of the weights. Its calls then go through the same call
    cache and, on llama.cpp, the same KV cache, as ``llm:<model>`` always did. ``loaded``: a list that gets each
    model loaded here (not ``backend``), for a caller that closes them (``models.release``: a pool's worker)."""
    from ..models import model_loader
    from ..registry import BuildContext, create

    options = cfg.checked_method_options()
    if "demonstration" in options and options["demonstration"] is None:
        options["demonstration"] = dataset_demonstration(cfg.dataset, cfg.phrasing)
    ctx = BuildContext(threads=cfg.threads, cache=cfg.cache, base_url=cfg.base_url, timeout=cfg.timeout, retries=cfg.request_retries)
    load = model_loader(ctx)
    served: dict[str, Any] = {}  # model name -> the backend every role of this method that names it gets
    if backend is not None:
        objects["backend"] = served[cfg.model.strip()] = metered(backend, meter)

    def load_once(name: str) -> Any:
        key = name.strip()
        if key not in served:
            served[key] = metered(load(key), meter)
            if loaded is not None:
                loaded.append(served[key])
        return served[key]

    ctx = dataclasses.replace(ctx, load_model=load_once)
    return create("methods", f"{cfg.method}:{cfg.model}", ctx, seed=cfg.seed, **options, **objects)  # type: ignore[no-any-return]


def _folder_manifest(out: str | Path) -> dict[str, Any] | None:
    """The manifest of the folder at ``out``, or None when it has no readable one (``RunDir`` says so)."""
    import json

    from .rundir import MANIFEST

    path = Path(out) / MANIFEST
    try:
        old = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None
    except (OSError, ValueError):
        return None
    return old if isinstance(old, dict) else None


def _resumed_hook(cfg: Any) -> Any:
    from .config import method_options_model

    hook = getattr(method_options_model(cfg.method), "resumed_options", None)
    return hook if callable(hook) else None


def resumed_config(cfg: Any, out: str | Path, resume: bool) -> Any:
    """``cfg`` to build the method with when ``out`` is resumed: the options the folder's manifest sets where
    ``cfg`` leaves them unset, by the method's options model (``resumed_options``, ``protocols.MethodOptions``:
    VTG's ``repeat_overlap``, 1.0 for a folder written before it), so a run goes on as it began. Only the method is
    built with them: the config recorded and compared is :func:`recorded_config`'s. ``cfg`` itself when not
    resuming, or when the folder has no readable manifest (``RunDir`` says so)."""
    hook = _resumed_hook(cfg)
    old = _folder_manifest(out) if resume and hook else None
    if old is None:
        return cfg
    extra = hook(dict(cfg.method_args), old)
    return cfg.model_copy(update={"method_args": {**cfg.method_args, **extra}}) if extra else cfg


def recorded_config(cfg: Any, out: str | Path, resume: bool) -> dict[str, Any]:
    """``cfg.record()``, to record and to compare with a resumed folder's config: an option recorded only when
    given (``recorded_when_set``) that the folder's config does not hold is left out when its given value is the
    one the folder ran with (``resumed_options``), so giving it (``--method-arg repeat_overlap=1.0`` on a folder
    written before the option, or ``0.8`` on one written with that default) continues the folder as leaving it out
    does; another value still differs, and ``--resume`` refuses it. One the folder's config holds (it was given)
    and ``cfg`` leaves unset is the folder's, when the method keeps it on resume (``resumed_options`` sets it to
    that value): the folder goes on as it began, said in one line on stderr (:func:`kept_options`)."""
    config = cfg.record()
    hook = _resumed_hook(cfg)
    old = _folder_manifest(out) if resume and hook else None
    if old is None:
        return config
    from .config import method_options_model

    old_config = old.get("config") if isinstance(old.get("config"), dict) else {}
    kept = hook(dict(cfg.method_args), old)  # what the method is built with where cfg leaves an option unset
    for key in getattr(method_options_model(cfg.method), "recorded_when_set", ()):
        given = cfg.method_args.get(key)
        if given is None:
            if key in old_config and key not in config and key in kept and kept[key] == old_config[key]:
                config[key] = old_config[key]  # given to the folder, left out now: the folder's, as the method is built
            continue
        if key in old_config or key not in config:
            continue
        unset = {k: v for k, v in cfg.method_args.items() if k != key}
        if hook(unset, old).get(key) == given:
            del config[key]
    return config


def kept_options(cfg: Any, config: Mapping[str, Any], out: str | Path) -> str | None:
    """The line a resume of ``out`` says on stderr once the folder is found the same (``run_method``'s ``note``):
    which options it takes from the folder's config (:func:`recorded_config`: given to the folder, not to
    ``cfg``); None when none."""
    from .config import method_options_model

    keys = [k for k in getattr(method_options_model(cfg.method), "recorded_when_set", ()) if cfg.method_args.get(k) is None and k in config]
    return f"resuming {out} with the folder's " + ", ".join(f"{k}={_plain(config[k])}" for k in keys) if keys else None


def _plain(value: Any) -> str:
    """A config value as ``--method-arg`` gives it: true/false for a bool."""
    return str(value).lower() if isinstance(value, bool) else str(value)


def load_questions(cfg: Any) -> tuple[list[Sample], list[dict[str, Any]]]:
    """``cfg``'s dataset, each id once: a question whose id was met before is left out (the first is asked, as
    ``vericite evaluate`` keeps an answer's first line), said in one warning line on stderr; returns the questions
    and those left out (``{"where", "id", "reason"}``)."""
    from ..datasets import load_samples
    from ..datasets.duplicates import left_out_note

    dropped: list[dict[str, Any]] = []
    samples = load_samples(cfg.dataset, cfg.phrasing, cfg.data_path, dropped=dropped)
    if dropped:
        from ..progress import warn

        warn(left_out_note(dropped, cfg.dataset))
    return samples, dropped


def check_samples(method: Any, samples: Sequence[Sample], cfg: Any) -> None:
    """The method's checks of the run's questions (``SampleChecking``), a method that reads the whole dataset
    (``DatasetReading``) reading it as the run does: ``cfg``'s dataset, phrasing and ``data_path``, each id once,
    and its gold passages where they are for that data (``datasets.reference_file``)."""
    if isinstance(method, DatasetReading):
        from ..datasets import load_samples, reference_file

        method.read_dataset_with(lambda: load_samples(cfg.dataset, cfg.phrasing, cfg.data_path, dropped=[]), reference_file(cfg.dataset, cfg.data_path))
    if isinstance(method, SampleChecking):
        method.check_samples(samples, cfg.dataset)


def questions_of(cfg: Any, out: str | Path, samples: list[Sample] | None = None) -> list[Sample]:
    """What a generation run answers: ``samples``, else ``cfg``'s dataset (:func:`load_questions`: each id once),
    cut to ``cfg.limit``; ``--out`` is checked first (before a model is loaded), and a dataset with no question is
    one line."""
    from ..outputs import check_out_dir

    check_out_dir(out)
    if samples is None:
        samples = load_questions(cfg)[0]
    if cfg.limit:
        samples = samples[: cfg.limit]
    if not samples:
        raise DataError(f"dataset {cfg.dataset!r} has no questions")
    return samples


def generate_run(
    cfg: Any,
    out: str | Path,
    *,
    resume: bool = False,
    samples: list[Sample] | None = None,
    backend: Any | None = None,
    progress: bool = True,
    on_record: Callable[[Record], None] | None = None,
    max_consecutive_failures: int = 3,
    **objects: Any,
) -> dict[str, Any]:
    """Run ``cfg``'s method (a :class:`~vericite.runs.config.GenerateConfig`) over its dataset, or over
    ``samples``, into ``out``. ``backend``: a ready model instead of ``cfg.model``; ``objects``: ready objects
    for the method's factory (KaLMA's ``graph``). Returns the finished manifest; raises ``IncompleteRun``
    (after writing the manifest) when more questions failed than ``cfg.max_failures`` allows, or all did. On the way
    out (finished, failed or Ctrl-C) the method is closed, then the models it loaded (``models.close_all``, as a
    pool's worker closes its own); a ready ``backend`` is the caller's."""
    samples = questions_of(cfg, out, samples)
    config = recorded_config(cfg, out, resume)
    meter = UsageMeter()
    loaded: list[Any] = []  # the models built here (not ``backend``, the caller's): closed after the method
    method = build_method(resumed_config(cfg, out, resume), meter=meter, backend=backend, loaded=loaded, **objects)
    if isinstance(method, ProgressShowing):
        method.show_progress(progress)
    try:
        check_samples(method, samples, cfg)
        return run_method(
            method, samples, out, config=config, meter=meter, resume=resume, progress=progress, on_record=on_record,
            max_failures=cfg.max_failures, max_consecutive_failures=max_consecutive_failures, defaults=cfg.record_defaults(),
            note=kept_options(cfg, config, out),
        )
    finally:
        from ..models import Closing

        close_after_run(Closing([method], loaded))  # the method, then the models loaded for it, each once
