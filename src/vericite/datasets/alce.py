"""ALCE question files as datasets: ``alce:<file>`` (``{"data": [...]}``, a list, or JSONL; ``vericite generate
--dataset FILE.json`` reads a ``.json`` file this way too) and the real samples in ``../shared/data/alce/samples/``,
read in place: ``alce-asqa-10`` (the first 10 ASQA eval questions with their 100 GTR documents),
``alce-eli5-30`` (30 ELI5 questions with their top-10 BM25 documents and claims) and ``asqa-dev-500`` (500 ASQA
dev questions with their sub-questions and long answers, no documents).

The file is read by ``tasks/alce_inputs.py``, the one reader of ALCE's files (``alce_items``, ``alce_fields``).
An item becomes a :class:`~vericite.types.Sample`: ``question``; its id from ``id``, else ASQA's ``sample_id``,
else ``<file stem>-<n>``; ``docs`` as ``passages`` (each document's ``summary``, ``extraction``, ``score``,
``url`` kept in its meta); ASQA ``qa_pairs``, QAMPARI ``answers`` (each answer a list of its aliases), ELI5
``claims``. Every other field of the item (ALCE's reference ``answer``, ASQA's ``annotations`` and
``wikipages``, ELI5's ``question_ctx`` ...) is kept unchanged in ``meta["alce"]``: ``vericite generate`` writes it
into its records, ``vericite evaluate --task alce`` reads the reference long answers from there
(``metrics.alce.long_answers``), and an export back to ALCE's shape (``runs/alce_export.py``) gives ALCE's
``eval.py`` every field it reads. A file, item or document that cannot be read, bytes that are not UTF-8 and a
repeated id are one error line naming the file and item (``vericite generate`` and ``run`` keep the first
question of a repeated id and leave the others out with a warning: ``datasets/duplicates.py``).

:func:`subtask_of` says which of ALCE's sub-tasks a sample's prompt is: the ALCE task's reading of its fields
(``metrics.alce.detect_subtask``: ``qa_pairs`` -> asqa, ``claims`` -> eli5, ``answers`` with more than one
answer -> qampari), with a short-answer set's questions (NQ's) and questions without gold asked as ASQA's, whose
prompt asks for a short cited answer.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..errors import DataError
from .duplicates import first_of_each_id
from ..metrics.alce import detect_subtask
from ..paths import shared_data_dir
from ..tasks.alce_inputs import alce_fields, alce_items
from ..types import Sample
from . import LoaderDataset

#: the sub-tasks ALCE has prompts for
SUBTASKS = ("asqa", "qampari", "eli5")
#: the real ALCE slices in ../shared/data/alce/samples (README there)
SAMPLES = {
    "alce-asqa-10": "asqa_eval_gtr_top100_first10.json",
    "alce-eli5-30": "eli5_eval_bm25_top10_30q.json",
    "asqa-dev-500": "asqa_dev_first500.jsonl",
}


def subtask_of(sample: Sample) -> str:
    """ALCE's sub-task of a sample's prompt, from its gold fields (module docstring)."""
    sub = detect_subtask([sample])
    return sub if sub in SUBTASKS else "asqa"


def sample_from_item(item: Any, where: str, default_id: str) -> Sample:
    """One ALCE item as a Sample (module docstring); a DataError naming ``where`` when it cannot be read."""
    if not isinstance(item, dict):
        raise DataError(f"{where}: expected a JSON object, not {type(item).__name__}")
    docs = item.get("docs")
    if isinstance(docs, list):
        bad = [j for j, d in enumerate(docs, 1) if not isinstance(d, dict) or not isinstance(d.get("text"), str)]
        if bad:
            raise DataError(f"{where}: document {bad[0]} has no 'text' string")
    fields = alce_fields(item)
    try:
        sample = Sample.from_dict({**fields, "id": fields.get("id", "")})
    except (ValueError, KeyError, TypeError) as e:
        raise DataError(f"{where}: {e}") from None
    if not sample.id:
        sample.id = default_id
    return sample


def read_alce(path: str | Path) -> list[Sample]:
    """Every item of an ALCE file as a Sample; ids must be distinct."""
    p = Path(path)
    return first_of_each_id((where, sample_from_item(item, where, f"{p.stem}-{n}")) for n, (where, item) in enumerate(alce_items(p), 1))


def shared_sample(name: str) -> Path:
    """Where one of the real ALCE samples (:data:`SAMPLES`) is; one line when the shared data is not there."""
    data = shared_data_dir(required=False)
    f = data / "alce" / "samples" / SAMPLES[name] if data else None
    if f is None or not f.is_file():
        raise DataError(f"dataset {name}: {SAMPLES[name]} is not in ../shared/data/alce/samples (set VERICITE_DATA)")
    return f


def _loader(name: str | None) -> Any:
    def load(phrasing: str = "specific", path: str | Path | None = None, **options: Any) -> list[Sample]:
        if path:
            return read_alce(path)
        if name is None:
            raise DataError("the alce dataset needs a file: alce:<file.json or .jsonl>")
        return read_alce(shared_sample(name))

    return load


def from_spec(arg: str, *, ctx: Any, **options: Any) -> LoaderDataset:
    """Registry factory: ``alce:<file>``, any ALCE file (``.json`` or ``.jsonl``)."""
    return LoaderDataset("alce", _loader(None), arg)


def asqa10_from_spec(arg: str, *, ctx: Any, **options: Any) -> LoaderDataset:
    return LoaderDataset("alce-asqa-10", _loader("alce-asqa-10"), arg)


def eli5_30_from_spec(arg: str, *, ctx: Any, **options: Any) -> LoaderDataset:
    return LoaderDataset("alce-eli5-30", _loader("alce-eli5-30"), arg)


def asqa_dev500_from_spec(arg: str, *, ctx: Any, **options: Any) -> LoaderDataset:
    return LoaderDataset("asqa-dev-500", _loader("asqa-dev-500"), arg)
