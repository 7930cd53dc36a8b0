"""Short-answer question sets in their released shapes, for users who have the files: ``2wiki:<file>``
(2WikiMultihopQA) and ``webq:<file>`` (WebQuestions). Their questions are answered and scored as ALCE's
short-answer sub-task (``vericite evaluate --task alce-short``: ``answer_em``, ``answer_f1``): each sample has one
answer, a list of its accepted aliases.

A file is JSON — a list of items or ``{"data": [...]}`` — or JSONL, one item a line (a ``.jsonl`` name, or JSON
values one after another). Bytes that are not UTF-8, a file that is not JSON, an item that cannot be read and a
repeated id are one error line naming the file and the item (``item N``, or ``:LINE`` in JSONL); ``vericite
generate`` and ``run`` keep the first question of a repeated id and leave the others out with a warning
(``datasets/duplicates.py``).

2WikiMultihopQA (its released ``train/dev/test.json``): ``_id``, ``type``, ``question``, ``answer``, ``context``
as ``[[title, [sentence, ...]], ...]``, ``supporting_facts`` as ``[[title, sentence number], ...]``,
``evidences`` as ``[[subject, relation, object], ...]``. The answer's aliases are ``answer`` followed by
``answer_aliases`` where the file has them; the context's paragraphs are the sample's passages (id
``<_id>#<k>``, 1-based; the title, and the sentences joined by a space) in their order; ``type``,
``supporting_facts``, ``evidences`` and any other field go to ``meta``. The test split (no ``answer``) gives
samples without answers. The column form Hugging Face writes (``context: {"title": [...], "sentences": [...]}``,
``supporting_facts: {"title": [...], "sent_id": [...]}``) is read too.

WebQuestions: the original ``{"url", "targetValue", "utterance"}`` (``targetValue`` a SEMPRE LispTree,
``(list (description "Jazmyn Bieber") (description Abduction))``: a quoted description may hold ``\\"`` and
``\\\\``), or the common ``{"question", "answers": [...]}`` (Hugging Face's, with ``url``). The aliases are the
descriptions (the answers), in order, repeats dropped; ``url`` and any other field go to ``meta``. Neither shape
has ids: ``<file stem>-<n>``, ``n`` the item's number.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable, Iterator

from ..errors import DataError
from ..jsonl import text_lines
from ..types import Passage, Sample
from . import LoaderDataset
from .duplicates import first_of_each_id

SHAPES = 'a JSON list, {"data": [...]}, or JSONL'


def read_items(path: str | Path, what: str) -> Iterator[tuple[str, int, Any]]:
    """``(where, n, item)`` for each raw item of a question file of one of :data:`SHAPES`, ``n`` from 1."""
    p = Path(path)
    if not p.is_file():
        raise DataError(f"{what} file not found: {p}")
    try:
        text = p.read_bytes().decode("utf-8-sig")
    except OSError as e:
        raise DataError(f"cannot read {p}: {e.strerror or type(e).__name__}") from None
    except UnicodeDecodeError as e:
        raise DataError(f"{p}: not UTF-8 (byte {e.start} cannot be read); a {what} file is UTF-8 JSON") from None
    doc: Any = None
    if p.suffix.lower() != ".jsonl":
        try:
            doc = json.loads(text)
        except json.JSONDecodeError as e:
            if e.msg != "Extra data":  # several values one after another: JSONL
                raise DataError(f"{p}: not valid JSON ({e.msg} at line {e.lineno}); a {what} file is {SHAPES}") from None
    if isinstance(doc, dict) and isinstance(doc.get("data"), list):
        doc = doc["data"]
    if isinstance(doc, list):
        for n, item in enumerate(doc, 1):
            yield f"{p}: item {n}", n, item
        return
    if isinstance(doc, dict):  # one item
        yield f"{p}: item 1", 1, doc
        return
    if doc is not None:
        raise DataError(f"{p}: expected {SHAPES} of {what} questions, not a JSON {type(doc).__name__}")
    n = 0
    for line_no, line in enumerate(text_lines(text), 1):
        if line.strip():
            n += 1
            try:
                yield f"{p}:{line_no}", n, json.loads(line)
            except json.JSONDecodeError as e:
                raise DataError(f"{p}:{line_no}: not valid JSON ({e.msg})") from None


def _strings(v: Any, what: str) -> list[str]:
    if not isinstance(v, list) or not all(isinstance(x, str) for x in v):
        raise ValueError(f"{what} must be a list of strings")
    return v


def _question(item: dict[str, Any], *keys: str) -> str:
    for k in keys:
        if isinstance(item.get(k), str) and item[k].strip():
            return item[k]
    raise ValueError(f"no {' or '.join(repr(k) for k in keys)} string")


def _aliases(values: list[str]) -> list[str]:
    return list(dict.fromkeys(v for v in values if v.strip()))


# --------------------------------------------------------------------------- 2WikiMultihopQA


def _paragraphs(context: Any) -> list[tuple[str, list[str]]]:
    if isinstance(context, dict):  # Hugging Face's columns
        titles, sentences = context.get("title"), context.get("sentences")
        if not isinstance(titles, list) or not isinstance(sentences, list) or len(titles) != len(sentences):
            raise ValueError("'context' as columns needs 'title' and 'sentences' lists of one length")
        context = [list(x) for x in zip(titles, sentences)]
    if not isinstance(context, list):
        raise ValueError("'context' must be a list of [title, [sentences...]]")
    out = []
    for k, para in enumerate(context, 1):
        if not (isinstance(para, list) and len(para) == 2 and isinstance(para[0], str)):
            raise ValueError(f"context paragraph {k} must be [title, [sentences...]]")
        out.append((para[0], _strings(para[1], f"context paragraph {k}'s sentences")))
    return out


def _facts(facts: Any) -> list[list[Any]]:
    if isinstance(facts, dict):  # Hugging Face's columns
        facts = [list(x) for x in zip(facts.get("title") or [], facts.get("sent_id") or [])]
    if not isinstance(facts, list) or not all(
        isinstance(f, list) and len(f) == 2 and isinstance(f[0], str) and isinstance(f[1], int) and not isinstance(f[1], bool) for f in facts
    ):
        raise ValueError("'supporting_facts' must be a list of [title, sentence number]")
    return facts


def twowiki_sample(item: dict[str, Any], default_id: str) -> Sample:
    ident = item.get("_id", item.get("id"))
    sid = default_id if ident is None or str(ident) == "" else str(ident)
    question = _question(item, "question")
    answers = None
    if item.get("answer") is not None:
        if not isinstance(item["answer"], str) or not item["answer"].strip():
            raise ValueError("'answer' must be a non-empty string")
        answers = [_aliases([item["answer"], *_strings(item.get("answer_aliases", []), "'answer_aliases'")])]
    passages = [
        Passage(f"{sid}#{k}", " ".join(s.strip() for s in sentences if s.strip()), title)
        for k, (title, sentences) in enumerate(_paragraphs(item.get("context", [])), 1)
    ]
    meta = {k: v for k, v in item.items() if k not in ("_id", "id", "question", "answer", "answer_aliases", "context")}
    if "supporting_facts" in meta:
        meta["supporting_facts"] = _facts(meta["supporting_facts"])
    return Sample(id=sid, question=question, passages=passages, answers=answers, meta=meta)


# --------------------------------------------------------------------------- WebQuestions


def parse_target_value(text: str) -> list[str]:
    """The descriptions of a WebQuestions ``targetValue``, ``(list (description "A \\"B\\"") (description C))``
    -> ``['A "B"', 'C']`` (SEMPRE's LispTree: a quoted atom's backslash takes the next character as it is)."""
    tokens: list[tuple[str, bool]] = []  # (token, quoted)
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c.isspace():
            i += 1
        elif c in "()":
            tokens.append((c, False))
            i += 1
        elif c == '"':
            buf, i = [], i + 1
            while i < n and text[i] != '"':
                if text[i] == "\\":
                    i += 1
                    if i == n:
                        break
                buf.append(text[i])
                i += 1
            if i >= n:
                raise ValueError("'targetValue': a quoted description is not closed")
            tokens.append(("".join(buf), True))
            i += 1
        else:
            j = i
            while j < n and not text[j].isspace() and text[j] not in '()"':
                j += 1
            tokens.append((text[i:j], False))
            i = j
    shape = "'targetValue' must be (list (description ...) ...)"
    if len(tokens) < 3 or tokens[:2] != [("(", False), ("list", False)] or tokens[-1] != (")", False):
        raise ValueError(shape)
    out, body = [], tokens[2:-1]
    for k in range(0, len(body), 4):
        part = body[k : k + 4]
        if len(part) != 4 or part[:2] != [("(", False), ("description", False)] or part[3] != (")", False):
            raise ValueError(shape)
        if part[2] in (("(", False), (")", False)):
            raise ValueError(shape)
        out.append(part[2][0])
    return out


def webq_sample(item: dict[str, Any], default_id: str) -> Sample:
    question = _question(item, "utterance", "question")
    if isinstance(item.get("targetValue"), str):
        values = parse_target_value(item["targetValue"])
    elif "answers" in item:
        values = _strings(item["answers"], "'answers'")
    else:
        raise ValueError("no 'targetValue' (the original shape) or 'answers' list")
    aliases = _aliases(values)
    if not aliases:
        raise ValueError("no answer")
    ident = item.get("id")
    meta = {k: v for k, v in item.items() if k not in ("id", "utterance", "question", "targetValue", "answers")}
    return Sample(id=default_id if ident is None or str(ident) == "" else str(ident), question=question, answers=[aliases], meta=meta)


# --------------------------------------------------------------------------- datasets

READERS: dict[str, tuple[str, Callable[[dict[str, Any], str], Sample]]] = {
    "2wiki": ("2WikiMultihopQA", twowiki_sample),
    "webq": ("WebQuestions", webq_sample),
}


def read_qa_set(name: str, path: str | Path) -> list[Sample]:
    """Every item of a ``2wiki`` or ``webq`` file as a Sample (module docstring); ids must be distinct."""
    what, to_sample = READERS[name]
    p = Path(path)

    def located() -> Iterator[tuple[str, Sample]]:
        for where, n, item in read_items(p, what):
            if not isinstance(item, dict):
                raise DataError(f"{where}: expected a JSON object, not {type(item).__name__}")
            try:
                sample = to_sample(item, f"{p.stem}-{n}")
            except ValueError as e:
                raise DataError(f"{where}: {e}") from None
            yield where, sample

    return first_of_each_id(located())


def _loader(name: str) -> Callable[..., list[Sample]]:
    def load(phrasing: str = "specific", path: str | Path | None = None, **options: Any) -> list[Sample]:
        if not path:
            raise DataError(f"the {name} dataset needs a file: {name}:<file.json or .jsonl>")
        return read_qa_set(name, path)

    return load


def twowiki_from_spec(arg: str, *, ctx: Any, **options: Any) -> LoaderDataset:
    """Registry factory: ``2wiki:<file>``, a 2WikiMultihopQA file (module docstring)."""
    return LoaderDataset("2wiki", _loader("2wiki"), arg)


def webq_from_spec(arg: str, *, ctx: Any, **options: Any) -> LoaderDataset:
    """Registry factory: ``webq:<file>``, a WebQuestions file (module docstring)."""
    return LoaderDataset("webq", _loader("webq"), arg)
