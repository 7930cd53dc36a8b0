"""The graph a CAQA benchmark is built from, read once into memory as facts between RDF terms
(:class:`FactGraph`), and the grounding of a logical query in the store with SPARQL (:func:`ground`).

Any graph of vericite's store works: vericite-style graphs (BioKaLMA's, whose values are labels) and RDF graphs
whose values are IRIs (Wikidata-style). A value that is an IRI of a described entity is that entity; a value that
is a label is *resolved* to the one entity whose ``rdfs:label`` is exactly that text (none, or several namesakes:
unresolved), so that two-hop paths exist in label-valued graphs too. How many values resolved is reported.

Grounding: every constant of a query (subject, predicate, object) is bound with pyoxigraph's ``substitutions``
(SEP-0007), never written into the query text; the query text holds only variables and fixed IRIs.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Any, Iterable, Sequence

import pyoxigraph as ox

from ....knowledge import terms as T
from ....knowledge.store import OxigraphStore
from ....types import normalise_property
from ..biokalma.pool import DEFAULT_EXCLUDE as BIOKALMA_EXCLUDE

#: relations that are labels or bookkeeping, never asked about: BioKaLMA's builder's, and Commons categories
DEFAULT_EXCLUDE: tuple[str, ...] = (*BIOKALMA_EXCLUDE, "commons category")

_HASH = re.compile(r"[0-9a-f]{32}")
_BARE_ID = re.compile(r"[QPL][1-9][0-9]*")


@dataclass(frozen=True)
class Fact:
    """One edge: ``subject`` (an entity id) --``relation``--> ``value`` (its text). ``target`` is the value's entity
    id when it is (or resolves to) an entity. ``pred`` and ``obj`` are the RDF terms, for grounding."""

    subject: str
    relation: str
    value: str
    target: str | None
    pred: str = field(compare=False)
    obj: Any = field(compare=False, repr=False)


def value_key(text: str) -> str:
    return " ".join(text.split()).casefold()


class FactGraph:
    """Facts of every labelled entity of an :class:`OxigraphStore`, and the indexes the builder samples from:
    facts by subject, subjects by value, values by relation (the same relation's values stand for "entities of
    the same type"), namesakes (entities sharing a label)."""

    def __init__(self, store: OxigraphStore, source: str, exclude: Sequence[str] = DEFAULT_EXCLUDE) -> None:
        self.store = store
        self.source = source
        self.exclude = {normalise_property(r) for r in exclude}
        self.labels: dict[str, str] = {}
        self.nodes: dict[str, Any] = {}
        self.facts: dict[str, list[Fact]] = {}
        self.by_value: dict[str, list[Fact]] = defaultdict(list)
        self.rel_values: dict[str, list[str]] = {}
        self.namesakes: dict[str, list[str]] = {}
        self.resolution: Counter = Counter()
        self._plabels: dict[str, str] = {}
        self._load()

    # ------------------------------------------------------------------ loading

    def _predicate_label(self, iri: str) -> str:
        got = self._plabels.get(iri)
        if got is None:
            got = "" if T.skip_predicate(iri) else self.store.predicate_label(iri)
            self._plabels[iri] = got
        return got

    def _load(self) -> None:
        st = self.store.store
        by_label: dict[str, list[str]] = defaultdict(list)
        for q in st.quads_for_pattern(None, T.RDFS_LABEL_NODE, None, T.DEFAULT_GRAPH):
            s = q.subject
            if isinstance(s, ox.NamedNode) and s.value.startswith(T.PROPERTY_NS):
                continue
            if not isinstance(q.object, ox.Literal) or not T.literal_in_lang(q.object, self.store.lang):
                continue
            eid = T.node_id(s)
            if eid in self.labels and self.labels[eid] <= q.object.value:
                continue
            self.labels[eid] = q.object.value
            self.nodes[eid] = s
        for eid, label in self.labels.items():
            by_label[label].append(eid)
        self.namesakes = {k: sorted(v) for k, v in by_label.items() if len(v) > 1}
        raw: dict[str, list[tuple[str, str, Any]]] = {}
        for eid in sorted(self.labels):
            rows = []
            for q in st.quads_for_pattern(self.nodes[eid], None, None, T.DEFAULT_GRAPH):
                p = q.predicate.value
                if p in (T.RDFS_LABEL, T.SKOS_ALT_LABEL):
                    continue
                rel = self._predicate_label(p)
                if not rel or rel in self.exclude:
                    continue
                rows.append((rel, p, q.object))
            raw[eid] = rows
        values: dict[str, set[str]] = defaultdict(set)
        for eid, rows in raw.items():
            facts = []
            for rel, p, o in rows:
                target: str | None = None
                if isinstance(o, ox.Literal):
                    if not T.literal_in_lang(o, self.store.lang):
                        continue
                    text = o.value.strip()
                    hits = [x for x in by_label.get(o.value, ()) if x != eid]
                    if len(hits) == 1:
                        target = hits[0]
                        self.resolution["resolved"] += 1
                    elif hits:
                        self.resolution["ambiguous"] += 1
                    else:
                        self.resolution["not_an_entity"] += 1
                elif isinstance(o, ox.NamedNode):
                    tid = T.node_id(o)
                    text = self.labels.get(tid, "")
                    if not text:
                        continue  # an IRI with no label: nothing to say it with
                    target = tid
                    self.resolution["iri"] += 1
                else:
                    continue
                if not text or _HASH.fullmatch(text) or _BARE_ID.fullmatch(text) or value_key(text) == value_key(self.labels[eid]):
                    continue
                f = Fact(eid, rel, text, target, p, o)
                facts.append(f)
                values[rel].add(text)
                self.by_value[value_key(text)].append(f)
            facts.sort(key=lambda f: (f.relation, f.value))
            if facts:
                self.facts[eid] = facts
        self.rel_values = {r: sorted(v) for r, v in values.items()}
        self.entities = sorted(self.facts)

    # ------------------------------------------------------------------ reading

    def label(self, eid: str) -> str:
        return self.labels.get(eid, eid)

    def values_of(self, eid: str, relation: str) -> list[str]:
        return [f.value for f in self.facts.get(eid, ()) if f.relation == relation]

    def two_hop_starts(self) -> list[Fact]:
        """Facts whose value is an entity with facts of its own (the first hop of a path)."""
        return [f for e in self.entities for f in self.facts[e] if f.target and f.target in self.facts and f.target != e]

    def summary(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "entities": len(self.entities),
            "facts": sum(len(v) for v in self.facts.values()),
            "relations": len(self.rel_values),
            "namesake_groups": len(self.namesakes),
            "values": dict(sorted(self.resolution.items())),
            "two_hop_starts": len(self.two_hop_starts()),
        }


# --------------------------------------------------------------------------- grounding with SPARQL


def _is_var(x: str) -> bool:
    return x.startswith("?")


def grounding_query(atoms: Sequence[dict[str, Any]]) -> tuple[str, list[tuple[str, str, dict[str, Any]]]]:
    """The SPARQL text of a conjunctive query and what each atom's constants are bound to. Atom ``i`` is
    ``?s_i ?p_i ?o_i``; a constant becomes a substitution of its variable, a query variable (``?a``, ``?v``) keeps its
    name. A hop through a label value (``label_hop``) reads ``?s ?p ?lab_i . ?v rdfs:label ?lab_i``."""
    lines = []
    binds: list[tuple[str, str, dict[str, Any]]] = []
    for i, a in enumerate(atoms):
        s = a["s"] if _is_var(a["s"]) else f"?s{i}"
        o = a["o"] if _is_var(a["o"]) else f"?o{i}"
        if a.get("label_hop"):
            lines.append(f"{s} ?p{i} ?lab{i} . {o} <{T.RDFS_LABEL}> ?lab{i} .")
        else:
            lines.append(f"{s} ?p{i} {o} .")
        binds.append((s, o, a))
    return "SELECT * WHERE {\n" + "\n".join(lines) + "\n}", binds


def ground(graph: FactGraph, atoms: Sequence[dict[str, Any]], limit: int = 200) -> list[dict[str, str]]:
    """The solutions of a conjunctive query (atoms ``{"s", "r", "o", "pred", "obj"?, "label_hop"?}``), each as
    ``variable -> value text`` (entity ids for entity variables, texts for values), at most ``limit``. Constants
    are bound as RDF terms; nothing of the graph's text reaches the query text."""
    text, binds = grounding_query(atoms)
    subs: dict[ox.Variable, Any] = {}
    for i, (s, o, a) in enumerate(binds):
        subs[ox.Variable(f"p{i}")] = ox.NamedNode(a["pred"])
        if not _is_var(a["s"]):
            subs[ox.Variable(f"s{i}")] = graph.nodes.get(a["s"]) or T.entity_node(a["s"])
        if not _is_var(a["o"]):
            subs[ox.Variable(f"o{i}")] = a["obj"]
    out = []
    for n, sol in enumerate(graph.store.store.query(text, substitutions=subs)):  # type: ignore[call-arg]
        if n >= limit:
            break
        row: dict[str, str] = {}
        for var in query_variables(atoms):
            term = sol[var[1:]]
            if term is None:
                continue
            if isinstance(term, ox.Literal):
                row[var] = term.value.strip()
            else:
                tid = T.node_id(term)
                row[var] = tid if var.startswith("?v") else graph.labels.get(tid, tid)
        out.append(row)
    return out


def query_variables(atoms: Iterable[dict[str, Any]]) -> set[str]:
    return {x for a in atoms for x in (a["s"], a["o"]) if _is_var(x)}
