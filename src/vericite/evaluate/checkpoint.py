"""An evaluation's per-answer checkpoint, ``OUT/.evaluate-answers.jsonl``: what ``evaluate --resume`` (and
``run --resume``, for a level whose evaluation was cut) reuses.

The first line records what the evaluation is (:func:`fingerprint`: the task as it resolved over its input and
its options, the judges, the metric options, with ``--index`` what the index holds, the sha256 of the answers'
file); a resumed evaluation must have the same settings, else :meth:`AnswerCheckpoint.open` says which differ, in one line. Its input may have grown (more
answers, ``generate --resume``): each answer's line records the sha256 of its record (:func:`record_sha256`), so
the answers scored whose records are unchanged are kept and the rest scored; an answer scored that changed, or is
gone, is one line naming it (``vericite run``: the level evaluated again). A file that cannot be read
(:func:`read_checkpoint`) is refused in one line naming it, and left as it is; a torn last line, what a crash
leaves, is cut and said. Then one line per answer, written as soon as the answer is scored (fsynced at most once a
second):
its index and id, every judgement its judges gave (by :func:`pair_key`: the judge's id and the whole pair), the
scores and judgements of the families that judged it, the answer scored alone, what that judging's model calls
cost (``usage``, by model name: a resumed evaluation adds it to ``judge_usage`` for the answers it reads back), and
the sha256 of the answer's record as read (``record_sha256``).

How ``evaluate_items`` uses it: each family that holds a judge (KaLMA's alignment and [NA], ALCE's citations,
the four-class diagnosis, CONNER's factuality) gets a :class:`MemoJudge`; the answers not in the checkpoint are
scored one at a time by those families (the judging: what is slow), each appending its line. Then every family
scores the whole corpus as it always did, its judge answering from the memo (no judge is asked again), so the
corpus numbers (ratios, bootstrap CIs, a family's settings and counts) are computed over the corpus from the
judgements checkpointed, and an interrupted-then-resumed evaluation writes exactly what an uninterrupted one
writes. Families without a judge (G-Eval; the parts of a family its judge does not decide, ``judging_part``:
ALCE's ROUGE and QA model, CONNER's LM-scored measures) are computed over the corpus at the end; their model calls
are kept by the call cache as they are made (with ``--no-cache``, by the evaluation's own, :data:`CALLS`).
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import time
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from .. import jsonl
from ..errors import DataError, VericiteError
from ..paths import file_sha256
from .memo_judge import MemoJudge, pair_key  # noqa: F401  (re-exported: the checkpoint's keys and judge)

NAME = ".evaluate-answers.jsonl"
#: with --no-cache, the evaluation's own model calls (G-Eval's, CONNER's LM, an LLM judge's), kept for --resume
CALLS = ".evaluate-calls.sqlite"
VERSION = "evaluate-answers@3"
#: the header before each answer's line recorded the sha256 of the answer's record (``record_sha256``): the same
#: header; its lines are checked against the input as :meth:`AnswerCheckpoint.open` says (the whole file's sha256)
PREVIOUS = "evaluate-answers@2"
#: the header before ``config.task`` was the task as resolved and ``config.task_options`` always written for a task
#: with options: still resumed, read as :func:`upgrade` says
LEGACY = "evaluate-answers@1"
#: seconds between two fsyncs of the checkpoint (each line is written at once; fsync guards against the OS's crash)
SYNC_EVERY_S = 1.0
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
    the index as it is now, so it resumes as before."""
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


class AnswerCheckpoint:
    """``OUT/.evaluate-answers.jsonl`` (module doc). ``memo``: every judgement checkpointed (those of a resumed
    file whose status is ok: a failed or unparseable one is asked again); ``done``: answer index -> its id."""

    def __init__(self, path: Path, header: dict[str, Any]) -> None:
        self.path = path
        self.header = header
        self.memo: dict[str, dict[str, Any]] = {}
        self.fresh: dict[str, dict[str, Any]] = {}
        self.done: dict[int, Any] = {}
        #: answer index -> its scores as its line records them (read back, or added since): what a family may reuse
        #: rather than ask its models again when the corpus is scored (``reuse_checkpointed``: CONNER's reader answers
        #: and the evidence it retrieved)
        self.scores: dict[int, Any] = {}
        #: answer id -> the sha256 of its record as read now (:func:`record_sha256`), written in its line
        self.hashes: dict[str, str] = {}
        #: what the judging of the answers read back cost, by model name (their lines' ``usage``; a line written
        #: before usage was kept adds nothing)
        self.usage: dict[str, Any] = {}
        self._synced = 0.0

    @classmethod
    def open(
        cls,
        folder: str | Path,
        header: Mapping[str, Any],
        *,
        resume: bool = False,
        note: Callable[[str], None] | None = None,
        resolve: Callable[[str], str | None] | None = None,
        answers: Sequence[tuple[str, Any]] | None = None,
        input_file: str | Path | None = None,
        changed: str = "refuse",
    ) -> "AnswerCheckpoint":
        """The checkpoint in ``folder``: with ``resume``, the one there (when there is one) if it records the same
        evaluation as ``header``, else one line saying what differs; without, a new one.

        ``answers``: the answers evaluated now, ``(id, record as read)`` in the input's order (``input_file``: the
        file they were read from, named in the lines said). With them, each answer's line records the sha256 of its
        record (:func:`record_sha256`), and a resumed evaluation is the same one when its settings (the header but
        ``input_sha256``) are the same and every answer it scored is still in the input, by its id, with the same
        record: the answers added since are scored, those scored are not judged again (wherever they are now in
        the input). An answer scored that changed since, or that is no longer in the input, is refused in one line
        naming it (``changed="restart"``, ``vericite run``'s: the evaluation starts again instead, as for other
        answers). Lines without ``record_sha256`` (a checkpoint of :data:`PREVIOUS` or :data:`LEGACY`) are taken
        as unchanged when the input is the file the header's ``input_sha256`` names, or that file with lines
        appended (a prefix of the input ending at a line's end has that sha256: :func:`grown_from`); else the
        resume is refused in one line saying how to go on. A checkpoint resumed over a grown input, or of an
        earlier version, is written again (atomically) as this version: ``input_sha256`` the input's now, each line
        with its ``record_sha256``. Without ``answers`` the whole header is compared, ``input_sha256`` included.

        A checkpoint that cannot be read (:func:`read_checkpoint`: not JSON, not UTF-8, no header, a line that is
        not an answer's) is refused in one line naming the file and the way out, and left as it is: nothing is
        judged again without the user saying so. A torn last line (a crash in the middle of writing it) is the
        ordinary crash: it is cut and ``note`` (default: a line on stderr) says so. A checkpoint of the previous
        headers (:data:`LEGACY`) is compared as :func:`upgrade` reads it (``resolve``: a task name given then -> the
        evaluation it resolves to over the same answers); one made before task options were recorded is taken as
        made with the defaults, which ``note`` says."""
        path = Path(folder) / NAME
        head = {"checkpoint": VERSION, **json.loads(jsonl.dumps_line(dict(header)))}
        ck = cls(path, head)
        for sid, record in answers or []:
            ck.hashes.setdefault(str(sid), record_sha256(record))  # an id given twice: its first record is read
        if resume and (path.exists() or path.is_symlink()):
            old, lines, torn = read_checkpoint(path)
            version = old["checkpoint"]
            unrecorded = "index_corpus" in head and "index_corpus" not in old  # written before it was recorded
            old, predates = upgrade(old, head, resolve)
            strict = answers is None
            if settings_of(old, strict) != settings_of(head, strict):
                why = "; it was written before task options were recorded, so it is taken as made with the task's defaults" if predates and old["config"]["task_options"] != head["config"]["task_options"] else ""
                raise VericiteError(f"cannot resume the evaluation in {folder}: its checkpoint was made with other settings ({differences(settings_of(old, strict), settings_of(head, strict))}{why}); rerun without --resume, or use another --out")
            rewrite = False
            if answers is not None:
                refused = ck._match(folder, old, lines, answers, input_file)
                if refused is not None:
                    if changed != "restart":
                        raise VericiteError(refused)
                    return cls.open(folder, header, answers=answers)  # run: the level's answers changed, evaluated again
                rewrite = version != VERSION or old.get("input_sha256") != head.get("input_sha256") or any("record_sha256" not in line for line in lines)
            if predates:
                legacy_note(path, head, note)
            if unrecorded:
                (note or _say)(f"note: {path} was written before the documents of --index were recorded: resumed as made with {head['config'].get('evidence_index')} as it is now (if that index was rebuilt since, rerun without --resume)")
            if torn:
                if not rewrite:
                    jsonl.cut_torn_line(path)
                (note or _say)(f"note: {path}: dropped its torn last line (cut off mid-write by the crash); resuming with the {len(lines)} answer{'' if len(lines) == 1 else 's'} before it")
            for line in lines:
                ck._read_usage(line.get("usage"))
                ck.memo.update({k: j for k, j in (line.get("judged") or {}).items() if isinstance(j, dict) and j.get("status") == "ok"})
            if answers is None:
                ck.done = {line["answer"]: line.get("id") for line in lines}
                ck.scores = {line["answer"]: line.get("scores") or {} for line in lines}
            else:
                index: dict[str, int] = {}
                for i, (sid, _) in enumerate(answers):
                    index.setdefault(str(sid), i)
                ck.done = {index[str(line.get("id"))]: line.get("id") for line in lines}
                ck.scores = {index[str(line.get("id"))]: line.get("scores") or {} for line in lines}
                new = len(answers) - len(ck.done)
                if new and lines and old.get("input_sha256") != head.get("input_sha256"):  # the input grew since
                    where = f" {input_file}" if input_file is not None else " the input"
                    (note or _say)(f"note: resuming the evaluation in {folder}: {len(ck.done)} answer{'' if len(ck.done) == 1 else 's'} already scored (unchanged), {new} more in{where} to score")
            if rewrite:
                try:
                    jsonl.write_jsonl_atomic(path, [head, *({**line, "record_sha256": ck.hashes[str(line.get("id"))]} for line in lines)])
                except OSError as e:
                    raise unwritable(path, e, resumable=True) from None
            return ck
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            for side in ("", "-wal", "-shm"):  # a new evaluation: none of an earlier one's calls
                (ck.calls.parent / (ck.calls.name + side)).unlink(missing_ok=True)
            jsonl.write_jsonl_atomic(path, [head])
        except OSError as e:
            raise unwritable(path, e) from None
        return ck

    def _match(self, folder: str | Path, old: Mapping[str, Any], lines: Sequence[Mapping[str, Any]], answers: Sequence[tuple[str, Any]], input_file: str | Path | None) -> str | None:
        """Why the answers scored in ``lines`` are not those of ``answers`` now (one line), or None when each is
        still there unchanged (:meth:`open`)."""
        where = str(input_file) if input_file is not None else "the input"
        position: dict[str, int] = {}
        for n, (sid, _) in enumerate(answers, 1):
            position.setdefault(str(sid), n)
        unhashed = [line for line in lines if "record_sha256" not in line]
        if unhashed and old.get("input_sha256") != self.header.get("input_sha256"):
            if input_file is None or not grown_from(input_file, str(old.get("input_sha256"))):
                return (
                    f"cannot resume the evaluation in {folder}: its checkpoint ({len(unhashed)} answer{'' if len(unhashed) == 1 else 's'} scored) was written before answers were "
                    f"checked one by one, and {where} is no longer the file it scored nor that file with answers appended, so the answers scored cannot be told unchanged; "
                    "rerun without --resume to score every answer again (unless --no-cache, the call cache answers the calls already made), or use another --out"
                )
        for line in lines:
            sid = str(line.get("id"))
            if sid not in position:
                return (
                    f"cannot resume the evaluation in {folder}: answer {sid!r}, scored as answer {int(line['answer']) + 1}, is no longer in {where} "
                    "(--resume continues over the same answers or more: answers may be added, not removed or changed); rerun without --resume, or use another --out"
                )
            if "record_sha256" in line and line["record_sha256"] != self.hashes[sid]:
                return (
                    f"cannot resume the evaluation in {folder}: answer {sid!r} (answer {position[sid]} of {where}) has changed since it was scored "
                    "(--resume continues over the same answers or more: answers may be added, not removed or changed); rerun without --resume, or use another --out"
                )
        return None

    @property
    def calls(self) -> Path:
        """The call cache of an evaluation run with ``--no-cache``: its own model calls, kept in ``--out`` as they
        are made, so a resumed evaluation does not make them again (started empty with the checkpoint)."""
        return self.path.with_name(CALLS)

    def is_done(self, index: int, sample_id: str) -> bool:
        return index in self.done and self.done[index] == sample_id

    def _read_usage(self, usage: Any) -> None:
        from ..types import Usage

        if not isinstance(usage, dict):
            return
        for name, u in usage.items():
            if isinstance(u, dict):
                self.usage[name] = (Usage.from_dict(self.usage.get(name)) + Usage.from_dict(u)).to_dict()

    def add(self, index: int, sample_id: str, scores: Mapping[str, Any], judgements: list[dict[str, Any]], usage: Mapping[str, Any] | None = None) -> None:
        """The answer ``index`` scored: its line (with the judgements made since the last one, and ``usage``: what
        its judging's model calls cost, by model name), written at once (a killed process loses none) and fsynced
        at most every :data:`SYNC_EVERY_S` (fast judges: not once an answer)."""
        self._write(answer_line(index, sample_id, self.fresh, scores, judgements, usage))
        self.scores[index] = dict(scores)
        self.fresh.clear()

    def add_line(self, line: Mapping[str, Any]) -> None:
        """An answer's line made elsewhere (``--ray``: by a worker, :func:`answer_line`), written as :meth:`add`
        writes; its judgements go into the memo."""
        self.memo.update({k: j for k, j in (line.get("judged") or {}).items() if isinstance(j, dict)})
        self._write(dict(line))
        self.scores[int(line["answer"])] = line.get("scores") or {}

    def _write(self, line: dict[str, Any]) -> None:
        """Append ``line`` (with its answer's ``record_sha256`` when known); a checkpoint that cannot be written
        (read-only, its folder's permissions, a full disk) ends the evaluation in one line naming it
        (:func:`unwritable`): the answers scored before it are kept."""
        if str(line.get("id")) in self.hashes:
            line = {**line, "record_sha256": self.hashes[str(line["id"])]}
        try:
            with open(self.path, "a", encoding="utf-8") as f:
                f.write(jsonl.dumps_line(line))
                f.flush()
                if time.monotonic() - self._synced >= SYNC_EVERY_S:
                    os.fsync(f.fileno())
                    self._synced = time.monotonic()
        except OSError as e:
            raise unwritable(self.path, e, resumable=bool(self.done)) from None
        self.done[int(line["answer"])] = line["id"]


def unwritable(path: Path, e: OSError, resumable: bool = False) -> VericiteError:
    """The one line for a checkpoint ``path`` that cannot be written: what the system said, and the way out."""
    kept = "; the answers scored before it are kept there: rerun with --resume once it can be written" if resumable else ""
    return VericiteError(f"cannot write the evaluation's checkpoint {path}: {e.strerror or e}{kept} (make the file and its folder writable, or use another --out)")


def record_sha256(record: Any) -> str:
    """The sha256 of an answer's record as read (canonical JSON: keys sorted, no spaces), what its checkpoint line
    records: a resumed evaluation refuses an answer scored whose record changed since."""
    text = json.dumps(record, ensure_ascii=False, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def settings_of(header: Mapping[str, Any], strict: bool = False) -> dict[str, Any]:
    """What a resumed evaluation's header must share with the checkpoint's: all of it but ``input_sha256`` (the
    answers are compared one by one), all of it when ``strict``."""
    return {k: v for k, v in header.items() if strict or k != "input_sha256"}


def grown_from(path: str | Path, sha256: str) -> bool:
    """Whether ``path`` is the file of sha256 ``sha256`` itself, or with lines appended: some prefix of it ending
    at the end of a line (or the file) has that sha256."""
    h = hashlib.sha256()
    try:
        with open(path, "rb") as f:
            for raw in f:
                h.update(raw)
                if raw.endswith(b"\n") and h.hexdigest() == sha256:
                    return True
    except OSError:
        return False
    return h.hexdigest() == sha256


def answer_line(index: int, sample_id: str, judged: Mapping[str, Any], scores: Mapping[str, Any], judgements: list[dict[str, Any]], usage: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """An answer's checkpoint line: its index and id, the judgements made for it (``judged``: by :func:`pair_key`),
    its scores and judgements, and what its judging cost by model name."""
    return {"answer": index, "id": sample_id, "judged": dict(judged), "scores": dict(scores), "judgements": judgements, "usage": dict(usage or {})}


def _say(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def legacy_note(path: Path, head: Mapping[str, Any], note: Callable[[str], None] | None = None) -> None:
    """Say (``note``, default stderr) that the checkpoint ``path``, written before task options were recorded, is
    resumed as made with the defaults of ``head``'s task."""
    (note or _say)(f"note: {path} was written before task options were recorded: resumed as made with {head['config']['task']}'s defaults (if it was made with other options, delete it)")


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
