"""Corpus files to documents, and documents to passages.

A *document* is a :class:`~vericite.types.Passage` as it comes in (any length); :func:`split` cuts it into
passages of at most ``words`` words with its title, DPR's convention (``psgs_w100.tsv``: disjoint 100-word
blocks, the last one shorter). A document that fits keeps its id; a longer one gives ``<id>#1``, ``<id>#2``, ...
(``meta["doc"]`` names the document). The same file and the same ``words`` give the same passages and ids.

Formats (``read_corpus(path, format="auto")``):

* ``jsonl``: one ``{"id", "title"?, "text", ...}`` per line; other fields are kept in ``meta``.
* ``dpr``: DPR's ``psgs_w100.tsv`` shape, ``id \\t text \\t title``, a header line first.
* ``alce``: the ``docs`` of ALCE's files (``{"data": [...]}``, a list, or JSONL), each item with
  ``docs: [{"title", "text", "id"?, "summary"?, "extraction"?, ...}]``. A document without an id is named by its
  content (``alce-`` and 16 hex digits of the sha256 of title and text); the same document given with several
  questions is one document. A question's own ``score`` is left out.
* ``conner``: CONNER's NQ test set (``topic \\t question \\t gold passage \\t short answer``): the gold passages
  are the documents (``nq-<line>``, the topic their title); a passage given for several questions is one document.
  Wizard of Wikipedia's files have the same four fields, and its marker ``no_passages_used`` (the wizard drew on no
  knowledge) in place of a sentence is not a document: it is reported as ``no text``.

Bad input never stops a read: an item without text, a duplicate id (the first is kept), bytes that are not UTF-8
(read as U+FFFD) are each counted and reported in :class:`CorpusReport` with where they are.
"""

from __future__ import annotations

import csv
import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Iterator

from ...errors import DataError
from ...jsonl import decode_line, preview, text_lines
from ...types import Passage

FORMATS = ("jsonl", "dpr", "alce", "conner")
#: DPR's passage length, in words
PASSAGE_WORDS = 100
#: Wizard of Wikipedia's gold-knowledge field where the wizard used no passage: not a document
NO_PASSAGE = "no_passages_used"
#: how many bad items a report keeps word for word (all are counted)
KEEP_BAD = 1000


@dataclass
class CorpusReport:
    """What a read saw: documents read, passages made, and every problem by where it is (``file:line`` or
    ``file:item N``), its kind (``no text``, ``duplicate id``, ``not UTF-8``, ``bad line``) and detail."""

    source: str = ""
    format: str = ""
    documents: int = 0
    passages: int = 0
    merged: int = 0  # the same document given again (ALCE, CONNER): read once
    problems: dict[str, int] = field(default_factory=dict)
    bad: list[dict[str, Any]] = field(default_factory=list)

    def problem(self, where: str, kind: str, detail: str = "") -> None:
        self.problems[kind] = self.problems.get(kind, 0) + 1
        if len(self.bad) < KEEP_BAD:
            self.bad.append({"where": where, "problem": kind, "detail": detail})

    @property
    def n_bad(self) -> int:
        return sum(self.problems.values())

    def to_dict(self) -> dict[str, Any]:
        return {"source": self.source, "format": self.format, "documents": self.documents, "passages": self.passages,
                "merged_duplicates": self.merged, "problems": dict(self.problems)}


# --------------------------------------------------------------------------- splitting


def split(doc: Passage, words: int = PASSAGE_WORDS) -> list[Passage]:
    """``doc`` as passages of at most ``words`` words (whitespace collapsed); ``words`` <= 0 keeps it whole."""
    tokens = doc.text.split()
    if words <= 0 or len(tokens) <= words:
        return [Passage(doc.id, " ".join(tokens), doc.title, doc.meta)]
    return [
        Passage(f"{doc.id}#{n}", " ".join(tokens[i : i + words]), doc.title, {"doc": doc.id})
        for n, i in enumerate(range(0, len(tokens), words), 1)
    ]


def passages(docs: Iterable[Passage], words: int = PASSAGE_WORDS, report: CorpusReport | None = None) -> Iterator[Passage]:
    """Every document split (:func:`split`); a passage id met before is a duplicate, reported and left out."""
    seen: set[str] = set()
    for doc in docs:
        for p in split(doc, words):
            if p.id in seen:
                if report is not None:
                    report.problem(f"passage {p.id}", "duplicate id", "a split passage has the id of another document; left out")
                continue
            seen.add(p.id)
            if report is not None:
                report.passages += 1
            yield p


# --------------------------------------------------------------------------- reading


def detect_format(path: Path) -> str:
    """The format of a corpus file from its name and first line (module docstring)."""
    suffix = path.suffix.lower()
    if suffix == ".tsv":
        return "dpr"
    if suffix == ".json":
        return "alce"
    first = _first_line(path)
    if suffix == ".jsonl" or first.lstrip().startswith("{"):
        try:
            obj = json.loads(first)
        except json.JSONDecodeError:
            return "jsonl"
        return "alce" if isinstance(obj, dict) and "docs" in obj else "jsonl"
    if first.count("\t") == 3:
        return "conner"
    if first.count("\t") == 2:
        return "dpr"
    raise DataError(f"{path}: cannot tell the corpus format from its name or first line: give --format {'|'.join(FORMATS)}")


def _first_line(path: Path) -> str:
    with open(path, "rb") as f:
        for raw in f:
            if raw.strip():
                return decode_line(raw.removeprefix(b"\xef\xbb\xbf"))[0]
    return ""


def read_corpus(path: str | Path, format: str = "auto", report: CorpusReport | None = None) -> Iterator[Passage]:
    """The documents of a corpus file, streamed; problems go to ``report``. A missing file or an unknown format
    is a DataError."""
    p = Path(path)
    if not p.is_file():
        raise DataError(f"corpus file not found: {p}")
    fmt = detect_format(p) if format == "auto" else format
    if fmt not in FORMATS:
        raise DataError(f"unknown corpus format {format!r}: choose auto, {', '.join(FORMATS)}")
    rep = report if report is not None else CorpusReport()
    rep.source, rep.format = str(p), fmt
    reader = {"jsonl": _jsonl, "dpr": _dpr, "alce": _alce, "conner": _conner_docs}[fmt]
    yield from checked(reader(p, rep), rep, merge=fmt in ("alce", "conner"))


def checked(items: Iterable[tuple[str, Passage]], rep: CorpusReport, *, merge: bool = False) -> Iterator[Passage]:
    """The documents of ``(where, document)`` pairs that have a text and an id not met before (each other one
    reported). ``merge``: a document given again with the same title and text is one document (ALCE gives
    the same passage with several questions), counted in ``rep.merged``."""
    seen: dict[str, tuple[str, str]] = {}
    for where, doc in items:
        if not doc.text.strip():
            rep.problem(where, "no text", f"document {doc.id!r} has an empty text")
            continue
        if not doc.id.strip():
            rep.problem(where, "no id", "no id; one is needed to cite the document")
            continue
        known = seen.get(doc.id)
        if known is not None:
            if merge and known == (doc.title, doc.text):
                rep.merged += 1
            else:
                rep.problem(where, "duplicate id", f"id {doc.id!r} was given before; the first is kept")
            continue
        seen[doc.id] = (doc.title, doc.text)
        rep.documents += 1
        yield doc


def _lines(path: Path, rep: CorpusReport) -> Iterator[tuple[int, str]]:
    """Numbered text lines (blank ones skipped); bytes that are not UTF-8 read as U+FFFD and reported."""
    with open(path, "rb") as f:
        for n, raw in enumerate(f, 1):
            if n == 1:
                raw = raw.removeprefix(b"\xef\xbb\xbf")
            line, replaced = decode_line(raw)
            if replaced:
                rep.problem(f"{path}:{n}", "not UTF-8", f"{replaced} bytes read as U+FFFD")
            line = line.rstrip("\r\n")
            if line.strip():
                yield n, line


def _text_field(d: dict[str, Any], key: str) -> str | None:
    v = d.get(key)
    return v if isinstance(v, str) else None


def _jsonl(path: Path, rep: CorpusReport) -> Iterator[tuple[str, Passage]]:
    for n, line in _lines(path, rep):
        where = f"{path}:{n}"
        try:
            d = json.loads(line)
        except json.JSONDecodeError as e:
            rep.problem(where, "bad line", f"not valid JSON ({e.msg})")
            continue
        if not isinstance(d, dict):
            rep.problem(where, "bad line", f"expected a JSON object, found {preview(d)}")
            continue
        text = _text_field(d, "text")
        if text is None:
            rep.problem(where, "no text", "no 'text' string")
            continue
        doc_id = d.get("id")
        if doc_id is None or str(doc_id).strip() == "":
            rep.problem(where, "no id", "no 'id'; one is needed to cite the document")
            continue
        meta = {k: v for k, v in d.items() if k not in ("id", "title", "text")}
        yield where, Passage(str(doc_id), text, str(d.get("title") or ""), meta)


def _dpr(path: Path, rep: CorpusReport) -> Iterator[tuple[str, Passage]]:
    first = True
    for n, line in _lines(path, rep):
        where = f"{path}:{n}"
        row = next(csv.reader([line], delimiter="\t"))
        if first:
            first = False
            if [c.strip().lower() for c in row[:3]] == ["id", "text", "title"]:
                continue
        if len(row) != 3:
            rep.problem(where, "bad line", f"expected 3 tab-separated fields (id, text, title), found {len(row)}")
            continue
        doc_id, text, title = row
        if not doc_id.strip():
            rep.problem(where, "no id", "empty id")
            continue
        yield where, Passage(doc_id.strip(), text, title)


def _alce_items(path: Path, rep: CorpusReport) -> Iterator[tuple[str, Any]]:
    raw = path.read_bytes().removeprefix(b"\xef\xbb\xbf")
    text, replaced = decode_line(raw)
    if replaced:
        rep.problem(str(path), "not UTF-8", f"{replaced} bytes read as U+FFFD")
    if path.suffix.lower() != ".jsonl":
        try:
            data = json.loads(text)
        except json.JSONDecodeError as e:
            if e.msg != "Extra data":  # more than one value: JSONL, read line by line below
                raise DataError(f"{path}: not valid JSON ({e.msg} at line {e.lineno}); ALCE files are {{\"data\": [...]}}, a list, or JSONL") from None
        else:
            if isinstance(data, dict) and isinstance(data.get("data"), list):
                data = data["data"]
            elif isinstance(data, dict):
                data = [data]  # one question
            if not isinstance(data, list):
                raise DataError(f"{path}: expected ALCE's {{\"data\": [...]}} or a list of questions")
            for n, item in enumerate(data, 1):
                yield f"{path}:item {n}", item
            return
    for n, line in enumerate(text_lines(text), 1):
        if not line.strip():
            continue
        try:
            yield f"{path}:{n}", json.loads(line)
        except json.JSONDecodeError as e:
            rep.problem(f"{path}:{n}", "bad line", f"not valid JSON ({e.msg})")


def content_id(prefix: str, title: str, text: str) -> str:
    return f"{prefix}-" + hashlib.sha256(f"{title}\n{text}".encode("utf-8")).hexdigest()[:16]


def _alce(path: Path, rep: CorpusReport) -> Iterator[tuple[str, Passage]]:
    for where, item in _alce_items(path, rep):
        docs = item.get("docs") if isinstance(item, dict) else None
        if not isinstance(docs, list):
            rep.problem(where, "bad line", "no 'docs' list")
            continue
        for j, d in enumerate(docs, 1):
            w = f"{where} doc {j}"
            text = _text_field(d, "text") if isinstance(d, dict) else None
            if text is None:
                rep.problem(w, "no text", "no 'text' string")
                continue
            title = str(d.get("title") or "")
            doc_id = str(d["id"]) if d.get("id") not in (None, "") else content_id("alce", title, text)
            meta = {k: v for k, v in d.items() if k not in ("id", "title", "text", "score")}
            yield w, Passage(doc_id, text, title, meta)


@dataclass(frozen=True)
class NQQuestion:
    """One line of CONNER's NQ test set: the question, its short answer, and its gold document's id."""

    line: int
    topic: str
    question: str
    answer: str
    doc_id: str


def read_conner_nq(path: str | Path, report: CorpusReport | None = None) -> tuple[list[Passage], list[NQQuestion]]:
    """CONNER's NQ test set: its gold passages as documents (``nq-<line>``; one passage given for several
    questions is one document, named by its first line) and its questions with their gold document."""
    p = Path(path)
    rep = report if report is not None else CorpusReport(str(p), "conner")
    docs: list[Passage] = []
    questions: list[NQQuestion] = []
    first_of: dict[tuple[str, str], str] = {}
    for n, line in _lines(p, rep):
        fields = line.split("\t")
        if len(fields) != 4:
            rep.problem(f"{p}:{n}", "bad line", f"expected 4 tab-separated fields (topic, question, passage, answer), found {len(fields)}")
            continue
        topic, question, passage, answer = (f.strip() for f in fields)
        if not passage or passage == NO_PASSAGE:
            rep.problem(f"{p}:{n}", "no text", f"WoW's {NO_PASSAGE} (no knowledge was used)" if passage else "empty gold passage")
            continue
        key = (topic, " ".join(passage.split()))
        doc_id = first_of.get(key)
        if doc_id is None:
            doc_id = first_of[key] = f"nq-{n}"
            docs.append(Passage(doc_id, passage, topic))
        questions.append(NQQuestion(n, topic, question, answer, doc_id))
    return docs, questions


def _conner_docs(path: Path, rep: CorpusReport) -> Iterator[tuple[str, Passage]]:
    own = CorpusReport()
    docs, questions = read_conner_nq(path, own)
    for kind, count in own.problems.items():
        rep.problems[kind] = rep.problems.get(kind, 0) + count
    rep.bad.extend(own.bad[: max(0, KEEP_BAD - len(rep.bad))])
    rep.merged += len(questions) - len(docs)
    for d in docs:
        yield f"{path}:{d.id.removeprefix('nq-')}", d
