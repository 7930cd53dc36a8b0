"""An index folder as a :class:`~vericite.protocols.DocumentStore`: ``index:<dir>`` (created empty, with BM25,
when the folder is new or empty).

``add`` appends the passages as they are (no splitting: they are passages already); a passage with a known id
replaces it (its old line is marked replaced in ``ids.json`` and left out of every search). The BM25 index is
rebuilt over the live passages on each ``add`` (seconds for 100k passages: for one large corpus, build it with
``vericite docs index`` instead) and, when the index has dense vectors, only the new passages are embedded.
index.json then says how many passages were added after the build, so the folder is no longer taken for an index
of its corpus file. ``search`` uses the store's retriever (``retriever=``, default bm25).
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any, Iterable

import numpy as np

from ...jsonl import write_json_atomic
from ...outputs import PathLock
from ...types import Passage
from . import bm25 as bm25_part
from .build import iter_passages, new_index_meta, write_passages
from .index import PassageIndex, passage_text, read_meta
from .retrievers import IndexRetriever


def create_empty(folder: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    with PathLock(folder / ".lock", f"index {folder}"):
        if read_meta(folder) is not None:
            return
        write_passages([], folder)
        bm25_part.build([], np.zeros(0), folder / "bm25")
        meta = new_index_meta({"source": "DocumentStore.add", "sha256": None, "format": "passages"}, 0, None, 0)
        meta["retrievers"]["bm25"] = {"package": bm25_part.package(), **bm25_part.SETTINGS}
        write_json_atomic(folder / "index.json", meta)


class IndexStore:
    """A DocumentStore over an index folder (module docstring)."""

    def __init__(self, folder: str | Path, *, retriever: str = "bm25", ctx: Any = None) -> None:
        self.folder = Path(folder)
        if read_meta(self.folder) is None and (not self.folder.exists() or not any(self.folder.iterdir())):
            create_empty(self.folder)
        self.kind, self.ctx = retriever, ctx
        self._open()

    def _open(self) -> None:
        self.index = PassageIndex(self.folder)
        self.retriever = IndexRetriever(self.index, self.kind, ctx=self.ctx)

    def __len__(self) -> int:
        return len(self.index.rows_by_id)

    def get(self, passage_id: str) -> Passage | None:
        return self.index.get(passage_id)

    def search(self, query: str, k: int = 10) -> list[tuple[Passage, float]]:
        return self.retriever.search(query, k)

    def add(self, passages: Iterable[Passage]) -> int:
        new = list(passages)
        if not new:
            return 0
        with PathLock(self.folder / ".lock", f"index {self.folder}"):
            meta = read_meta(self.folder) or {}
            ids: list[str | None] = json.loads((self.folder / "ids.json").read_text(encoding="utf-8"))
            offsets = list(np.load(self.folder / "offsets.npy"))
            rows = {pid: i for i, pid in enumerate(ids) if pid is not None}
            first_new = len(ids)
            with open(self.folder / "passages.jsonl", "ab") as f:
                for p in new:
                    if p.id in rows:
                        ids[rows[p.id]] = None
                    line = (json.dumps(p.to_dict(), ensure_ascii=False) + "\n").encode("utf-8")
                    f.write(line)
                    offsets.append(offsets[-1] + len(line))
                    rows[p.id] = len(ids)
                    ids.append(p.id)
            _replace_npy(self.folder / "offsets.npy", np.asarray(offsets, dtype=np.int64))
            write_json_atomic(self.folder / "ids.json", ids)
            live = [i for i, pid in enumerate(ids) if pid is not None]
            texts = [passage_text(p) for i, p in enumerate(iter_passages(self.folder)) if ids[i] is not None]
            # a new folder swapped in: a reader that has the old files memory-mapped keeps reading them
            fresh, old = self.folder / "bm25.new", self.folder / "bm25.old"
            for d in (fresh, old):
                shutil.rmtree(d, ignore_errors=True)
            bm25_part.build(texts, np.asarray(live), fresh)
            os.replace(self.folder / "bm25", old)
            os.replace(fresh, self.folder / "bm25")
            shutil.rmtree(old, ignore_errors=True)
            if "dense" in meta.get("retrievers", {}):
                self._embed_new(first_new, meta)
            corpus = meta.setdefault("corpus", {})
            corpus["added"] = int(corpus.get("added", 0)) + len(new)
            corpus["passages"] = len(live)
            write_json_atomic(self.folder / "index.json", meta)
        self._open()
        return len(new)

    def _embed_new(self, first_new: int, meta: dict[str, Any]) -> None:
        from ...registry import create
        from .dense import embed_passages

        model = create("embedders", meta["retrievers"]["dense"]["embedder"], self.ctx)
        texts = [passage_text(p) for i, p in enumerate(iter_passages(self.folder)) if i >= first_new]
        old = np.load(self.folder / "dense" / "vectors.npy")
        fresh = embed_passages(model, texts)
        _replace_npy(self.folder / "dense" / "vectors.npy", np.concatenate([old.reshape(len(old), -1), fresh]) if len(old) else fresh)


def _replace_npy(path: Path, array: np.ndarray) -> None:
    """``array`` saved beside ``path`` and renamed over it (a reader's memory map of the old file stays valid)."""
    tmp = path.with_name(path.stem + ".tmp.npy")
    np.save(tmp, array)
    os.replace(tmp, path)


def store_from_spec(arg: str, *, ctx: Any, retriever: str = "bm25") -> IndexStore:
    """Registry factory: ``index:<dir>``, a document store on an index folder (created empty when new)."""
    from ...errors import VericiteError

    if not arg:
        raise VericiteError("the index document store needs a folder: index:<dir>")
    return IndexStore(arg, retriever=retriever, ctx=ctx)
