"""``vericite run CONFIG``: generate + evaluate in one folder, and the papers' experiments as levels.

Layout of the run folder::

    OUT/results.json          corpus numbers of the baseline level, plus "experiments" with every level's
    OUT/samples.jsonl         the baseline level's evaluated answers (what `vericite report` shows)
    OUT/level-<x>/            one generation run per level (manifest.json, samples.jsonl, errors.jsonl)
    OUT/level-<x>/eval/       that level's evaluation (results.json, samples.jsonl)

A run without an experiment has a single level called ``base``. Each level's generation is resumable, and model
calls go through the cache, so rerunning an interrupted ``vericite run ... --resume`` costs only what is left: a
level whose evaluation finished with the same evaluation settings and answers (``level-<x>/eval/.evaluate-answers.jsonl``'s
first line; with the same bootstrap) is read back, not evaluated again; a level cut while it was evaluated (or
whose bootstrap changed) goes on from its checkpoint
(``evaluate/checkpoint.py``); a level whose evaluation settings changed (another judge, other task options) is
evaluated again. A level's generation is continued only with the settings and method its manifest records
(``RunDir``: another method version, prompt file or model is one line, the run stopped).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import ValidationError

from ..errors import DataError, VericiteError, validation_message
from ..progress import warn
from ..totals import token_totals
from ..types import Usage
from .config import RunConfig, build_config


def load_run_config(path: str | Path, overrides: dict[str, Any]) -> RunConfig:
    """The config of a YAML file (flat keys, as in configs/, or ``method`` + ``method_args``), with the flags
    given (``overrides``; None: not given) over it."""
    p = Path(path)
    if not p.is_file():
        raise DataError(f"config file not found: {p}")
    try:
        data = yaml.safe_load(p.read_text(encoding="utf-8")) or {}
    except yaml.YAMLError as e:
        raise DataError(f"{p}: not valid YAML ({str(e).splitlines()[0]})") from None
    if not isinstance(data, dict):
        raise DataError(f"{p}: expected a mapping of options")
    try:
        return with_judge(build_config(RunConfig, data, overrides), data.get("judge", RunConfig.model_fields["judge"].default), overrides.get("judge"))
    except ValidationError as e:
        raise DataError(f"{p}: {validation_message(e)}") from None
    except ValueError as e:  # an option given twice
        raise DataError(f"{p}: option {e}") from None


#: the method options that name a judge of the generation (VTG's verifiers, rerank's)
GENERATION_JUDGES = ("verifier_judge", "rerank_judge")


def with_judge(cfg: RunConfig, config_judge: str, judge: str | None) -> RunConfig:
    """``--judge`` overrides the config's judge, and a generation judge of ``method_args`` that names the same
    judge (configs/vtg-*.yaml verify with the judge that scores): ``vericite run configs/vtg-ablation.yaml --model
    M --judge llm:M`` has M's verifiers, not the config's model's."""
    if judge is None:
        return cfg
    same = {k: judge for k in GENERATION_JUDGES if cfg.method_args.get(k) is not None and cfg.method_args.get(k) == config_judge}
    if not same:
        return cfg
    out = cfg.model_copy(update={"method_args": {**cfg.method_args, **same}})
    out.method_options()
    return out


def run_config(cfg: RunConfig, out: str | Path, *, resume: bool = False, progress: bool = True, backend: Any = None, judge: Any = None) -> dict[str, Any]:
    """Generate and evaluate every level into ``out`` (locked against a second writer while it runs)."""
    from ..outputs import PathLock, check_out_dir
    from ..runs.rundir import LOCK

    out = check_out_dir(out)
    if out.exists() and (out / "results.json").exists() and not resume:
        raise VericiteError(f"{out} already holds a run: pass --resume to continue it, or choose another --out")
    out.mkdir(parents=True, exist_ok=True)
    with PathLock(out / LOCK, f"run folder {out}"):
        return _run_levels(cfg, out, resume, progress, backend, judge)


def _level_generation(gen_cfg: Any, exp: Any, level: Any) -> Any:
    """The generation of ``level``: the config's, with what the experiment's level sets (a GenerationVarying
    experiment: VTG's sweeps and ablations); its method options are checked when the method is built."""
    from ..protocols import GenerationVarying

    if exp is None or not isinstance(exp, GenerationVarying):
        return gen_cfg
    update = exp.generation_at(level, dict(gen_cfg.method_args))
    return gen_cfg.model_copy(update=update) if update else gen_cfg


def _run_levels(cfg: RunConfig, out: Path, resume: bool, progress: bool, backend: Any, judge: Any) -> dict[str, Any]:
    from ..evaluate import evaluate_items, load_task
    from ..evaluate.pipeline import ignored_note, ignored_settings
    from ..registry import create
    from .loop import generate_run, load_questions
    from ..protocols import CorpusPreparing, GenerationVarying
    from .results import run_metadata, write_evaluation

    samples, dropped = load_questions(cfg)  # each id once (a repeated one left out, said on stderr)
    if cfg.limit:
        samples = samples[: cfg.limit]
    exp = create("experiments", cfg.experiment) if cfg.experiment else None
    levels: list[Any] = list(cfg.levels or exp.levels) if exp else ["base"]

    gen_cfg = cfg.generation()
    # every level's generation and its method's options, checked before any model loads (a bad level: one line now)
    level_gens = {str(level): _level_generation(gen_cfg, exp, level) for level in levels}
    for g in level_gens.values():
        g.checked_method_options()
    # what a level's generation is warned about (its method's notes: vtg given k with a store), said once per
    # distinct line over the levels
    for said in dict.fromkeys(n for g in level_gens.values() for n in g.method_notes()):
        warn(said)
    eval_cfg = cfg.evaluation()  # every model of the run: the same server, limits, cache
    config = cfg.record()
    task = load_task(eval_cfg.task)
    ignored = ignored_note(ignored_settings(cfg, task), task)  # a config's evidence_index for kalma: said, not an error
    if ignored:
        warn(ignored)
    preload = getattr(task, "preload", None)
    if callable(preload):  # a model the evaluation loads late (CONNER's relevance model): one line now, not after generating
        from ..registry import BuildContext
        from ..models import model_options

        preload(eval_cfg, BuildContext(**model_options(eval_cfg)))
    if backend is None:
        from ..models import load_model, model_options

        backend = load_model(cfg.model, **model_options(cfg))
    if judge is None:
        judge = run_judge(cfg.judge or "none", eval_cfg, cfg.model, backend)

    rows: list[dict[str, Any]] = []
    judge_usage: dict[str, Usage] = {}  # the levels' evaluations' own model calls, summed by model name
    base: tuple[dict[str, Any], list[dict[str, Any]], dict[str, Any]] | None = None
    for level in levels:
        if exp is not None:
            level_samples = exp.samples_at(samples, level, cfg.seed, levels=levels)
            skipped = {"n": level_samples.n_skipped, "reason": level_samples.skip_reason}
        else:
            level_samples, skipped = list(samples), {"n": 0, "reason": ""}
        if not level_samples:
            raise VericiteError(f"no question of {cfg.dataset!r} is eligible for {cfg.experiment} at level {level} ({skipped['reason']})")
        sub = out / f"level-{level}"
        manifest = generate_run(level_gens[str(level)], sub, resume=resume and (sub / "manifest.json").exists(), samples=list(level_samples), backend=backend, progress=progress)
        items = level_items(sub / "samples.jsonl", task)
        if isinstance(task, CorpusPreparing):  # the checkpoint records the evaluation the task resolved to
            task.prepare([it.sample for it in items])
        finished = finished_evaluation(sub, eval_cfg, task, judge, resume, samples=[it.sample for it in items], items=items)
        if isinstance(finished, tuple):  # evaluated before, with this configuration: read back, nothing judged
            level_results, evaluated = finished
            n_items = int(level_results.get("counts", {}).get("samples", len(evaluated)))
        else:
            # the answering model serves any other role given its name (G-Eval with the same model): loaded once
            body, evaluated = evaluate_items(items, eval_cfg, task=task, judge=judge, models={cfg.model: backend}, progress=progress, checkpoint=finished)
            level_results = run_metadata("evaluate", {**config, "level": level}, manifest)
            level_results.update(body)
            level_results["counts"]["failed_calls"] = manifest.get("summary", {}).get("failed_calls", 0)
            level_results["tokens"] = manifest.get("summary", {}).get("tokens")
            write_evaluation(sub / "eval", level_results, evaluated, [])
            n_items = len(items)
        for name, used in (level_results.get("judge_usage") or {}).items():
            judge_usage[name] = judge_usage.get(name, Usage()) + Usage.from_dict(used)
        row = {"level": level, "metrics": level_results["metrics"], "n": n_items, "skipped": skipped}
        if isinstance(exp, GenerationVarying) and (changed := exp.generation_at(level, dict(gen_cfg.method_args))):
            row["generation"] = changed  # what the level ran: its method and options
        rows.append(row)
        if base is None:
            base = (level_results, evaluated, manifest)

    assert base is not None
    results, evaluated, manifest = base
    results = dict(results)
    results["kind"] = "run"
    results["config"] = config
    if exp is not None:
        results["experiments"] = {exp.name: {"x": exp.x_label, "section": exp.section, **exp.presentation(), "rows": rows}}
    results["tokens"] = token_totals(read_manifest(out / f"level-{level}").get("summary", {}).get("tokens") for level in levels)
    results["judge_usage"] = {name: u.to_dict() for name, u in sorted(judge_usage.items())}
    results["counts"] = {**results.get("counts", {}), "duplicate_ids": len(dropped)}
    write_evaluation(out, results, evaluated, [])
    return results


def level_items(path: Path, task: Any) -> list[Any]:
    """The answers of a level's ``samples.jsonl`` to evaluate: each id once, the first line of an id kept (the
    rule of ``evaluate.read_answers``; a folder written before the dataset's repeated ids were left out may hold
    one twice), a record the task cannot read left out."""
    from ..evaluate import AnswerItem, item_from_record
    from ..jsonl import read_appended

    items: list[Any] = []
    seen: set[str] = set()
    for n, r in enumerate(read_appended(path), 1):
        it = item_from_record(r, n, task)
        if isinstance(it, AnswerItem) and it.sample.id not in seen:
            seen.add(it.sample.id)
            items.append(it)
    return items


def run_judge(spec: str, eval_cfg: Any, model: str, backend: Any) -> Any:
    """The run's judge (``spec``), built with the evaluation's settings; a judge of the answering model
    (``llm:<model>``, ``llm:<model>@2``, ``llm4:<model>``...) gets the run's ``backend``, not a second copy of the
    weights (as every other role naming that model does: ``evaluate_items``' ``models``)."""
    import dataclasses

    from ..judges import load_judge
    from ..models import load_model, model_options
    from ..registry import BuildContext

    base = BuildContext(**model_options(eval_cfg))

    def load(name: str) -> Any:
        return backend if name.strip() == model.strip() else load_model(name, ctx=base)

    return load_judge(spec, ctx=dataclasses.replace(base, load_model=load))


def finished_evaluation(level: Path, eval_cfg: Any, task: Any, judge: Any, resume: bool, samples: Any = None, items: Any = None) -> Any:
    """``level``'s evaluation: (results, records) when ``resume`` and it finished with the settings, bootstrap and
    answers of now; else its checkpoint (``AnswerCheckpoint``; its results.json removed first: it is not this
    evaluation's), continued when ``resume`` and it was made with the same settings and its answers scored are
    among the answers of now unchanged (``items``: the level's answers read; more answers since: they are scored;
    a finished level whose bootstrap changed: no judge asked, the corpus numbers computed again), started again
    otherwise (an answer scored changed or gone: the level's answers are others). A checkpoint of the previous
    header is compared as ``evaluate.checkpoint.upgrade`` reads it, its task name resolved over the level's
    answers (``samples``, else read)."""
    from ..evaluate.checkpoint import CORPUS_ONLY, NAME, VERSION, AnswerCheckpoint, fingerprint, legacy_note, read_checkpoint, settings_of, upgrade
    from .results import resolver
    from ..paths import file_sha256
    from ..jsonl import read_appended
    from ..metrics.judging import judge_id

    folder = level / "eval"
    header = {"checkpoint": VERSION, **fingerprint(eval_cfg, task, file_sha256(level / "samples.jsonl"), {"judge_id": judge_id(judge) if judge is not None else None})}
    # a damaged checkpoint is one line (read_checkpoint), not a level silently evaluated again
    way_out = "delete it to evaluate this level's answers again (the rest of the run resumes)"
    old = read_checkpoint(folder / NAME, way_out)[0] if resume and (folder / NAME).exists() else None
    resolve = resolver(level / "samples.jsonl", samples)
    old, predates = upgrade(old, header, resolve) if old is not None else (None, False)
    same = old is not None and settings_of(old, strict=items is None) == settings_of(header, strict=items is None)
    if same and old.get("input_sha256") == header["input_sha256"] and (folder / "results.json").is_file():  # type: ignore[union-attr]
        import json

        try:
            results = json.loads((folder / "results.json").read_text(encoding="utf-8"))
            records = list(read_appended(folder / "samples.jsonl"))
        except (OSError, ValueError):
            results = None  # unreadable: its corpus scored again (from the checkpoint)
        bootstrap = {k: getattr(eval_cfg, k) for k in CORPUS_ONLY}
        if isinstance(results, dict) and {k: (results.get("config") or {}).get(k) for k in CORPUS_ONLY} == bootstrap:
            if predates:
                legacy_note(folder / NAME, header)
            return results, records
    (folder / "results.json").unlink(missing_ok=True)
    given = None if items is None else [(it.sample.id, it.record) for it in items]
    return AnswerCheckpoint.open(
        folder, {k: v for k, v in header.items() if k != "checkpoint"}, resume=same, resolve=resolve, answers=given, input_file=level / "samples.jsonl", changed="restart"
    )


def read_manifest(folder: Path) -> dict[str, Any]:
    import json

    try:
        return json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
