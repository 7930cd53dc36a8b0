"""``nq-500``: CONNER's 500 Natural Questions (``../shared/data/conner/nq/random_testset/``), the project's
offline open-domain benchmark.

Each sample is a question with its short answer (``answers``: one answer, its one alias) and no passages: it is
answered from retrieval over the whole corpus, which is the 500 gold passages split into 100-word passages
(``vericite docs index nq-500 --index DIR``; 495 documents, the same passage given for several questions being
one). ``meta`` names the question's topic, its gold document and the passages it was split into
(``gold_passages``, for retrieval recall), so a run can measure retrieval without giving it the answer.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..errors import DataError
from ..knowledge.docs.loaders import PASSAGE_WORDS, CorpusReport, read_conner_nq, split
from ..paths import shared_data_dir
from ..types import Sample

NAME = "nq-500"
RELATIVE = Path("conner") / "nq" / "random_testset" / "nq_test_random_testset.txt"


def default_file() -> Path:
    return shared_data_dir() / RELATIVE  # type: ignore[operator]


def load_nq(path: str | Path | None = None, passage_words: int = PASSAGE_WORDS) -> list[Sample]:
    """The questions of CONNER's NQ test set as Samples (module docstring); a line that cannot be read is one
    DataError naming it (the file is the benchmark: no question may be dropped silently)."""
    p = Path(path) if path else default_file()
    if not p.is_file():
        raise DataError(f"nq-500: file not found: {p}")
    report = CorpusReport(str(p), "conner")
    docs, questions = read_conner_nq(p, report)
    if report.bad:
        first = report.bad[0]
        raise DataError(f"{first['where']}: {first['problem']}: {first['detail']}")
    pieces = {d.id: [x.id for x in split(d, passage_words)] for d in docs}
    return [
        Sample(
            id=f"nq-{q.line}",
            question=q.question,
            answers=[[q.answer]],
            meta={"topic": q.topic, "gold_document": q.doc_id, "gold_passages": pieces[q.doc_id], "passage_words": passage_words},
        )
        for q in questions
    ]


def reference_passages(path: str | Path | None = None) -> dict[str, str]:
    """The gold passages of CONNER's NQ file by document id (``meta.gold_document``): the reference knowledge
    of Tables 2–3 and the few-shot demonstrations of ``conner-knowledge``."""
    p = Path(path) if path else default_file()
    if not p.is_file():
        raise DataError(f"nq-500: file not found: {p}")
    docs, _ = read_conner_nq(p, CorpusReport(str(p), "conner"))
    return {d.id: d.text for d in docs}


#: a question naming a gold passage when no file of them is known (a file of questions, not ``nq-500``)
NO_PASSAGES_FILE = (
    "question {id} names gold_document {doc!r} without its passage (meta.reference_knowledge), and {where} has no file "
    "of gold passages: name CONNER's NQ file they are in (--method-arg reference_file=FILE), or give each question its "
    "passage in meta.reference_knowledge"
)


class GoldPassages:
    """The gold passages ``meta.gold_document`` names, read once from ``path`` (an NQ file in CONNER's format) when
    first asked for: a question naming one when there is no file (``path`` None: :data:`NO_PASSAGES_FILE`, never the
    shared default read instead) or one the file does not hold is a DataError naming it. ``where``: the dataset, for
    the message."""

    def __init__(self, path: str | Path | None, where: str = "its dataset") -> None:
        self.path, self.where = (str(path) if path else None), where
        self._by_id: dict[str, str] | None = None

    def passage(self, sample_id: str, doc: str) -> str:
        if self.path is None:
            raise DataError(NO_PASSAGES_FILE.format(id=sample_id, doc=doc, where=self.where))
        if self._by_id is None:
            if not Path(self.path).is_file():
                raise DataError(f"gold passages file not found: {self.path}")
            self._by_id = reference_passages(self.path)
        if doc not in self._by_id:
            raise DataError(f"question {sample_id} names gold_document {doc!r}, which {self.path} does not hold")
        return self._by_id[doc]


class NQDataset:
    """The registered ``nq-500`` (or ``nq-500:<file>`` for a copy elsewhere); its corpus is the same file
    (:class:`~vericite.protocols.CorpusProviding`)."""

    name = NAME

    def __init__(self, path: str | None = None) -> None:
        self.path = path or None

    def load(self, *, path: str | Path | None = None, passage_words: int = PASSAGE_WORDS, **options: Any) -> list[Sample]:
        return load_nq(path or self.path, passage_words)

    def corpus_file(self, **options: Any) -> str:
        return str(Path(self.path) if self.path else default_file())

    def reference_file(self, *, path: str | Path | None = None) -> str:
        """Where the gold passages of the questions :meth:`load` reads with ``path`` (``--data-path``) are: the same
        file (``protocols.ReferenceProviding``)."""
        return str(Path(path) if path else Path(self.path) if self.path else default_file())


def from_spec(arg: str, *, ctx: Any, **options: Any) -> NQDataset:
    """Registry factory: ``nq-500`` (the shared data) or ``nq-500:<file>``."""
    return NQDataset(arg)
