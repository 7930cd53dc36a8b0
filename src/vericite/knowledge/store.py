"""The embedded graph store: Oxigraph (RocksDB on disk, or in memory) behind the ``KnowledgeGraph`` Protocol.

Why Oxigraph: it is an embedded, indexed quad store (SPO/POS/OSP and graph variants), so a one-hop lookup or a
label lookup is a range scan over an index however large the graph; it loads millions of triples a minute; and
what it stores is plain RDF, which any SPARQL endpoint can serve (``sparql.py`` reads it back the same way).

Every lookup here is a ``quads_for_pattern`` call with the user's string wrapped in a ``Literal`` object: no
user text is ever written into query text, so there is nothing to inject. How triples map to RDF: ``terms.py``.
"""

from __future__ import annotations

import os
import re
from dataclasses import asdict, dataclass
from itertools import islice
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Mapping, Sequence

import pyoxigraph as ox

from ..errors import DataError
from ..types import Entity, Triple, normalise_property
from . import terms as T

_CHUNK = 200_000  # quads per write: bounds memory while keeping writes large
_SMALL = 20_000  # below this a transactional ``extend`` beats ``bulk_extend`` (which always writes new files)
_SCAN_CAP = 2_000  # matches read before ranking in find_entities (a common name can match thousands)


@dataclass(frozen=True)
class StoreStats:
    quads: int  # everything stored, label-index triples included
    subjects: int
    predicates: int
    labelled: int  # subjects with an rdfs:label

    def to_dict(self) -> dict[str, int]:
        return asdict(self)


class OxigraphStore:
    """An on-disk (``path``) or in-memory (``path=None``) knowledge graph.

    ``lang`` is the language whose labels are shown when a graph holds several (Wikidata-style RDF); plain
    literals are always shown. One process at a time may open a given directory (RocksDB's lock).
    """

    def __init__(self, path: str | os.PathLike[str] | None = None, *, lang: str = "en") -> None:
        self.path = Path(path) if path is not None else None
        self.lang = T.check_lang(lang)
        try:
            self._store: ox.Store | None = ox.Store(str(self.path)) if self.path is not None else ox.Store()
        except OSError as e:
            raise DataError(f"cannot open graph store {self.path}: {_one_line(e)}") from None
        self._predicate_labels: dict[str, str] = {}

    # ------------------------------------------------------------------ lifecycle

    @property
    def store(self) -> ox.Store:
        """The underlying pyoxigraph store (for SPARQL or dumps); raises once closed."""
        if self._store is None:
            raise DataError(f"graph store {self.path or '(memory)'} is closed")
        return self._store

    def close(self) -> None:
        """Flush and release the store (and its directory lock). Safe to call twice."""
        if self._store is not None:
            if self.path is not None:
                self._store.flush()
            self._store = None

    def __enter__(self) -> "OxigraphStore":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"OxigraphStore({str(self.path) if self.path else 'memory'!r})"

    # ------------------------------------------------------------------ writing

    def add_triples(
        self,
        triples: Iterable[Triple],
        labels: Mapping[str, str] | None = None,
        *,
        progress: Callable[[int], None] | None = None,
    ) -> int:
        """Add facts, and entity names from ``labels`` (id -> label) and from ``Triple.subject_label``.

        Properties are normalised (``date_of_birth`` -> ``date of birth``); the property ``name`` is the
        entity's ``rdfs:label``; values are stripped and empty ones dropped (metrics.md §1). Written in large
        batches (``bulk_extend``) so a million triples load in seconds. Returns the number of triples accepted;
        ``progress`` is called now and then with the number of triples read since its last call.
        """
        nodes: dict[str, ox.NamedNode | ox.BlankNode] = {}
        labelled: set[tuple[str, str]] = set()
        props: set[str] = set()
        accepted = 0

        def node(entity_id: str) -> ox.NamedNode | ox.BlankNode:
            n = nodes.get(entity_id)
            if n is None:
                if len(nodes) > 1_000_000:  # bounded memory on huge streams; the cache only saves time
                    nodes.clear()
                    labelled.clear()
                n = nodes[entity_id] = T.entity_node(entity_id)
            return n

        def label_quads(entity_id: str, label: str) -> Iterator[ox.Quad]:
            label = label.strip()
            if label and (entity_id, label) not in labelled:
                labelled.add((entity_id, label))
                yield from _label_quads(node(entity_id), T.RDFS_LABEL_NODE, label)

        def quads() -> Iterator[ox.Quad]:
            nonlocal accepted
            for entity_id, label in (labels or {}).items():
                yield from label_quads(str(entity_id).strip(), str(label))
            read = 0
            for t in triples:
                read += 1
                if progress is not None and read % 50_000 == 0:
                    progress(50_000)
                subject = t.subject.strip()
                if not subject:
                    raise DataError(f"triple with an empty subject: {t!r}")
                if t.subject_label:
                    yield from label_quads(subject, t.subject_label)
                value = t.value.strip()
                if not value:
                    continue
                accepted += 1
                prop = normalise_property(t.property)
                if prop == T.NAME:
                    yield from label_quads(subject, value)
                    continue
                props.add(prop)
                yield ox.Quad(node(subject), _property_node(prop), ox.Literal(value))
            if progress is not None and read % 50_000:
                progress(read % 50_000)

        self._write(quads(), props)
        return accepted

    def add_entities(self, entities: Iterable[Entity]) -> int:
        """Add entity records: label, aliases (``skos:altLabel``) and types (as ``instance of`` facts).
        Returns the number of entities read."""
        n = 0
        inst = _property_node(T.INSTANCE_OF)

        def quads() -> Iterator[ox.Quad]:
            nonlocal n
            for e in entities:
                n += 1
                s = T.entity_node(e.id)
                if e.label.strip():
                    yield from _label_quads(s, T.RDFS_LABEL_NODE, e.label.strip())
                for a in e.aliases:
                    if a.strip():
                        yield from _label_quads(s, T.SKOS_ALT_LABEL_NODE, a.strip())
                for t in e.types:
                    if t.strip():
                        yield ox.Quad(s, inst, ox.Literal(t.strip()))

        self._write(quads(), {T.INSTANCE_OF})
        return n

    def load_rdf(self, path: str | os.PathLike[str], fmt: ox.RdfFormat | None = None, *, base_iri: str | None = None) -> int:
        """Bulk-load an RDF file (N-Triples, Turtle, ...) into the default graph, then index its labels.

        The file load is atomic (all or nothing). Raises ``SyntaxError``/``OSError`` from pyoxigraph; the
        loaders turn them into ``DataError``. Returns the number of quads the store gained.
        """
        before = self.count()
        self.store.bulk_load(path=str(path), format=fmt, base_iri=base_iri, to_graph=T.DEFAULT_GRAPH)
        self._predicate_labels.clear()
        self.index_labels()
        return self.count() - before

    def index_labels(self) -> int:
        """(Re)build the case-insensitive label index for every ``rdfs:label`` and ``skos:altLabel``.

        Needed after loading RDF written elsewhere; idempotent. Returns the number of labels indexed."""
        keys = [
            ox.Quad(q.subject, T.LABEL_KEY_NODE, ox.Literal(T.label_key(q.object.value)))
            for pred in (T.RDFS_LABEL_NODE, T.SKOS_ALT_LABEL_NODE)
            for q in self.store.quads_for_pattern(None, pred, None, T.DEFAULT_GRAPH)
            if isinstance(q.object, ox.Literal)
            and T.label_key(q.object.value)
            and not q.subject.value.startswith(T.PROPERTY_NS)  # vericite's properties are not entities
        ]  # materialised first: writing into the index being read is not something to rely on
        self._write(iter(keys), set())
        return len(keys)

    def _write(self, quads: Iterator[ox.Quad], properties: set[str]) -> None:
        """Write in chunks; then give each vericite property used its ``rdfs:label`` (``properties`` is filled
        by the time ``quads`` is exhausted)."""
        store = self.store
        try:
            while True:
                chunk = list(islice(quads, _CHUNK))
                if not chunk:
                    break
                if len(chunk) < _SMALL:
                    store.extend(chunk)
                else:
                    store.bulk_extend(chunk)
            if properties:
                store.extend(
                    ox.Quad(_property_node(p), T.RDFS_LABEL_NODE, ox.Literal(p)) for p in sorted(properties)
                )
        except OSError as e:
            raise DataError(f"cannot write to graph store {self.path or '(memory)'}: {_one_line(e)}") from None
        self._predicate_labels.clear()

    # ------------------------------------------------------------------ reading

    def count(self) -> int:
        """Quads in the store, label-index triples included (what a change to the store would change)."""
        return len(self.store)

    def stats(self) -> StoreStats:
        """Counts for ``vericite kg stats`` (fixed queries: no user input reaches them)."""
        q = "SELECT (COUNT(DISTINCT ?s) AS ?n) WHERE { ?s ?p ?o }"

        def one(query: str) -> int:
            sol = next(iter(self.store.query(query)))  # type: ignore[arg-type]
            return int(sol["n"].value)

        return StoreStats(
            quads=self.count(),
            subjects=one(q),
            predicates=one("SELECT (COUNT(DISTINCT ?p) AS ?n) WHERE { ?s ?p ?o }"),
            labelled=one(f"SELECT (COUNT(DISTINCT ?s) AS ?n) WHERE {{ ?s <{T.RDFS_LABEL}> ?o }}"),
        )

    def find_entities(self, label: str, *, case_insensitive: bool = True, limit: int = 50) -> list[Entity]:
        """Entities whose label or alias is ``label`` (case-insensitively by default: casefold, whitespace runs
        as one space; otherwise the stripped label exactly). One index lookup on the label key.

        Ranked: exact-case matches first, then smaller Wikidata ids (older, better-known items), then id."""
        key = T.label_key(label)
        if not key or limit <= 0 or _has_surrogate(label):
            return []
        wanted = label.strip()
        found: dict[str, ox.NamedNode | ox.BlankNode] = {}
        for q in islice(self.store.quads_for_pattern(None, T.LABEL_KEY_NODE, ox.Literal(key), T.DEFAULT_GRAPH), _SCAN_CAP):
            found.setdefault(T.node_id(q.subject), q.subject)
        ranked: list[tuple[tuple[int, int, str], Entity]] = []
        for eid, node in found.items():
            ent = self._entity(eid, node)
            exact = wanted in self._names(node)
            if not case_insensitive and not exact:
                continue
            ranked.append(((0 if exact else 1, _qid_number(eid), eid), ent))
        ranked.sort(key=lambda r: r[0])
        return [e for _, e in ranked[:limit]]

    def entity(self, entity_id: str) -> Entity | None:
        """The entity's label, types and aliases; ``None`` when the graph says nothing about it."""
        node = T.entity_node(entity_id)
        if next(self.store.quads_for_pattern(node, None, None, T.DEFAULT_GRAPH), None) is None:
            return None
        return self._entity(T.node_id(node), node)

    def entity_types(self, entity_id: str) -> tuple[str, ...]:
        """Values of ``instance of``, and labels of ``rdf:type`` / ``wdt:P31`` objects, sorted."""
        return self._types(T.entity_node(entity_id))

    def one_hop(self, entity_id: str) -> list[Triple]:
        """Every direct fact about the entity as triples of labels: ``name`` (its labels) first, then by property
        and value. Literals in other languages than ``lang`` and Wikidata bookkeeping are left out."""
        node = T.entity_node(entity_id)
        eid = T.node_id(node)
        subject_label = self._label(node) or ""
        out: list[Triple] = []
        seen: set[tuple[str, str]] = set()
        for q in self.store.quads_for_pattern(node, None, None, T.DEFAULT_GRAPH):
            p = q.predicate.value
            if T.skip_predicate(p):
                continue
            value = self._value(q.object)
            if value is None:
                continue
            prop = self._predicate_label(p)
            if (prop, value) in seen:
                continue
            seen.add((prop, value))
            out.append(Triple(eid, prop, value, subject_label))
        out.sort(key=lambda t: (t.property != T.NAME, t.property, t.value))
        return out

    def __contains__(self, entity_id: object) -> bool:
        return isinstance(entity_id, str) and self.entity(entity_id) is not None

    def dump(self, output: str | os.PathLike[str], fmt: ox.RdfFormat = ox.RdfFormat.N_TRIPLES) -> None:
        """Write the default graph (label index included, so a server of the dump can use it)."""
        self.store.dump(str(output), fmt, from_graph=T.DEFAULT_GRAPH)

    # ------------------------------------------------------------------ helpers

    def _entity(self, eid: str, node: ox.NamedNode | ox.BlankNode) -> Entity:
        aliases = sorted(
            {
                q.object.value
                for q in self.store.quads_for_pattern(node, T.SKOS_ALT_LABEL_NODE, None, T.DEFAULT_GRAPH)
                if isinstance(q.object, ox.Literal) and T.literal_in_lang(q.object, self.lang)
            }
        )
        return Entity(eid, self._label(node) or "", self._types(node), tuple(aliases))

    def _names(self, node: ox.NamedNode | ox.BlankNode) -> set[str]:
        """Every label and alias, in any language: what an exact lookup may match."""
        return {
            q.object.value
            for pred in (T.RDFS_LABEL_NODE, T.SKOS_ALT_LABEL_NODE)
            for q in self.store.quads_for_pattern(node, pred, None, T.DEFAULT_GRAPH)
            if isinstance(q.object, ox.Literal)
        }

    def _label(self, node: Any) -> str | None:
        lits = (
            q.object
            for q in self.store.quads_for_pattern(node, T.RDFS_LABEL_NODE, None, T.DEFAULT_GRAPH)
            if isinstance(q.object, ox.Literal)
        )
        return T.pick_label(lits, self.lang)

    def _types(self, node: ox.NamedNode | ox.BlankNode) -> tuple[str, ...]:
        out: set[str] = set()
        for q in self.store.quads_for_pattern(node, _property_node(T.INSTANCE_OF), None, T.DEFAULT_GRAPH):
            v = self._value(q.object)
            if v:
                out.add(v)
        for p in T.TYPE_PREDICATES:
            for q in self.store.quads_for_pattern(node, ox.NamedNode(p), None, T.DEFAULT_GRAPH):
                v = self._value(q.object)
                if v:
                    out.add(v)
        return tuple(sorted(out))

    def _value(self, obj: Any) -> str | None:
        if isinstance(obj, ox.Literal):
            return obj.value if T.literal_in_lang(obj, self.lang) else None
        if isinstance(obj, ox.NamedNode):
            return self._label(obj) or T.local_name(obj.value)
        if isinstance(obj, ox.BlankNode):
            return self._label(obj)  # an unlabelled blank node has nothing to show
        return None

    def _predicate_label(self, iri: str) -> str:
        cached = self._predicate_labels.get(iri)
        if cached is not None:
            return cached
        if iri.startswith(T.PROPERTY_NS) or iri in (T.RDFS_LABEL, T.SKOS_ALT_LABEL):
            label = T.default_property_label(iri)
        else:
            label = self._label(ox.NamedNode(iri))
            wd = T.wikidata_property_entity(iri)
            if label is None and wd is not None:
                label = self._label(ox.NamedNode(wd))
            label = normalise_property(label) if label else T.default_property_label(iri)
        self._predicate_labels[iri] = label
        return label


_property_nodes: dict[str, ox.NamedNode] = {}


def _label_quads(node: ox.NamedNode | ox.BlankNode, predicate: ox.NamedNode, label: str) -> Iterator[ox.Quad]:
    """A label and its case-insensitive index key."""
    yield ox.Quad(node, predicate, ox.Literal(label))
    key = T.label_key(label)
    if key:
        yield ox.Quad(node, T.LABEL_KEY_NODE, ox.Literal(key))


def _property_node(label: str) -> ox.NamedNode:
    node = _property_nodes.get(label)
    if node is None:
        if len(_property_nodes) > 100_000:
            _property_nodes.clear()
        node = _property_nodes[label] = ox.NamedNode(T.property_iri(label))
    return node


_QID = re.compile(r"Q([1-9][0-9]*)")


def _qid_number(eid: str) -> int:
    m = _QID.fullmatch(eid)
    return int(m.group(1)) if m else 1 << 62


def _has_surrogate(s: str) -> bool:
    """Lone surrogates cannot be in any RDF graph (RDF strings are Unicode scalar values)."""
    return any(0xD800 <= ord(c) <= 0xDFFF for c in s)


def _one_line(e: BaseException) -> str:
    return " ".join(str(e).split())


def open_store(path: str | os.PathLike[str], *, must_exist: bool = True, lang: str = "en") -> OxigraphStore:
    """Open an on-disk store; with ``must_exist`` a missing directory is a ``DataError`` rather than a new,
    empty store (a typo in ``--store`` should not answer "no results")."""
    p = Path(path)
    if must_exist and not (p.is_dir() and any(p.iterdir())):
        raise DataError(f"no graph store at {p}: create one with `vericite kg load FILE --store {p}`")
    return OxigraphStore(p, lang=lang)


__all__: Sequence[str] = ["OxigraphStore", "StoreStats", "open_store"]
