"""VTG with a memory of knowledge-graph triples (beyond the paper; issue 12 part 3). A triple is a memory item
shown to the generators and the judge as a document whose title is its entity's label and whose text is
``"{property}: {value}"``. ``D_L`` is KaLMA's retrieval for the question (the entities the question names, their
one-hop triples, re-ranked: ``knowledge.retrieval``), or the triples the question carries; the evidence finder's
queries go through the same retrieval (entity lookup and one-hop triples in the store), N new triples per query.
The answer cites as KaLMA's answers do, ``[QID, property: value]``, and a sentence left unverified ends with
``[NA]``; the record holds the triples of the memory as its ``knowledge``, so KaLMA's task and metrics read it."""

from __future__ import annotations

from typing import Any, Sequence

from ..types import Passage, Sample, Triple


def triple_doc(t: Triple) -> Passage:
    return Passage(f"{t.subject}|{t.property}|{t.value}", f"{t.property}: {t.value}", t.subject_label or t.subject, meta={"triple": t.to_dict()})


def doc_triple(d: Any) -> Triple:
    return Triple.from_dict(d.meta["triple"])


def triples_for(sample: Sample, retriever: Any) -> tuple[list[Passage], dict[str, Any] | None]:
    if retriever is None:
        return [triple_doc(t) for t in sample.knowledge], None
    res = retriever.retrieve(sample.question)
    info = res.to_dict()
    info["not_found"] = [m.text for m in getattr(res, "mentions", []) if m.chosen is None]
    return [triple_doc(t) for t in res.triples], info


class KgSearch:
    """The evidence finder's retrieval in a graph: KaLMA's retrieval with the query as the question."""

    def __init__(self, retriever: Any) -> None:
        self.retriever = retriever

    def __call__(self, query: str, depth: int) -> list[Passage]:
        return [triple_doc(t) for t in self.retriever.retrieve(query).triples][:depth]


class RestFirst:
    """The evidence finder's search with ``kg_k``: the question's own retrieved triples left out of D_L (``rest``,
    searched by the query), then the store's (``search``), each triple once."""

    def __init__(self, rest: Any, search: Any) -> None:
        self.rest, self.search = rest, search

    def __call__(self, query: str, depth: int) -> list[Passage]:
        out: list[Passage] = []
        seen: set[str] = set()
        for d in [*self.rest(query, depth), *self.search(query, depth)]:
            if d.id not in seen:
                seen.add(d.id)
                out.append(d)
        return out[:depth]


def with_triple_citations(sentence: str, docs: Sequence[Any], verified: bool) -> str:
    """KaLMA's citations ``[QID, property: value]`` before the final punctuation; ``[NA]`` when unverified."""
    marks = " ".join(f"[{t.subject}, {t.property}: {t.value}]" for t in map(doc_triple, docs)) if verified else "[NA]"
    if verified and not docs:
        return sentence
    s = sentence.rstrip()
    if s and s[-1] in ".!?":
        return f"{s[:-1].rstrip()} {marks}{s[-1]}"
    return f"{s} {marks}"


def kg_record(sample: Sample, output: str, memory_docs: Sequence[Any]) -> dict[str, Any]:
    """The record's KaLMA fields: the memory's triples as ``knowledge``, the answer parsed as KaLMA's."""
    from ..attribution.kg import graph_from_triples, parse_kg_answer

    triples = [doc_triple(d) for d in memory_docs]
    parsed = parse_kg_answer(output, graph_from_triples(triples))
    record: dict[str, Any] = sample.to_dict()
    record["knowledge"] = [t.to_dict() for t in triples]
    record.update(answer=parsed.to_dict(), citation_status=parsed.status_counts(), na_count=parsed.na_count)
    return record
