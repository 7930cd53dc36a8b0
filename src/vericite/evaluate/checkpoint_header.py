"""The header side of evaluate's per-answer checkpoint (``checkpoint.py``): what an evaluation is
(:func:`fingerprint`), how a header of an earlier version is read (:func:`upgrade`), what a resumed evaluation
must share with it (:func:`settings_of`) and how the settings that differ are named (:func:`differences`), and the
checkpoint file read strictly (:func:`read_checkpoint`). ``checkpoint.py`` re-exports every name."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any, Callable, Mapping

from .. import jsonl
from ..errors import DataError, VericiteError

VERSION = "evaluate-answers@3"
#: the header before each answer's line recorded the sha256 of the answer's record (``record_sha256``): the same
#: header; its lines are checked against the input as :meth:`AnswerCheckpoint.open` says (the whole file's sha256)
PREVIOUS = "evaluate-answers@2"
#: the header before ``config.task`` was the task as resolved and ``config.task_options`` always written for a task
#: with options: still resumed, read as :func:`upgrade` says
LEGACY = "evaluate-answers@1"
#: settings that change how an evaluation runs, not what it computes: a resumed evaluation may change them
OPERATIONAL = frozenset({"threads", "cache", "timeout", "request_retries"})
#: settings of the corpus numbers only (the bootstrap), computed at the end: a resumed evaluation may change them too
CORPUS_ONLY = frozenset({"resamples", "seed"})
#: settings added after checkpoints were first written, left out when not given: an evaluation checkpointed before
#: them resumes as the same evaluation (``--reader``)
OMITTED_WHEN_NONE = frozenset({"reader"})



def fingerprint(cfg: Any, task: Any, input_sha256: str, extra: Mapping[str, Any] | None = None, *, corpus: bool = False) -> dict[str, Any]:
    """What an evaluation's answers are scored with: its settings (the task, the judges, the metric options) but the
    operational ones and, unless ``corpus``, the bootstrap's; the task it ran as (a task, or its name) and the sha256
    of its answers' file (``extra``: more, e.g. a run's judge).

    ``config.task`` is the evaluation the task resolved to once its input was read (:func:`task_name`: ``alce`` over
    ASQA answers is ``alce-asqa``), so ``--task alce`` and ``--task alce-asqa`` over the same answers are the same
    evaluation and ``alce-eli5`` is another. A task with options (``alce:at_most_citations=1``,
    ``conner:aggregation=max``) has ``config.task_options``: those that differ from its defaults (its
    ``spec_options()``; ``{}`` at the defaults), so a spec that spells out a default is the same evaluation as one
    that does not; a task without options has no such key. With ``evidence_index`` (``--index``), ``index_corpus``
    is what that index holds (:func:`index_corpus`): the path alone would resume over an index rebuilt in place."""
    settings = cfg.model_dump() if hasattr(cfg, "model_dump") else dict(vars(cfg))
    config = {k: v for k, v in sorted(settings.items()) if k not in OPERATIONAL and (corpus or k not in CORPUS_ONLY) and not (k in OMITTED_WHEN_NONE and v is None)}
    config["task"] = task_name(task)
    if callable(getattr(task, "spec_options", None)):
        config["task_options"] = task_options(task)
    ident = index_corpus(config["evidence_index"]) if config.get("evidence_index") else None
    corpus = {"index_corpus": ident} if ident is not None else {}
    return json.loads(jsonl.dumps_line({"config": config, "input_sha256": input_sha256, **corpus, **dict(extra or {})}))


def index_corpus(folder: str | Path) -> dict[str, Any] | None:
    """What the index folder ``folder`` (``--index``) holds, as a run's manifest records it for ``generate --resume``
    (``PassageIndex.corpus_identity``: its corpus's sha256 and passages): the header's ``index_corpus``, so an index
    rebuilt in place from another corpus between a cut and ``--resume`` is another evaluation, not one whose answers
    were scored against two indexes. None when no index can be opened there: the task that reads it says so in its
    own line when it builds its retriever (a task that does not read ``--index`` goes on as before)."""
    from ..knowledge.docs.index import IndexUnusable, PassageIndex

    try:
        return PassageIndex(folder).corpus_identity()
    except IndexUnusable:
        return None


def task_name(task: Any) -> str:
    """The evaluation ``task`` is, once its input is read: its ``resolved_name`` (ALCE: ``alce-<sub-task>``, the
    sub-task read from the input when the name did not say it), else its name (a name as given)."""
    if isinstance(task, str):
        return task
    return str(getattr(task, "resolved_name", None) or task.name)


def upgrade(old: Mapping[str, Any], head: Mapping[str, Any], resolve: Callable[[str], str | None] | None = None) -> tuple[dict[str, Any], bool]:
    """A :data:`LEGACY` header as this version writes it, and whether it predates the task's options. Its
    ``config.task`` was the task's name as given: ``resolve(name)`` gives the evaluation that name resolves to over
    the same answers (None: unknown, the name is kept). It recorded ``task_options`` only when some differed from
    the defaults, and before they were recorded at all it recorded none: a header without them is taken as made
    with the task's defaults (all it can say), so it resumes only an evaluation with the defaults. A header of any
    version written before ``index_corpus`` was recorded (``--index``: :func:`index_corpus`) is taken as made with
    the index as it is now, so it resumes as before. One that recorded ``index_corpus`` is made with the index that
    holds it, wherever that folder is now (``config.evidence_index`` as given then is taken as ``head``'s when the
    two index the same corpus: a resume from another checkout)."""
    config = old.get("config")
    if isinstance(config, dict) and old.get("index_corpus") is not None and old.get("index_corpus") == head.get("index_corpus"):
        old = {**old, "config": {**config, "evidence_index": (head.get("config") or {}).get("evidence_index")}}
    if "index_corpus" in head and "index_corpus" not in old:  # written before the index's corpus was recorded
        old = {**old, "index_corpus": head["index_corpus"]}  # taken as made with the index as it is now (all it can say)
    if old.get("checkpoint") == PREVIOUS:  # the same header: its lines lack record_sha256 (open() says what then)
        return {**old, "checkpoint": VERSION}, False
    if old.get("checkpoint") != LEGACY:
        return dict(old), False
    config = dict(old.get("config") or {})
    name = config.get("task")
    if resolve is not None and isinstance(name, str) and name != (head.get("config") or {}).get("task"):
        config["task"] = resolve(name) or name
    predates = "task_options" in (head.get("config") or {}) and "task_options" not in config
    if predates:
        config["task_options"] = {}
    return {**old, "checkpoint": VERSION, "config": config}, predates


def task_options(task: Any) -> dict[str, Any]:
    """``task``'s options that differ from its defaults (its ``spec_options()``; none for a task without options,
    or a task given by name)."""
    read = getattr(task, "spec_options", None)
    return dict(read()) if callable(read) else {}


def settings_of(header: Mapping[str, Any], strict: bool = False) -> dict[str, Any]:
    """What a resumed evaluation's header must share with the checkpoint's: all of it but ``input_sha256`` (the
    answers are compared one by one), all of it when ``strict``."""
    return {k: v for k, v in header.items() if strict or k != "input_sha256"}


def say_note(line: str) -> None:
    """A resume's note line, said on stderr (the default of the ``note`` callbacks here and in ``checkpoint.py``)."""
    print(line, file=sys.stderr, flush=True)


def legacy_note(path: Path, head: Mapping[str, Any], note: Callable[[str], None] | None = None) -> None:
    """Say (``note``, default stderr) that the checkpoint ``path``, written before task options were recorded, is
    resumed as made with the defaults of ``head``'s task."""
    (note or say_note)(f"note: {path} was written before task options were recorded: resumed as made with {head['config']['task']}'s defaults (if it was made with other options, delete it)")


#: what a damaged checkpoint's line ends with: the way out
WAY_OUT = "delete it, or rerun without --resume, to judge every answer again"


def read_checkpoint(path: Path, way_out: str = WAY_OUT) -> tuple[dict[str, Any], list[dict[str, Any]], bool]:
    """``path``'s header, its answers' lines and whether a torn last line follows them (cut by the caller), read
    strictly: anything else wrong with the file (not UTF-8, a line that is not JSON or not an object, no header, a
    header of no version this code reads, a line that is not an answer's) is one :class:`VericiteError` naming
    the file (and the line) and ``way_out`` (:data:`WAY_OUT`: evaluate's)."""
    if not path.is_file():
        raise VericiteError(f"cannot resume from {path}: it is not a file; remove it, or use another --out")
    try:
        open(path, "rb").close()
    except OSError as e:  # not damaged: unreadable here (permissions)
        raise VericiteError(f"cannot resume from {path}: cannot read it ({e.strerror or e})") from None
    stats = jsonl.ReadStats()
    try:
        numbered = list(jsonl.read_numbered(path, policy="raise", torn="ignore", stats=stats))
    except DataError as e:
        raise VericiteError(f"cannot resume from a damaged checkpoint: {e}; {way_out}") from None
    if not numbered:
        raise VericiteError(f"cannot resume from {path}: it holds no header line (a damaged checkpoint); {way_out}")
    (_, head), *rest = numbered
    if not isinstance(head.get("config"), dict) or not isinstance(head.get("checkpoint"), str) or not head["checkpoint"].startswith("evaluate-answers@"):
        raise VericiteError(f"cannot resume from {path}: its first line is not a checkpoint header ({jsonl.preview(head)}); {way_out}")
    if head["checkpoint"] not in (VERSION, PREVIOUS, LEGACY):
        raise VericiteError(f"cannot resume from {path}: it is a checkpoint of another version ({head['checkpoint']}, not {VERSION}); {way_out}")
    lines = []
    for n, line in rest:
        answer, judged, usage = line.get("answer"), line.get("judged", {}), line.get("usage", {})
        if not (isinstance(answer, int) and not isinstance(answer, bool) and answer >= 0 and "id" in line and isinstance(judged, dict) and isinstance(usage, (dict, type(None)))):
            raise VericiteError(f"cannot resume from {path}:{n}: not an answer's line ({jsonl.preview(line)}); {way_out}")
        lines.append(line)
    return head, lines, stats.torn_last


_MISSING = object()


def differences(old: Mapping[str, Any], new: Mapping[str, Any]) -> str:
    """The settings two fingerprints differ in, named (``config.judge``, ``input_sha256`` as "the input file")."""
    def walk(a: Mapping[str, Any], b: Mapping[str, Any], prefix: str) -> list[str]:
        names = []
        for key in sorted(set(a) | set(b)):
            x, y = a.get(key, _MISSING), b.get(key, _MISSING)  # a key on one side only differs, even from null
            if x == y:
                continue
            if key == "task_options":  # a side without the key: the task's defaults
                x, y = ({} if v is _MISSING else v for v in (x, y))
            if isinstance(x, dict) and isinstance(y, dict):
                names += walk(x, y, f"{prefix}{key}.")
            else:
                names.append(f"{prefix}{key}")
        return names

    names: list[str] = []
    for n in walk(old, new, ""):
        if n.split(".")[0] == "index_corpus":
            n = INDEX_CHANGED
        elif n == "input_sha256":
            n = "the input file"
        else:
            n = n.removeprefix("config.").replace("task_options.", "task option ")
        if n not in names:
            names.append(n)
    return ", ".join(names) or "the settings"


#: how :func:`differences` names a changed ``index_corpus``
INDEX_CHANGED = "the documents of --index: its folder was rebuilt from another corpus since"
