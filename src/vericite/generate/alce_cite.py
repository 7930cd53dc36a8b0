"""What ALCE's baselines do with citations besides asking for them: RERANK's choice by citation recall, and
post-hoc citation (CLOSEDBOOK + POSTCITE). Answers are read as the ALCE task reads them (``attribution/alce.py``:
ALCE's preprocessing, NLTK Punkt sentences, ``[n`` markers, ``remove_citations``).

**Citation recall** (:func:`rerank_recalls`) is the ALCE metric's own (``metrics.alce_citations.citation_recalls``,
the recall half of ``score_corpus``), as ALCE's ``eval.py`` computes it: one implementation for the metric and
for RERANK. ALCE's reranking tool (``tools/rerank_outputs.py``) differs in two ways that read as slips, not
choices: it does not cut the output at its first newline, and it gives the judge *every* document rather than the
cited ones; vericite uses eval.py's definition, the one the paper names ("the automatic citation recall score").

**Post-hoc citation** (:func:`post_hoc_cite`, ALCE's ``post_hoc_cite.py``): each sentence of a closed-book answer
(Punkt's, as ALCE's ``sent_tokenize``) that cites nothing gets ``[k] `` put before it, k the document most similar
to the sentence; the sentences are joined by spaces (QAMPARI: the question is put before each comma item to
search, and the items are joined by ", "). The ``alce`` citation format reads such a ``[k] `` as the citation of
the sentence it opens, as ALCE's metrics do. ALCE finds the document with GTR-large embeddings (``title + ". " +
text``) or TF-IDF (``title + " " + text``); here :class:`TfidfSearcher` (scikit-learn's ``TfidfVectorizer``
defaults, written out: lower-cased ``\\b\\w\\w+\\b`` tokens, raw counts, idf ``ln((1+n)/(1+df))+1``, l2 norms, cosine)
or any registered :class:`~vericite.protocols.Embedder` (:class:`EmbedderSearcher`). Ties go to the first
document, as numpy's ``argmax``.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from typing import Any, Callable, Mapping, Sequence

from ..attribution.alce import AT_MOST_CITATIONS, citation_numbers, remove_citations, sent_tokenize
from ..types import Passage, Sample

POSTHOC_ID = "alce-posthoc@1"

_TOKEN = re.compile(r"(?u)\b\w\w+\b")

Doc = Mapping[str, Any]


def rerank_recalls(
    sample: Sample, outputs: Sequence[str], docs: Sequence[Doc], judge: Any, *, qampari: bool = False, at_most: int | None = AT_MOST_CITATIONS
) -> tuple[list[float | None], int]:
    """The citation recall of each of ``outputs`` (answers to ``sample`` given ``docs``, ALCE's doc shape), each
    distinct judge pair judged once; and how many judgements could not be read (failed or unparseable; their
    answer's recall is None)."""
    from ..metrics.alce_citations import citation_recalls

    given = Sample(sample.id, sample.question, passages=[Passage.from_dict(d) for d in docs])
    recalls, totals = citation_recalls([given] * len(outputs), outputs, judge, qampari=qampari, at_most=at_most)
    return recalls, totals["unparseable_judgements"] + totals["failed_judgements"]


# --------------------------------------------------------------------------- post-hoc citation


class TfidfSearcher:
    """The document most similar to a query by TF-IDF cosine, as ALCE's ``SearcherWithinDocs(docs, "tfidf")``."""

    id = "tfidf@1"

    def __init__(self, docs: Sequence[Doc]) -> None:
        counts = [Counter(_TOKEN.findall(f"{d.get('title', '')} {d['text']}".lower())) for d in docs]
        n = len(counts)
        df: Counter[str] = Counter()
        for c in counts:
            df.update(c.keys())
        self.idf = {t: math.log((1 + n) / (1 + k)) + 1.0 for t, k in df.items()}
        self.docs = [self._unit(c) for c in counts]

    def _unit(self, counts: Mapping[str, int]) -> dict[str, float]:
        v = {t: k * self.idf[t] for t, k in counts.items() if t in self.idf}
        norm = math.sqrt(sum(x * x for x in v.values()))
        return {t: x / norm for t, x in v.items()} if norm else {}

    def vector(self, text: str) -> dict[str, float]:
        """``text``'s unit TF-IDF vector over these documents' terms (what :meth:`search` compares them with)."""
        return self._unit(Counter(_TOKEN.findall(text.lower())))

    def search(self, query: str) -> int:
        q = self.vector(query)
        scores = [sum(w * d.get(t, 0.0) for t, w in q.items()) for d in self.docs]
        return max(range(len(scores)), key=lambda i: (scores[i], -i)) if scores else 0


class EmbedderSearcher:
    """The document most similar to a query by the dot product of an Embedder's vectors (``title + ". " + text``,
    as ALCE's dense searcher; unit vectors make it the cosine)."""

    def __init__(self, docs: Sequence[Doc], embedder: Any) -> None:
        self.embedder = embedder
        self.id = f"embedder:{getattr(embedder, 'id', type(embedder).__name__)}"
        self.vectors = embedder.embed([f"{d.get('title', '')}. {d['text']}" for d in docs]) if docs else []

    def search(self, query: str) -> int:
        q = self.embedder.embed([query])[0]
        scores = [sum(a * b for a, b in zip(q, v)) for v in self.vectors]
        return max(range(len(scores)), key=lambda i: (scores[i], -i)) if scores else 0


def post_hoc_cite(output: str, docs: Sequence[Doc], searcher: Callable[[str], int] | Any, *, question: str = "", qampari: bool = False) -> tuple[str, int]:
    """ALCE's post-hoc citation of ``output`` over ``docs`` (module docstring); returns the cited output and
    how many sentences were given a citation. ``searcher``: an object with ``search(query) -> index``."""
    if not docs:
        return output, 0
    search = searcher.search if hasattr(searcher, "search") else searcher
    text = output.replace("<|im_end|>", "")
    sents = [question + " " + x.strip() for x in output.rstrip(".").split(",")] if qampari else sent_tokenize(text)
    parts, added = [], 0
    for sent in sents:
        if not citation_numbers(sent):
            sent = f"[{search(remove_citations(sent)) + 1}] " + remove_citations(sent)
            added += 1
        parts.append(sent.replace(question, "").strip() + ", " if qampari else sent + " ")
    return "".join(parts).rstrip().rstrip(","), added
