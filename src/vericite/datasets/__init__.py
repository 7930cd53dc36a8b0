"""Question sets. ``biokalma`` (the released BioKaLMA files, read where they are), ``demo`` (vericite's own
five questions), any JSONL file of questions (``jsonl:<path>``, or just the path), an ALCE file
(``alce:<path>``, or a path ending in ``.json``) and ALCE's real samples (``alce-asqa-10``, ``alce-eli5-30``,
``asqa-dev-500``: ``datasets/alce.py``), 2WikiMultihopQA and WebQuestions files (``2wiki:<path>``,
``webq:<path>``: ``datasets/qa_sets.py``). Registered in
``vericite/_builtins.py``; ``load_samples`` builds them through ``registry.create("datasets", ...)``. vericite's
hand-made BioKaLMA gold set (``biokalma-gold``) is in ``datasets/gold.py``.

JSONL format, one object per line: ``{"id", "question", "knowledge"?, "gold"?, "absent"?, "gold_entities"?}``,
where knowledge/gold/absent are lists of ``{"subject", "subject_label"?, "property", "value"}``. A line that is
not JSON or lacks a question is an error naming the file and line; so is a repeated id, but for ``load_samples``
given ``dropped`` (``vericite generate`` and ``run``), which keeps the first question of an id and lists the others
(``datasets/duplicates.py``, the rule ``vericite evaluate`` applies to answers). A line may also carry ``question_general``
(datasets built by ``vericite build biokalma``): read with ``phrasing="general"``, it is the question asked
(``question`` otherwise; lines without it keep ``question`` in both phrasings). A line's ``meta`` may name an NQ gold
passage (``gold_document``, as ``nq-500`` does): a file of questions has no file of gold passages
(:func:`reference_file` is None), so the line carries the passage (``meta.reference_knowledge``) or conner-knowledge
is given the file (``reference_file=FILE``); the shared nq-500 file is never read in its place (``nq.GoldPassages``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Iterator

from .. import jsonl, registry
from ..errors import DataError
from ..paths import package_data, shared_data_dir
from ..types import Sample
from .duplicates import collecting, distinct, duplicate

PHRASINGS = ("specific", "general")


def read_samples_jsonl(path: str | Path, phrasing: str = "specific") -> Iterator[Sample]:
    if phrasing not in PHRASINGS:
        raise DataError(f"unknown phrasing {phrasing!r}: choose specific or general")
    p = Path(path)
    if not p.is_file():
        raise DataError(f"dataset file not found: {p}")
    seen: dict[str, int] = {}  # id -> its line
    for n, d in jsonl.read_numbered(p, policy="raise", torn="read"):
        if phrasing == "general" and isinstance(d.get("question_general"), str) and d["question_general"].strip():
            d = {**d, "question": d["question_general"], "meta": {**(d.get("meta") or {}), "phrasing": "general"}}
        try:
            s = Sample.from_dict(d)
        except (ValueError, KeyError, TypeError) as e:
            raise DataError(f"{p}:{n}: {e}") from None
        if not s.question.strip():  # a model asked nothing answers anything: every metric of it would be noise
            raise DataError(f"{p}:{n}: the question is empty")
        if not s.id:
            s.id = f"{p.stem}-{n}"
        if s.id in seen:  # an error, or within duplicates.collecting left out (the first kept)
            duplicate(f"{p}:{n}", s.id, f"line {seen[s.id]}", f"{p}:{n}: duplicate id {s.id!r}")
            continue
        seen[s.id] = n
        yield s


def biokalma(phrasing: str = "specific", path: str | Path | None = None) -> list[Sample]:
    from ..knowledge.loaders import load_biokalma_samples

    if phrasing not in PHRASINGS:
        raise DataError(f"unknown phrasing {phrasing!r}: choose specific or general")
    folder = Path(path) if path else shared_data_dir() / "biokalma" / "dataset"
    if folder.is_dir():
        folder = folder / ("complex_question_graph.json" if phrasing == "specific" else "simple_question_graph.json")
    samples, _stats = load_biokalma_samples(folder, phrasing)
    return samples


def demo(phrasing: str = "specific", path: str | Path | None = None) -> list[Sample]:
    return list(read_samples_jsonl(path or package_data("demo_questions.jsonl")))


def biokalma_demonstration(phrasing: str = "specific") -> str | None:
    """BioKaLMA's released one-shot prompt for the phrasing, where the shared data holds it (else None)."""
    name = "answer_question_complex_prompt.json" if phrasing == "specific" else "answer_question_simple_prompt.json"
    data = shared_data_dir(required=False)
    if data and (data / "biokalma" / "prompt" / name).is_file():
        return str(data / "biokalma" / "prompt" / name)
    return None


class LoaderDataset:
    """A :class:`~vericite.protocols.Dataset` whose samples come from a loader ``(phrasing, path) -> samples``;
    ``path`` given when it was built (``biokalma:<folder>``) is the default of ``load``. ``demonstrations``:
    ``phrasing -> file or None``, the demonstration it supplies (:class:`~vericite.protocols.Demonstrating`)."""

    def __init__(
        self, name: str, loader: Callable[..., list[Sample]], path: str | None = None, demonstrations: Callable[[str], str | None] | None = None
    ) -> None:
        self.name = name
        self.loader = loader
        self.path = path or None
        self.demonstrations = demonstrations

    def load(self, *, phrasing: str = "specific", path: str | Path | None = None, **options: Any) -> list[Sample]:
        return self.loader(phrasing=phrasing, path=path or self.path, **options)

    def demonstration(self, *, phrasing: str = "specific", **options: Any) -> str | None:
        return self.demonstrations(phrasing) if self.demonstrations is not None else None

    def __repr__(self) -> str:
        return f"LoaderDataset({self.name!r}, path={self.path!r})"


def _jsonl(phrasing: str = "specific", path: str | Path | None = None) -> list[Sample]:
    if not path:
        raise DataError("the jsonl dataset needs a file: jsonl:<path>")
    return list(read_samples_jsonl(path, phrasing))


def biokalma_from_spec(arg: str, *, ctx: Any, **options: Any) -> LoaderDataset:
    """Registry factory: ``biokalma`` (the released files in ../shared/data) or ``biokalma:<folder or file>``."""
    return LoaderDataset("biokalma", biokalma, arg, biokalma_demonstration)


def demo_from_spec(arg: str, *, ctx: Any, **options: Any) -> LoaderDataset:
    """Registry factory: ``demo``, vericite's own five questions."""
    return LoaderDataset("demo", demo, arg)


MINI_FILE = Path("datasets") / "biokalma-mini.jsonl"


def biokalma_mini(phrasing: str = "specific", path: str | Path | None = None) -> list[Sample]:
    """vericite's own BioKaLMA-style dataset with minimum knowledge sets (``datasets/biokalma-mini.jsonl``, card
    ``datasets/biokalma-mini.md``): read from the checkout, else from the current folder, unless a file is given."""
    if path:
        return list(read_samples_jsonl(path, phrasing))
    from ..paths import repo_root

    for base in (repo_root(), Path.cwd()):
        if (base / MINI_FILE).is_file():
            return list(read_samples_jsonl(base / MINI_FILE, phrasing))
    raise DataError(f"dataset biokalma-mini: {MINI_FILE} not found in the checkout ({repo_root()}) nor in the current folder: run from the repository, or give the file (biokalma-mini:<path>)")


def biokalma_mini_from_spec(arg: str, *, ctx: Any, **options: Any) -> LoaderDataset:
    """Registry factory: ``biokalma-mini`` (``datasets/biokalma-mini.jsonl`` of the checkout) or ``biokalma-mini:<file>``."""
    return LoaderDataset("biokalma-mini", biokalma_mini, arg)


def jsonl_from_spec(arg: str, *, ctx: Any, **options: Any) -> LoaderDataset:
    """Registry factory: ``jsonl:<path>``, any JSONL file of questions (module docstring)."""
    return LoaderDataset("jsonl", _jsonl, arg)


def load_samples(spec: str, phrasing: str = "specific", path: str | Path | None = None, dropped: list[dict[str, Any]] | None = None) -> list[Sample]:
    """A registered dataset name (``registry.create("datasets", spec)``), a path to a JSONL file of questions,
    or an ALCE ``.json`` file (``datasets/alce.py``). A repeated id is an error; with ``dropped`` (a list) only
    the first question of an id is kept and each one left out is appended to it (``datasets/duplicates.py``)."""
    if dropped is not None:
        with collecting(dropped):
            return distinct(load_samples(spec, phrasing, path), dropped)
    kind = _kind(spec)
    if kind == "alce":
        from .alce import read_alce

        return read_alce(spec)
    if kind == "jsonl":
        return list(read_samples_jsonl(spec, phrasing))
    return registry.create("datasets", spec).load(phrasing=phrasing, path=path)


def _kind(spec: str) -> str:
    """How :func:`load_samples` reads ``spec``: ``registered`` (a dataset name, or ``name:<file>``, a .jsonl one
    too), ``alce`` (an ALCE ``.json`` file) or ``jsonl`` (a JSONL file of questions, or another existing file)."""
    if ":" in spec and not Path(spec).is_file() and spec.split(":", 1)[0] in registry.registry_for("datasets"):
        return "registered"
    if spec.lower().endswith(".json") and Path(spec).is_file():
        return "alce"
    if spec.endswith(".jsonl") or Path(spec).is_file():
        return "jsonl"
    return "registered"


def reference_file(spec: str, path: str | Path | None = None) -> str | None:
    """The file the reference passages of ``spec``'s questions are read from, as :func:`load_samples` reads them
    with ``path`` (``--data-path``): a registered dataset's ``reference_file`` (``protocols.ReferenceProviding``;
    nq-500: the questions' own file); None for a file of questions or a dataset without one."""
    from ..protocols import ReferenceProviding

    if _kind(spec) != "registered" or registry.datasets.split(spec)[0] not in registry.datasets:
        return None  # a file of questions, or a name load_samples refuses (said there)
    dataset = registry.create("datasets", spec)
    return dataset.reference_file(path=path) if isinstance(dataset, ReferenceProviding) else None
