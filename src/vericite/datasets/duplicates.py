"""A question set's repeated ids, by the rule ``vericite evaluate`` applies to answers (``evaluate/inputs.py``):
only the first question of an id is kept; a later one is left out, recorded with where it is and where the
first one is (``duplicate id q0 (first at line 1)``).

The file readers (JSONL, ALCE, 2WikiMultihopQA and WebQuestions files) know where each question is and call
:func:`duplicate` on an id met before (ALCE's and the QA sets' through :func:`first_of_each_id`). Within :func:`collecting` (``load_samples(..., dropped=...)``, which
``vericite generate`` and ``vericite run`` use) the question is recorded and left out; outside it (a direct read)
it stays the one error line it was. A dataset that reads none of these files (a plugin's, BioKaLMA's) is checked
by position after it is loaded (:func:`distinct`: ``question N``).
"""

from __future__ import annotations

import contextlib
import contextvars
from typing import Any, Iterable, Iterator

from ..errors import DataError
from ..types import Sample

_collector: contextvars.ContextVar[list[dict[str, Any]] | None] = contextvars.ContextVar("vericite_duplicate_questions", default=None)


@contextlib.contextmanager
def collecting(dropped: list[dict[str, Any]]) -> Iterator[list[dict[str, Any]]]:
    """Within it, a reader's repeated id is appended to ``dropped`` (``{"where", "id", "reason"}``), not raised."""
    token = _collector.set(dropped)
    try:
        yield dropped
    finally:
        _collector.reset(token)


def duplicate(where: str, sid: str, first: str, message: str | None = None) -> None:
    """The question at ``where`` repeats the id ``sid`` of the one at ``first``: recorded when collecting (the
    caller then leaves it out), else a :class:`DataError` (``message``, or ``where: duplicate id 'sid'``)."""
    dropped = _collector.get()
    if dropped is None:
        raise DataError(message or f"{where}: duplicate id {sid!r} (first at {first})")
    dropped.append({"where": where, "id": sid, "reason": f"duplicate id {sid} (first at {first})"})


def first_of_each_id(located: Iterable[tuple[str, Sample]]) -> list[Sample]:
    """The samples of a file reader, each with where it is: the first of each id kept, a later one passed to
    :func:`duplicate` (recorded and left out when collecting, else the error)."""
    seen: dict[str, str] = {}
    out: list[Sample] = []
    for where, sample in located:
        if sample.id in seen:
            duplicate(where, sample.id, seen[sample.id])
            continue
        seen[sample.id] = where
        out.append(sample)
    return out


def distinct(samples: list[Sample], dropped: list[dict[str, Any]]) -> list[Sample]:
    """``samples`` with only the first of each id, the others appended to ``dropped`` by position (question N)."""
    first: dict[str, int] = {}
    kept: list[Sample] = []
    for n, s in enumerate(samples, 1):
        if s.id in first:
            dropped.append({"where": f"question {n}", "id": s.id, "reason": f"duplicate id {s.id} (first at question {first[s.id]})"})
            continue
        first[s.id] = n
        kept.append(s)
    return kept


def left_out_note(dropped: list[dict[str, Any]], dataset: str) -> str:
    """The one warning line for the questions of ``dataset`` left out as repeated ids ('' when none)."""
    if not dropped:
        return ""
    n = len(dropped)
    s = "s" if n != 1 else ""
    more = f"; {n - 1} more" if n > 1 else ""
    return (
        f"warning: {n} question{s} of dataset {dataset} left out ({n} duplicate id{s}: only the first question of an "
        f"id is asked): {dropped[0]['where']}: {dropped[0]['reason']}{more}"
    )
