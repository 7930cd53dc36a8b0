"""An index folder, read: its passages and the retrievers built over them.

Layout of ``DIR`` (written by ``build.py``; ``index.json`` last, so a folder with it is complete)::

    index.json        format and version, the corpus (source, sha256, format, counts, split rule), each retriever
                      built (bm25: package and settings; dense: the embedder, its model files' sha256, dimension)
                      and the fusion settings
    passages.jsonl    one passage a line, {"id", "title"?, "text", ...}
    offsets.npy       where each line starts (n + 1 int64, memory-mapped): passage i without reading the others
    ids.json          the passage id of each line (null: replaced by a later line)
    bm25/             the bm25s index (memory-mapped) and rows.npy, the lines it covers
    dense/vectors.npy one float32 unit vector per line (memory-mapped)
    bad_items.jsonl   what the corpus file held that could not be indexed, one problem a line

An index of another format version is refused in one line (rebuild it); so is an incomplete one (an
interrupted build: run the same ``vericite docs index`` again to resume it), and a damaged one (a file of it
missing, cut short or not what it should be: :meth:`PassageIndex.reading`).
"""

from __future__ import annotations

import json
from contextlib import contextmanager
from functools import cached_property
from pathlib import Path
from typing import Any, Iterator

import numpy as np

from ...errors import DataError
from ...types import Passage

FORMAT = "vericite-docs-index"
VERSION = 1
RETRIEVERS = ("bm25", "dense", "hybrid")
#: reciprocal-rank fusion: score = sum over rankings of 1 / (RRF_K + rank), rank from 1 (Cormack et al. 2009)
RRF_K = 60
#: how deep each ranking is read for fusion and re-ranking
FUSION_DEPTH = 100


class IndexUnusable(DataError):
    """An index folder that cannot be used: missing, incomplete, or of another version."""


def passage_text(p: Passage) -> str:
    """What the retrievers read of a passage: its title, a newline and its text (the text alone without one)."""
    return f"{p.title}\n{p.text}" if p.title else p.text


def read_meta(folder: Path) -> dict[str, Any] | None:
    """``index.json`` of ``folder`` checked for format and version; None when the folder has none."""
    f = folder / "index.json"
    if not f.is_file():
        return None
    try:
        meta = json.loads(f.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise IndexUnusable(f"{f} cannot be read ({type(e).__name__}): rebuild the index with vericite docs index FILE --index DIR (into a new folder)") from None
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        raise IndexUnusable(f"{folder} is not a vericite document index (its index.json says format {meta.get('format') if isinstance(meta, dict) else None!r})")
    if meta.get("version") != VERSION:
        raise IndexUnusable(
            f"index {folder} has format version {meta.get('version')!r}, this vericite reads version {VERSION}: "
            "rebuild it with vericite docs index FILE --index DIR (into a new folder)"
        )
    return meta


class PassageIndex:
    """An index folder opened read-only (module docstring). ``passage(row)``, ``get(id)``, and the retrievers'
    parts, each loaded memory-mapped when first asked for."""

    def __init__(self, folder: str | Path) -> None:
        self.folder = Path(folder)
        meta = read_meta(self.folder)
        if meta is None:
            if (self.folder / ".build").is_dir():
                raise IndexUnusable(f"index {self.folder} is incomplete (its build was interrupted): run the same vericite docs index command again to resume it")
            raise IndexUnusable(f"no document index in {self.folder}: build one with vericite docs index FILE --index {self.folder}")
        self.meta = meta
        with self.reading("offsets.npy"):
            self._offsets = np.load(self.folder / "offsets.npy", mmap_mode="r")

    @contextmanager
    def reading(self, what: str) -> Iterator[None]:
        """Reading the index's file or folder ``what``: a file missing, cut short, or not what ``build.py`` wrote
        (a damaged folder, or one written by hand) is one :class:`IndexUnusable` line, not a traceback. ``EOFError``
        (an empty .npy) is caught too: click would print it as "Aborted!"."""
        try:
            yield
        except IndexUnusable:
            raise
        except (OSError, ValueError, EOFError, IndexError, KeyError) as e:
            detail = f"{type(e).__name__}: {e}" if str(e) else type(e).__name__
            raise IndexUnusable(
                f"index {self.folder} is damaged ({what}: {detail[:200]}): rebuild it with vericite docs index FILE --index DIR (into a new folder)"
            ) from None

    def check(self) -> "PassageIndex":
        """Open every part the index says it has (and its first and last passage): a damaged one is an
        :class:`IndexUnusable` line now, not a surprise at the first search."""
        with self.reading("ids.json"):
            if len(self.ids) != len(self):
                raise ValueError(f"{len(self.ids)} ids for {len(self)} passages")
        if len(self):
            self.passages([0, len(self) - 1])
        for part in self.meta.get("retrievers", {}):
            if part in ("bm25", "dense"):
                getattr(self, part)
        return self

    def __len__(self) -> int:
        return max(0, len(self._offsets) - 1)

    def corpus_identity(self) -> dict[str, Any]:
        """What the index holds: the corpus file's sha256 and the passages indexed (its ``index.json``). A run's
        manifest records it (``generate --resume``) and so does an evaluation's checkpoint (``evaluate --resume``,
        ``--index``): an index rebuilt in place from another corpus is another retrieval."""
        corpus = self.meta.get("corpus") or {}
        return {"sha256": corpus.get("sha256"), "passages": corpus.get("passages")}

    @property
    def retrievers(self) -> tuple[str, ...]:
        """What can be searched: the retrievers built, and hybrid when both are."""
        built = tuple(self.meta.get("retrievers", {}))
        return built + (("hybrid",) if {"bm25", "dense"} <= set(built) else ())

    def passage(self, row: int) -> Passage:
        return self.passages([row])[0]

    def passages(self, rows: Any) -> list[Passage]:
        out = []
        with self.reading("passages.jsonl"), open(self.folder / "passages.jsonl", "rb") as f:
            for row in rows:
                start, end = int(self._offsets[row]), int(self._offsets[row + 1])
                f.seek(start)
                out.append(Passage.from_dict(json.loads(f.read(end - start))))
        return out

    @cached_property
    def ids(self) -> list[str | None]:
        with self.reading("ids.json"):
            ids = json.loads((self.folder / "ids.json").read_text(encoding="utf-8"))
            if not isinstance(ids, list):
                raise ValueError(f"a list of passage ids expected, found {type(ids).__name__}")
            return ids

    @cached_property
    def rows_by_id(self) -> dict[str, int]:
        return {pid: row for row, pid in enumerate(self.ids) if pid is not None}

    @cached_property
    def live(self) -> np.ndarray | None:
        """False for lines replaced by a later one (``DocumentStore.add``); None when every line is live."""
        mask = np.array([pid is not None for pid in self.ids], dtype=bool)
        return None if mask.all() else mask

    def get(self, passage_id: str) -> Passage | None:
        row = self.rows_by_id.get(str(passage_id))
        return None if row is None else self.passage(row)

    def require(self, retriever: str) -> None:
        if retriever not in RETRIEVERS:
            raise IndexUnusable(f"unknown retriever {retriever!r}: choose {', '.join(RETRIEVERS)}")
        if retriever not in self.retrievers:
            need = "dense" if retriever == "hybrid" and "bm25" in self.retrievers else retriever
            raise IndexUnusable(
                f"index {self.folder} has no {need} retriever (built: {', '.join(self.retrievers) or 'none'}): "
                f"add it with vericite docs index FILE --index {self.folder} --retriever {need}"
            )

    @cached_property
    def bm25(self) -> Any:
        from .bm25 import BM25Part

        self.require("bm25")
        with self.reading("bm25/"):
            return BM25Part(self.folder / "bm25")

    @cached_property
    def dense(self) -> Any:
        from .dense import DenseVectors

        self.require("dense")
        with self.reading("dense/vectors.npy"):
            return DenseVectors(self.folder / "dense" / "vectors.npy")
