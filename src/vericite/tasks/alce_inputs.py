"""ALCE's files, as they are: the one reader of them, for the ALCE datasets (``datasets/alce.py``: questions to
answer) and for ``vericite evaluate --task alce`` (answers to score).

An ALCE file is JSON — ``{"args": {...}, "data": [...]}`` (a ``run.py`` result), or a list of items — or JSONL, one
item a line (a ``.jsonl`` name, or JSON values one after another; a lone item on one line is one too). Bytes that
are not UTF-8, a file that is not JSON, or JSON of another shape are one error line.

An item holds ``question``; ``docs`` (``title``, ``text``, and ``summary``, ``extraction``, ``score`` ...); by
sub-task ``qa_pairs`` and ``annotations`` (ASQA: sub-questions with short answers, two long answers),
``answers`` (QAMPARI: each answer a list of aliases), ``claims`` and ``answer`` (ELI5: three gold claims, one
long answer); a result's ``output`` is the model's answer. :func:`alce_fields` reads it into vericite's sample
shape (what ``Sample.from_dict`` reads): ``id`` from ``id``, else ASQA's ``sample_id``; ``docs`` as ``passages``
(each document's other fields in its meta); ``qa_pairs``, ``answers``, ``claims``; every other field of the item
(ALCE's reference ``answer``, ``annotations``, ``wikipages``, ``question_ctx`` ...) unchanged in
``meta["alce"]``, which is where ``vericite generate`` keeps them in its records and where ``vericite export
alce`` takes them back from.

For evaluation (:func:`alce_record`) the reference long answers (ASQA's annotations, else ELI5's ``answer``:
``metrics.alce.reference_answers``) also go to ``meta.long_answers``, read from the item or from
``meta["alce"]`` of a ``vericite generate`` record alike; ALCE's ``answer`` is never read as the model's output:
an item with no ``output`` has no answer to evaluate.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterator, Mapping

from ..errors import DataError
from ..jsonl import text_lines
from ..metrics.alce import reference_answers

#: item fields read into the sample's own fields; every other field goes to ``meta["alce"]`` (``output``, the
#: model's answer, is the evaluated answer, not a field of the question)
READ_FIELDS = ("id", "question", "docs", "qa_pairs", "answers", "claims")  # a tuple: records keep one key order
SHAPES = '{"data": [...]}, a list, or JSONL'


def decode(path: str | Path) -> str:
    """A file's text; bytes that are not UTF-8 are one error line (ALCE's files are UTF-8 JSON)."""
    p = Path(path)
    try:
        raw = p.read_bytes()
    except OSError as e:
        raise DataError(f"cannot read {p}: {e.strerror or type(e).__name__}") from None
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise DataError(f"{p}: not UTF-8 (byte {e.start} cannot be read); ALCE files are UTF-8 JSON") from None


def read_alce_json(path: str | Path, text: str | None = None) -> tuple[list[tuple[int, Any]], dict[str, Any]] | None:
    """The raw items of an ALCE JSON file, numbered from 1, and its ``args`` (empty for a bare list); None when the
    file is JSONL (module docstring), to be read a line at a time. A ``.jsonl`` name is JSONL without a look."""
    p = Path(path)
    if p.suffix.lower() == ".jsonl":
        return None
    if text is None:
        text = decode(p)
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as e:
        if e.msg == "Extra data":  # several values one after another: JSONL
            return None
        raise DataError(f"{p}: not valid JSON ({e.msg} at line {e.lineno}); an ALCE file is {SHAPES}") from None
    if isinstance(doc, dict) and isinstance(doc.get("data"), list):
        return list(enumerate(doc["data"], 1)), doc.get("args") if isinstance(doc.get("args"), dict) else {}
    if isinstance(doc, list):
        return list(enumerate(doc, 1)), {}
    if isinstance(doc, dict) and "question" in doc:
        return None  # one item on one line: JSONL
    raise DataError(f"{p}: expected ALCE's {{\"data\": [...]}} or a list of questions")


def alce_items(path: str | Path) -> Iterator[tuple[str, Any]]:
    """``(where, item)`` for each raw item of an ALCE file, any shape, strictly (the datasets' reading: a line that
    is not JSON is an error); ``where`` names the file and the item's number (or line)."""
    p = Path(path)
    if not p.is_file():
        raise DataError(f"ALCE file not found: {p}")
    text = decode(p)
    doc = read_alce_json(p, text)
    if doc is not None:
        for n, item in doc[0]:
            yield f"{p}: item {n}", item
        return
    for n, line in enumerate(text_lines(text), 1):
        if line.strip():
            try:
                yield f"{p}:{n}", json.loads(line)
            except json.JSONDecodeError as e:
                raise DataError(f"{p}:{n}: not valid JSON ({e.msg})") from None


def alce_fields(item: Mapping[str, Any]) -> dict[str, Any]:
    """An ALCE item in vericite's sample shape (module docstring); ``id`` is absent when the item has none."""
    rest = {k: v for k, v in item.items() if k not in READ_FIELDS and k != "output"}
    fields: dict[str, Any] = {("passages" if k == "docs" else k): item[k] for k in READ_FIELDS if k in item and k != "id"}
    ident = item.get("id") if item.get("id") is not None else item.get("sample_id")
    if ident is not None:
        fields["id"] = str(ident)
    if rest:
        fields["meta"] = {"alce": rest}
    return fields


#: fields that make a record without ``passages`` an ALCE item (its ``answer`` then ALCE's reference, not an output)
_ALCE_KEYS = ("output", "annotations", "sample_id", "qa_pairs", "answers", "claims")


def is_alce_item(d: Mapping[str, Any]) -> bool:
    """Whether a record is an item as ALCE writes it (its documents in ``docs``, or ALCE's fields without
    ``passages``), not a record of vericite's shape (``passages``: a ``vericite generate`` record, a hand-written
    line; a line with neither is read as one, to be told what it lacks)."""
    return "docs" in d or ("passages" not in d and any(k in d for k in _ALCE_KEYS))


def alce_record(d: Any, position: int | None = None) -> Any:
    """A record to evaluate: an ALCE item (:func:`alce_fields`, its ``output`` as the answer) or a vericite record
    (kept; a generate record's ``output`` replaces its parsed ``answer``), with the reference long answers in
    ``meta.long_answers``. Anything that is not an object is returned as it is, to be refused by the reader."""
    if not isinstance(d, dict):
        return d
    if is_alce_item(d):
        rec = alce_fields(d)
        if rec.get("id") is None and position is not None:
            rec["id"] = f"item-{position}"
    else:
        rec = dict(d)
    if "output" in d:
        rec["answer"] = d["output"]  # the model's answer (a generate record's parsed "answer" is replaced by its raw output)
    meta = rec.get("meta") if isinstance(rec.get("meta"), dict) else {}
    own = meta.get("alce") if isinstance(meta.get("alce"), Mapping) else {}
    refs = reference_answers(own)
    if not refs and not is_alce_item(d) and "annotations" in d:
        refs = reference_answers({"annotations": d["annotations"]})  # a hand-written line with ASQA's annotations
    if refs and not isinstance(meta.get("long_answers"), list):
        rec["meta"] = {**meta, "long_answers": refs}
    return rec


def subtask_hint(path: str | Path, args: dict[str, Any] | None = None) -> str | None:
    """The sub-task an ALCE file names: its ``args.dataset_name``, else its name (ALCE's own rule for QAMPARI)."""
    for text in ((args or {}).get("dataset_name"), (args or {}).get("eval_file"), Path(path).name):
        if isinstance(text, str):
            low = text.lower()
            for sub in ("qampari", "asqa", "eli5"):
                if sub in low:
                    return sub
    return None
