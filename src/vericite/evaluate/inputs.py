"""Answers produced anywhere, read for a task: one JSON object per line, each a :class:`AnswerItem`.

What a line must hold is the task's declaration (``protocols.Task``): its ``input_fields`` (``answer`` is the
model's raw output, or a ``vericite generate`` record's ``output``; ``id`` may be missing, the line number
stands in) and the ``optional_fields`` it reads when present. For the default task, ``kalma``: ``id``,
``question``, ``answer`` and ``knowledge``, optionally ``gold`` and ``absent`` (README "Input of vericite
evaluate").

Bad lines (not JSON, a field missing, an id already seen: only its first line is kept) are collected with their
line number and reason, and the rest is still evaluated. An empty answer is kept (it cites nothing) and listed
as a warning; it is never dropped, because dropping bad answers would flatter the model. Bytes that are not
UTF-8 are replaced by U+FFFD, counted, and listed as warnings. A run folder is read as its ``samples.jsonl``; a task
with files of its own shape (``protocols.RecordReading``: ALCE's JSON results) reads them itself.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import jsonl
from ..errors import DataError
from ..protocols import Task
from ..types import AttributedAnswer, Sample

#: the task ``vericite evaluate`` and ``vericite run`` serve unless told otherwise
DEFAULT_TASK = "kalma"
#: the fields every task's lines share, read here rather than by the task's list: ``id`` (optional: the line
#: number stands in), ``question`` (checked by ``Sample.from_dict``) and ``answer``
RECORD_FIELDS = ("id", "question", "answer")


def load_task(task: str | Task | None = None) -> Task:
    """A task: a ready one, or built from ``registry.tasks`` by name (None: :data:`DEFAULT_TASK`)."""
    if task is None or isinstance(task, str):
        from ..registry import create

        return create("tasks", task or DEFAULT_TASK)  # type: ignore[no-any-return]
    return task


@dataclass
class AnswerItem:
    """One answer to evaluate: its input line number, the sample it answers, the raw output, the input record as
    read, and the answer parsed by the task's citation format (set when it is evaluated)."""

    line: int
    sample: Sample
    raw: str
    record: dict[str, Any]
    answer: AttributedAnswer | None = None


@dataclass
class ReadResult:
    items: list[AnswerItem] = field(default_factory=list)
    bad: list[dict[str, Any]] = field(default_factory=list)
    warnings: list[dict[str, Any]] = field(default_factory=list)
    #: lines holding bytes that are not UTF-8, and how many such bytes were replaced by U+FFFD
    invalid_utf8: dict[str, int] = field(default_factory=lambda: {"lines": 0, "bytes": 0})
    duplicate_ids: int = 0


def read_answers(path: str | Path, task: str | Task | None = None) -> ReadResult:
    """Read the answers of a JSONL file for ``task`` (default: :data:`DEFAULT_TASK`). A line that cannot be evaluated
    (not JSON, a field missing, an id already seen: only the first line of an id is kept) goes to ``bad`` with its
    number and the reason; bytes that are not UTF-8 are replaced by U+FFFD, counted in ``invalid_utf8`` and listed
    in ``warnings``."""
    p = input_file(path)
    task = load_task(task)
    out = ReadResult()
    first_line: dict[str, int] = {}
    st = jsonl.ReadStats()  # the lines that are not JSON, and the bytes that are not UTF-8

    def utf8_note(n: int) -> str:
        k = st.replaced.get(n, 0)
        return f"invalid UTF-8: {k} byte{'s' if k != 1 else ''} replaced by U+FFFD" if k else ""

    from ..protocols import RecordReading

    reading = task if isinstance(task, RecordReading) else None
    given = reading.read_records(p) if reading is not None else None
    numbered = given if given is not None else jsonl.read_numbered(p, policy="collect", torn="read", stats=st, errors="replace", require_object=False)
    for n, d in numbered:
        if given is None and reading is not None:
            try:
                d = reading.convert_record(d, n)
            except (ValueError, TypeError, KeyError, AttributeError) as e:  # a line the task cannot read: a bad line
                out.bad.append({"line": n, "id": d.get("id") if isinstance(d, dict) else None, "reason": str(e) or type(e).__name__})
                continue
        if utf8_note(n):
            out.warnings.append({"line": n, "id": d.get("id") if isinstance(d, dict) else None, "reason": utf8_note(n)})
        item = item_from_record(d, n, task)
        if isinstance(item, str):
            out.bad.append({"line": n, "id": d.get("id") if isinstance(d, dict) else None, "reason": item})
            continue
        sid = item.sample.id
        if sid in first_line:
            out.duplicate_ids += 1
            out.bad.append({"line": n, "id": sid, "reason": f"duplicate id {sid} (first at line {first_line[sid]})"})
            continue
        first_line[sid] = n
        if not item.raw.strip():
            out.warnings.append({"line": n, "id": sid, "reason": "empty answer"})
        out.items.append(item)
    for b in st.bad:  # not JSON: the reason says when bytes were replaced too
        note = utf8_note(b.line)
        out.bad.append({"line": b.line, "reason": b.reason + (f"; {note}" if note else "")})
        if note:
            out.warnings.append({"line": b.line, "reason": note})
    out.bad.sort(key=lambda b: b["line"])  # stable: a line's warnings keep their order
    out.warnings.sort(key=lambda w: w["line"])
    out.invalid_utf8 = {"lines": len(st.replaced), "bytes": sum(st.replaced.values())}
    return out


def input_file(path: str | Path) -> Path:
    """The file an input names: itself, or a run folder's ``samples.jsonl`` (a ``vericite generate`` run)."""
    p = Path(path)
    if p.is_dir() and (p / "samples.jsonl").is_file():
        return p / "samples.jsonl"
    if not p.is_file():
        raise DataError(f"input file not found: {p}" + (" (a folder without samples.jsonl)" if p.is_dir() else ""))
    return p


def item_from_record(d: Any, line: int, task: str | Task | None = None) -> AnswerItem | str:
    """An AnswerItem of ``task`` (default: :data:`DEFAULT_TASK`), or the reason the record cannot be evaluated."""
    task = load_task(task)
    if not isinstance(d, dict):
        return "expected a JSON object"
    raw = d.get("answer")
    if not isinstance(raw, str):
        raw = d.get("output")  # a vericite generate record: parsed answer in "answer", raw text in "output"
    if not isinstance(raw, str):
        given = next((v for v in (d.get("answer"), d.get("output")) if v is not None and not isinstance(v, dict)), None)
        if given is not None:  # there, but a number, a list...: say so, not "missing"
            what = task.field_help.get("answer")
            return f"field 'answer' is not a string but {type(given).__name__} {given!r}"[:160] + (f" ({what})" if what else "")
        return _missing("answer", task)
    for name in task.input_fields:
        if name not in RECORD_FIELDS and name not in d:
            return _missing(name, task)
    read = {n for n in (*task.input_fields, *task.optional_fields) if n != "answer"}
    try:
        sample = Sample.from_dict({k: v for k, v in d.items() if k in read})
    except (ValueError, KeyError, TypeError) as e:
        return str(e)
    if not sample.id:
        sample.id = f"line-{line}"
    return AnswerItem(line, sample, raw, d)


def _missing(name: str, task: Task) -> str:
    what = task.field_help.get(name)
    return f"missing field {name!r}" + (f" ({what})" if what else "")
