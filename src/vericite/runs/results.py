"""The files of an evaluation (``results.json``, ``samples.jsonl``, ``bad_lines.jsonl``; docs/results-format.md)
and what identifies it (``run_metadata``), and ``evaluate_file``: ``vericite evaluate`` from a JSONL file to
those files, for any task (``evaluate/``)."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any, Iterable

from .. import __version__, jsonl
from ..errors import DataError
from ..outputs import PathLock
from ..protocols import CorpusPreparing
from ..totals import token_totals
from .rundir import LOCK


def write_evaluation(out: str | Path, results: dict[str, Any], records: Iterable[dict[str, Any]], bad: list[dict[str, Any]]) -> Path:
    folder = Path(out)
    folder.mkdir(parents=True, exist_ok=True)
    jsonl.write_jsonl_atomic(folder / "samples.jsonl", records)
    jsonl.write_jsonl_atomic(folder / "bad_lines.jsonl", bad)
    jsonl.write_json_atomic(folder / "results.json", results)
    return folder / "results.json"


def run_metadata(kind: str, config: dict[str, Any], manifest: dict[str, Any] | None = None) -> dict[str, Any]:
    manifest = manifest or {}
    return {
        "kind": kind,
        "vericite_version": __version__,
        "created": time.strftime("%Y-%m-%dT%H:%M:%S"),
        "config": config,
        "seed": config.get("seed", 0),
        "model": manifest.get("model"),
        "prompt": manifest.get("prompt"),
        "generation": {k: manifest[k] for k in ("method", "parser", "knowledge_mode", "retriever", "params", "selection") if k in manifest} or None,
    }


def evaluate_file(
    input_path: str | Path, out: str | Path, cfg: Any, *, progress: bool = False, ray: str | None = None, workers: int = 2, resume: bool = False
) -> dict[str, Any]:
    """Evaluate the answers in ``input_path`` with ``cfg`` (an ``evaluate.EvaluateConfig``: its task, judge,
    settings) and write the evaluation into ``out``; returns results.json's content. ``--out`` is checked
    before anything is judged. Each answer is checkpointed as it is scored in ``out/.evaluate-answers.jsonl``
    (reused with ``resume`` when the evaluation is the same: task, judges, metric options, answers' file; else one
    line saying what differs). ``ray`` (``auto`` or a cluster's address): the answers are scored on ``workers`` Ray
    actors (``runs/distributed.py``'s ``AnswerWorker``), this process writing each answer's line as it comes back:
    the same checkpoint, the same files."""
    from .. import evaluate
    from ..outputs import check_out_dir

    check_out_dir(out)  # before judging: a bad --out is one line now, not a traceback after the work
    folder = Path(out)
    folder.mkdir(parents=True, exist_ok=True)
    # One writer per evaluation folder, as for run folders: a second evaluate into the same --out is refused in one
    # line (with the holder's pid) instead of both writing the files.
    with PathLock(folder / LOCK, f"evaluation folder {folder}"):
        return _evaluate_locked(input_path, folder, cfg, progress=progress, ray=ray, workers=workers, resume=resume)


def _evaluate_locked(input_path: str | Path, out: Path, cfg: Any, *, progress: bool, ray: str | None = None, workers: int = 2, resume: bool = False) -> dict[str, Any]:
    from .. import evaluate

    task = evaluate.load_task(cfg.task)
    read = evaluate.read_answers(input_path, task)
    if not read.items:
        if not read.bad:  # "[]", {"data": []}, an empty file or one of blank lines: nothing to read, nothing wrong in it
            raise DataError(f"{input_path}: no answer to evaluate (it holds no item)")
        raise DataError(f"{input_path}: no answer could be read ({len(read.bad)} bad lines; first: {read.bad[0]['reason']})")
    manifest = None
    sibling = evaluate.input_file(input_path).parent / "manifest.json"
    if sibling.is_file():
        try:
            manifest = json.loads(sibling.read_text(encoding="utf-8"))
        except json.JSONDecodeError:
            manifest = None
    if isinstance(task, CorpusPreparing):  # what the checkpoint records is the evaluation the task resolved to
        task.prepare([it.sample for it in read.items])
    checkpoint = answer_checkpoint(out, cfg, task, evaluate.input_file(input_path), resume=resume, resolve=resolver(input_path), items=read.items)
    pool = None
    if ray is not None:  # the answers not checkpointed yet are scored on Ray actors, their lines written here
        from .distributed import answer_pool

        pool = answer_pool(cfg, ray=ray, workers=workers)
    body, records = evaluate.evaluate_items(read.items, cfg, task=task, progress=progress, checkpoint=checkpoint, workers=pool)
    results = run_metadata("evaluate", {**cfg.model_dump(), "input": str(input_path)}, manifest)
    results.update(body)
    results["counts"]["bad_lines"] = len(read.bad)
    results["counts"]["duplicate_ids"] = read.duplicate_ids
    results["counts"]["invalid_utf8_lines"] = read.invalid_utf8["lines"]
    results["counts"]["invalid_utf8_bytes"] = read.invalid_utf8["bytes"]
    results["counts"]["failed_calls"] = (manifest or {}).get("summary", {}).get("failed_calls", 0)
    results["bad_lines"] = read.bad[:50]
    results["warnings"] = read.warnings[:50]
    results["tokens"] = token_totals(it.record.get("usage") for it in read.items)
    write_evaluation(out, results, records, read.bad)
    return results


def answer_checkpoint(out: Path, cfg: Any, task: Any, answers: Path, *, resume: bool, resolve: Any = None, items: Any = None, **extra: Any) -> Any:
    """The per-answer checkpoint of an evaluation into ``out`` of the answers in ``answers`` (``evaluate/checkpoint.py``):
    with ``resume`` the one there, when it records the same evaluation (else one line saying what differs) and
    each answer it scored is among ``items`` (the answers read) unchanged: the answers added since are scored, an
    answer scored that changed or is gone is one line naming it; ``resolve``: a task name -> the evaluation it
    resolves to over these answers (for an older checkpoint's)."""
    from ..evaluate.checkpoint import AnswerCheckpoint, fingerprint
    from ..paths import file_sha256

    given = None if items is None else [(it.sample.id, it.record) for it in items]
    return AnswerCheckpoint.open(out, fingerprint(cfg, task, file_sha256(answers), extra), resume=resume, resolve=resolve, answers=given, input_file=answers)


def resolver(input_path: str | Path, samples: Any = None) -> Any:
    """``resolve(name)`` for an older checkpoint's task name: the evaluation that task resolves to over the answers
    of ``input_path`` (read as that task reads them; ``samples``: already read), as ``evaluate`` resolves it
    (``evaluate.checkpoint.task_name``); None for a name that is no task now."""
    from .. import evaluate
    from ..errors import VericiteError
    from ..evaluate.checkpoint import task_name

    def resolve(name: str) -> str | None:
        try:
            task = evaluate.load_task(name)
            if isinstance(task, CorpusPreparing):
                task.prepare(samples if samples is not None else [it.sample for it in evaluate.read_answers(input_path, task).items])
        except VericiteError:
            return None
        return task_name(task)

    return resolve
