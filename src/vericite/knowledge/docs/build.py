"""Building an index folder (its layout: ``index.py``).

``build_index`` splits the documents into passages, writes them, and builds the retrievers asked for (``bm25``,
``dense``; ``hybrid`` is both). Everything is made in ``DIR/.build/`` and moved into place when done;
``index.json`` is written last. One build at a time holds the folder (a lock that dies with its process).

* Adding a retriever to an index of the same corpus (same sha256 and passage length) builds only that one;
  asking again for what is built does nothing. An index of another corpus is refused in one line.
* An interrupted build **resumes**: run the same command again. The passages and the BM25 index are made again
  (they take seconds); the dense vectors already made are kept, in parts of ``dense.PART`` passages, when the
  corpus, the passage length and the embedder are the same as before the interruption — otherwise the build
  restarts from nothing.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
import os
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Protocol, runtime_checkable

import numpy as np

from ... import __version__
from ...jsonl import write_json_atomic, write_jsonl_atomic
from ...outputs import PathLock
from ...paths import file_sha256
from ...progress import progress_bar
from ...types import Passage
from . import bm25 as bm25_part
from . import dense as dense_mod
from .dense import build_parts, join_parts
from .index import FORMAT, FUSION_DEPTH, RRF_K, VERSION, IndexUnusable, PassageIndex, passage_text, read_meta
from .loaders import PASSAGE_WORDS, CorpusReport, passages

PASSAGE_FILES = ("passages.jsonl", "offsets.npy", "ids.json")
PARTS = ("bm25", "dense")
DEFAULT_EMBEDDER = "bge-small"
ID_RULE = "a document that fits one passage keeps its id; a longer one gives <id>#1, <id>#2, ... (meta doc: its id)"


@runtime_checkable
class Identified(Protocol):
    """An embedder that says what its model is (id, files and their sha256): recorded in index.json."""

    def identity(self) -> dict[str, Any]: ...


@dataclass
class BuildResult:
    """What a build did: ``built`` the retrievers made now, ``kept`` those already there, ``report`` the corpus
    read (None when the passages were already there), ``resumed`` dense vectors kept from an interrupted build,
    ``seconds`` per step."""

    folder: Path
    passages: int
    built: list[str] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)
    report: CorpusReport | None = None
    resumed: int = 0
    seconds: dict[str, float] = field(default_factory=dict)


def expand(retrievers: Iterable[str]) -> list[str]:
    """``hybrid`` is ``bm25`` and ``dense``; unknown names are refused."""
    out: list[str] = []
    for r in retrievers:
        if r not in ("bm25", "dense", "hybrid"):
            raise IndexUnusable(f"unknown retriever {r!r}: choose bm25, dense or hybrid")
        out += ["bm25", "dense"] if r == "hybrid" else [r]
    return [r for r in PARTS if r in out]


def iter_passages(folder: Path) -> Iterator[Passage]:
    with open(folder / "passages.jsonl", "rb") as f:
        for line in f:
            yield Passage.from_dict(json.loads(line))


def write_passages(items: Iterable[Passage], folder: Path, texts: list[str] | None = None) -> int:
    """``passages.jsonl``, ``offsets.npy`` and ``ids.json`` of ``items`` in ``folder``; returns their number.
    ``texts``, when given, gets each passage's ``passage_text`` (for the BM25 index, without reading them back)."""
    offsets, ids = [0], []
    with open(folder / "passages.jsonl", "wb") as f:
        for p in items:
            if texts is not None:
                texts.append(passage_text(p))
            line = (json.dumps(p.to_dict(), ensure_ascii=False) + "\n").encode("utf-8")
            f.write(line)
            offsets.append(offsets[-1] + len(line))
            ids.append(p.id)
    np.save(folder / "offsets.npy", np.asarray(offsets, dtype=np.int64))
    (folder / "ids.json").write_text(json.dumps(ids, ensure_ascii=False), encoding="utf-8")
    return len(ids)


def _check_existing(folder: Path, meta: dict[str, Any] | None, source: dict[str, Any], passage_words: int, embedder: str, wanted: list[str]) -> None:
    if meta is None:
        resuming = (folder / ".build" / "state.json").is_file()
        known = {".lock", ".build", "bad_items.jsonl", *PASSAGE_FILES, *PARTS}
        others = sorted(p.name for p in folder.iterdir() if p.name not in {".lock", ".build"} and not (resuming and p.name in known))
        if others:
            raise IndexUnusable(f"{folder} is not empty and holds no index ({', '.join(others[:3])}): give --index a new or empty folder")
        return
    corpus = meta.get("corpus", {})
    if corpus.get("sha256") != source.get("sha256") or corpus.get("passage_words") != passage_words or corpus.get("added"):
        raise IndexUnusable(
            f"{folder} holds an index of another corpus ({corpus.get('source')}, sha256 {str(corpus.get('sha256'))[:12]}..., "
            f"{corpus.get('passage_words')} words a passage{', passages added since' if corpus.get('added') else ''}): give --index another folder, or delete this one"
        )
    built = meta.get("retrievers", {}).get("dense")
    if "dense" in wanted and built and built.get("embedder") != embedder:
        raise IndexUnusable(f"{folder} has dense vectors made with {built.get('embedder')!r}, not {embedder!r}: give --index another folder")


def build_index(
    folder: str | Path,
    documents: Callable[[CorpusReport], Iterable[Passage]],
    source: dict[str, Any],
    *,
    retrievers: Iterable[str] = ("bm25",),
    passage_words: int = PASSAGE_WORDS,
    embedder: str = DEFAULT_EMBEDDER,
    ctx: Any = None,
    progress: bool = True,
    say: Callable[[str], None] = lambda line: None,
) -> BuildResult:
    """Build (or add to, or resume) the index in ``folder`` (module docstring). ``documents(report)`` yields the
    corpus's documents, reporting problems; it is called once, when the passages are made. ``source``:
    ``{"source", "sha256", "format"}``, recorded and compared with an index already there."""
    folder = Path(folder)
    wanted = expand(retrievers)
    folder.mkdir(parents=True, exist_ok=True)
    with PathLock(folder / ".lock", f"index {folder}"):
        meta = read_meta(folder)
        _check_existing(folder, meta, source, passage_words, embedder, wanted)
        kept = list(meta.get("retrievers", {})) if meta else []
        todo = [r for r in wanted if r not in kept]
        base = folder if meta is not None else folder / ".build"
        result = BuildResult(folder, passages=0, kept=kept)
        if meta is not None:  # what is there must be whole before anything is added to it or it is called built
            result.passages = len(PassageIndex(folder).check())
        if not todo and meta is not None:
            return result
        work = folder / ".build"
        state = {"format": FORMAT, "version": VERSION, "sha256": source.get("sha256"), "passage_words": passage_words,
                 "embedder": embedder if "dense" in todo else None, "dense_part": dense_mod.PART, "new_passages": meta is None}
        try:
            old = json.loads((work / "state.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            old = None
        if old != state and work.exists():
            say("an earlier build of another corpus or settings was left here: starting again")
            shutil.rmtree(work)
        work.mkdir(exist_ok=True)
        write_json_atomic(work / "state.json", state)

        texts: list[str] = []
        if meta is None:
            t0 = time.perf_counter()
            result.report = CorpusReport()
            result.passages = write_passages(passages(documents(result.report), passage_words, result.report), work, texts if "bm25" in todo else None)
            result.seconds["passages"] = time.perf_counter() - t0
            if result.passages == 0:
                raise IndexUnusable(f"no passage to index in {source.get('source')}: {_problems(result.report)}")
            say(f"read {result.report.documents:,} documents, {result.passages:,} passages in {result.seconds['passages']:.1f} s")
        n = result.passages
        retriever_meta: dict[str, Any] = {}
        if "bm25" in todo:
            t0 = time.perf_counter()
            if meta is not None:  # the passages were there before: read their texts back
                texts = [passage_text(p) for p in iter_passages(base)]
            bm25_part.build(texts, np.arange(n), work / "bm25")
            texts.clear()
            result.seconds["bm25"] = time.perf_counter() - t0
            retriever_meta["bm25"] = {"package": bm25_part.package(), **bm25_part.SETTINGS, "seconds": round(result.seconds["bm25"], 3)}
            say(f"bm25: {n:,} passages in {result.seconds['bm25']:.1f} s")
        if "dense" in todo:
            from ...registry import create

            t0 = time.perf_counter()
            model = create("embedders", embedder, ctx)
            with progress_bar(n, "embedding passages", enabled=progress) as advance:
                made = build_parts(model, (passage_text(p) for p in iter_passages(base)), n, work / "dense-parts", advance)
            dim = join_parts(work / "dense-parts", n, work / "dense" / "vectors.npy")
            shutil.rmtree(work / "dense-parts")
            result.resumed = n - made
            result.seconds["dense"] = time.perf_counter() - t0
            ident = model.identity() if isinstance(model, Identified) else {"id": model.id}
            retriever_meta["dense"] = {"embedder": embedder, "model": ident, "dim": dim, "dtype": "float32", "normalised": True,
                                       "resumed_vectors": result.resumed,
                                       "seconds": round(result.seconds["dense"], 3)}
            say(f"dense: {n:,} passages in {result.seconds['dense']:.1f} s" + (f" ({result.resumed:,} kept from the interrupted build)" if result.resumed else ""))

        # move into place; index.json last
        if meta is None:
            for name in PASSAGE_FILES:
                os.replace(work / name, folder / name)
            write_jsonl_atomic(folder / "bad_items.jsonl", result.report.bad if result.report else [])
        for part in todo:
            if (folder / part).exists():
                shutil.rmtree(folder / part)
            os.replace(work / part, folder / part)
        new_meta = meta or new_index_meta(source, passage_words, result.report, n)
        new_meta.setdefault("retrievers", {}).update(retriever_meta)
        write_json_atomic(folder / "index.json", new_meta)
        shutil.rmtree(work)
        result.built = todo
        return result


def _problems(report: CorpusReport) -> str:
    if not report.n_bad:
        return "it holds no document"
    first = report.bad[0] if report.bad else {}
    kinds = ", ".join(f"{n} {k}" for k, n in report.problems.items())
    return f"{kinds} (first: {first.get('where')}: {first.get('problem')}, {first.get('detail')})"


def new_index_meta(source: dict[str, Any], passage_words: int, report: CorpusReport | None, n: int) -> dict[str, Any]:
    """A new index's ``index.json`` (its retrievers' entries still empty), also for ``store.py``'s empty index."""
    rep = report.to_dict() if report else {}
    return {
        "format": FORMAT,
        "version": VERSION,
        "vericite": __version__,
        "created": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "corpus": {**source, "documents": rep.get("documents", 0), "passages": n, "passage_words": passage_words, "passage_ids": ID_RULE,
                   "merged_duplicates": rep.get("merged_duplicates", 0), "problems": rep.get("problems", {})},
        "passage_text": "the title, a newline, the text (the text alone without a title)",
        "fusion": {"method": "reciprocal rank fusion", "k": RRF_K, "depth": FUSION_DEPTH},
        "retrievers": {},
    }


def build_from_file(path: str | Path, folder: str | Path, *, format: str = "auto", **options: Any) -> BuildResult:
    """``build_index`` over a corpus file (``loaders.read_corpus``); its sha256 is the corpus's identity."""
    from .loaders import detect_format, read_corpus

    p = Path(path)
    if not p.is_file():
        raise IndexUnusable(f"corpus file not found: {p}")
    fmt = detect_format(p) if format == "auto" else format
    source = {"source": str(p), "sha256": file_sha256(p), "format": fmt}
    return build_index(folder, lambda report: read_corpus(p, fmt, report), source, **options)


def build_from_passages(docs: Iterable[Passage], folder: str | Path, *, name: str = "passages given in Python", **options: Any) -> BuildResult:
    """``build_index`` over documents given in Python; the sha256 of their JSON lines is the corpus's identity."""
    from .loaders import checked

    docs = list(docs)
    h = hashlib.sha256()
    for d in docs:
        h.update((json.dumps(d.to_dict(), sort_keys=True, ensure_ascii=False) + "\n").encode("utf-8"))
    source = {"source": name, "sha256": h.hexdigest(), "format": "passages"}
    return build_index(folder, lambda report: checked(((f"document {i}", d) for i, d in enumerate(docs, 1)), report), source, **options)
