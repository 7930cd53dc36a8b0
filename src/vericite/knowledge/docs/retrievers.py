"""Retrievers over an index folder, behind the :class:`~vericite.protocols.Retriever` Protocol.

``bm25`` (the default), ``dense`` (the embedder the vectors were made with embeds the query) and ``hybrid``
(reciprocal-rank fusion of both: each passage scores the sum of 1 / (k + rank) over the two rankings, rank from
1, each ranking read to ``depth``; k = 60 and the depth are recorded in index.json and in ``options()``). Any of
them may be re-ranked by a :class:`~vericite.protocols.PairScorer` (the embedded ms-marco cross-encoder): the
first ``rerank_depth`` passages are scored on (query, title + newline + text) and sorted by that score, ties in
first-stage order. Registered as ``bm25:<index dir>``, ``dense:<index dir>``, ``hybrid:<index dir>`` with
options ``k``, ``rerank`` (a scorer spec), ``rerank_depth``, ``embedder``; another search engine plugs in by
registering its own Retriever.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, Sequence

from ...errors import VericiteError
from ...types import Passage, RetrievalResult
from .index import FUSION_DEPTH, RRF_K, PassageIndex, passage_text

VERSION = 1
RERANK_DEPTH = 20


@dataclass
class PassageRetrieval(RetrievalResult):
    """Passages found for a question, best first, with their scores and the retriever's id."""

    scores: list[float] = field(default_factory=list)
    retriever: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"n_evidence": len(self.evidence), "retriever": self.retriever,
                "passages": [{"id": p.id, "score": round(float(s), 6)} for p, s in zip(self.evidence, self.scores)]}


def rrf(rankings: Sequence[Sequence[int]], k: int = RRF_K) -> list[tuple[int, float]]:
    """Reciprocal-rank fusion: ``(row, sum of 1 / (k + rank))`` over the rankings (rank from 1), best first,
    ties by row."""
    scores: dict[int, float] = {}
    for ranking in rankings:
        for rank, row in enumerate(ranking, 1):
            scores[int(row)] = scores.get(int(row), 0.0) + 1.0 / (k + rank)
    return sorted(scores.items(), key=lambda rs: (-rs[1], rs[0]))


class IndexRetriever:
    """Search an index folder (module docstring). ``search(query, k)`` -> ``[(Passage, score)]``;
    ``retrieve(question)`` -> a :class:`PassageRetrieval` of the top ``k``."""

    def __init__(
        self,
        index: PassageIndex | str | Path,
        kind: str = "bm25",
        *,
        k: int = 5,
        embedder: Any = None,
        rerank: Any = None,
        rerank_depth: int = RERANK_DEPTH,
        depth: int | None = None,
        ctx: Any = None,
    ) -> None:
        self.index = index if isinstance(index, PassageIndex) else PassageIndex(index)
        self.index.require(kind)
        if k < 1 or rerank_depth < 1:
            raise VericiteError(f"k and rerank_depth must be at least 1, not {k} and {rerank_depth}")
        fusion = self.index.meta.get("fusion", {})
        self.kind, self.k, self.ctx = kind, int(k), ctx
        self.rrf_k = int(fusion.get("k", RRF_K))
        self.depth = int(depth or fusion.get("depth", FUSION_DEPTH))
        self.rerank_depth = int(rerank_depth)
        self._embedder_arg = embedder
        if isinstance(rerank, str):
            from ...registry import create

            rerank = create("scorers", rerank, ctx)
        self.scorer = rerank
        self.id = f"{kind}@{VERSION}" + (f"+rerank:{self.scorer.id}" if self.scorer is not None else "")

    @cached_property
    def embedder(self) -> Any:
        recorded = self.index.meta["retrievers"]["dense"]["embedder"]
        arg = self._embedder_arg
        if arg is None or arg == recorded:
            from ...registry import create

            return create("embedders", recorded, self.ctx)
        if isinstance(arg, str):
            raise VericiteError(f"the vectors of index {self.index.folder} were made with embedder {recorded!r}: queries must use it too, not {arg!r}")
        return arg  # an Embedder object: the caller vouches that it made the vectors

    def options(self) -> dict[str, Any]:
        out: dict[str, Any] = {"index": str(self.index.folder), "retriever": self.kind, "k": self.k}
        if self.kind == "hybrid":
            out.update(rrf_k=self.rrf_k, depth=self.depth)
        if self.kind != "bm25":
            out["embedder"] = self.index.meta["retrievers"]["dense"]["embedder"]
        if self.scorer is not None:
            out.update(rerank=self.scorer.id, rerank_depth=self.rerank_depth)
        return out

    def corpus_identity(self) -> dict[str, Any]:
        """What the index holds (:meth:`PassageIndex.corpus_identity`: the corpus file's sha256 and the passages
        indexed), as a run's manifest records it (``generate --resume`` compares it: an index rebuilt in place from
        another corpus is another retrieval)."""
        return self.index.corpus_identity()

    def ranked(self, query: str, depth: int) -> list[tuple[int, float]]:
        """``(passage row, score)`` of the first stage, best first, at most ``depth``."""
        from .dense import embed_query

        if self.kind in ("bm25", "hybrid"):
            bm25 = self.index.bm25
            with self.index.reading("bm25/"):
                rows, scores = bm25.search(query, depth if self.kind == "bm25" else self.depth)
            lexical = list(zip(rows.tolist(), scores.tolist()))
            if self.kind == "bm25":
                return lexical
        vector = embed_query(self.embedder, query)
        dense, live = self.index.dense, self.index.live
        with self.index.reading("dense/vectors.npy"):
            rows, scores = dense.search(vector, depth if self.kind == "dense" else self.depth, live)
        semantic = list(zip(rows.tolist(), scores.tolist()))
        if self.kind == "dense":
            return semantic
        return rrf([[r for r, _ in lexical], [r for r, _ in semantic]], self.rrf_k)[:depth]

    def search(self, query: str, k: int | None = None) -> list[tuple[Passage, float]]:
        k = self.k if k is None else k
        if k <= 0 or not query.strip():
            return []
        first = self.ranked(query, max(k, self.rerank_depth) if self.scorer is not None else k)
        found = list(zip(self.index.passages([r for r, _ in first]), (s for _, s in first)))
        if self.scorer is None:
            return found[:k]
        candidates = found[: self.rerank_depth]
        scores = self.scorer.score([(query, passage_text(p)) for p, _ in candidates])
        order = sorted(range(len(candidates)), key=lambda i: (-scores[i], i))
        return [(candidates[i][0], float(scores[i])) for i in order[:k]]

    def retrieve(self, question: str) -> PassageRetrieval:
        found = self.search(question)
        return PassageRetrieval(question, [p for p, _ in found], [s for _, s in found], self.id)


def corpus_identity(retriever: Any) -> dict[str, Any] | None:
    """``retriever``'s :meth:`IndexRetriever.corpus_identity` (None: no retriever, or one that reads no index)."""
    ident = getattr(retriever, "corpus_identity", None)
    return ident() if callable(ident) else None


def _factory(kind: str) -> Any:
    def from_spec(arg: str, *, ctx: Any, index: Any = None, **options: Any) -> IndexRetriever:
        if index is None and not arg:
            raise VericiteError(f"the {kind} retriever needs an index folder: {kind}:<index dir> (build one with vericite docs index)")
        return IndexRetriever(index if index is not None else arg, kind, ctx=ctx, **options)

    from_spec.__doc__ = f"Registry factory: ``{kind}:<index dir>`` (options k, embedder, rerank, rerank_depth, depth)."
    return from_spec


bm25_from_spec = _factory("bm25")
dense_from_spec = _factory("dense")
hybrid_from_spec = _factory("hybrid")
