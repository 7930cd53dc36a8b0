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
import time
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from .. import jsonl
from ..errors import VericiteError
from .checkpoint_header import (  # noqa: F401  (re-exported: the header side, split out of this module)
    CORPUS_ONLY,
    INDEX_CHANGED,
    LEGACY,
    OMITTED_WHEN_NONE,
    OPERATIONAL,
    PREVIOUS,
    VERSION,
    WAY_OUT,
    differences,
    fingerprint,
    index_corpus,
    legacy_note,
    read_checkpoint,
    say_note,
    settings_of,
    task_name,
    task_options,
    upgrade,
)
from .memo_judge import MemoJudge, pair_key  # noqa: F401  (re-exported: the checkpoint's keys and judge)

NAME = ".evaluate-answers.jsonl"
#: with --no-cache, the evaluation's own model calls (G-Eval's, CONNER's LM, an LLM judge's), kept for --resume
CALLS = ".evaluate-calls.sqlite"
#: seconds between two fsyncs of the checkpoint (each line is written at once; fsync guards against the OS's crash)
SYNC_EVERY_S = 1.0


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
                (note or say_note)(f"note: {path} was written before the documents of --index were recorded: resumed as made with {head['config'].get('evidence_index')} as it is now (if that index was rebuilt since, rerun without --resume)")
            if torn:
                if not rewrite:
                    jsonl.cut_torn_line(path)
                (note or say_note)(f"note: {path}: dropped its torn last line (cut off mid-write by the crash); resuming with the {len(lines)} answer{'' if len(lines) == 1 else 's'} before it")
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
                    (note or say_note)(f"note: resuming the evaluation in {folder}: {len(ck.done)} answer{'' if len(ck.done) == 1 else 's'} already scored (unchanged), {new} more in{where} to score")
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
