"""The embedded graph store: Oxigraph (RocksDB on disk, or in memory) behind the ``KnowledgeGraph`` Protocol.

Why Oxigraph: it is an embedded, indexed quad store (SPO/POS/OSP and graph variants), so a one-hop lookup or a
label lookup is a range scan over an index however large the graph; it loads millions of triples a minute; and
what it stores is plain RDF, which any SPARQL endpoint can serve (``sparql.py`` reads it back the same way).

Every lookup here is a ``quads_for_pattern`` call with the user's string wrapped in a ``Literal`` object: no
user text is ever written into query text, so there is nothing to inject. How triples map to RDF: ``terms.py``.
This module opens stores and reads them; how the store writes (N-Triples chunks, RDF files, the label index) is
in ``store_writes.py``, and ``ntriples.py`` writes the N-Triples text.
"""

from __future__ import annotations

import os
import re
from dataclasses import asdict, dataclass
from itertools import islice
from pathlib import Path
from typing import Any, Sequence

import pyoxigraph as ox

from ..errors import DataError
from ..types import Entity, Triple, normalise_property
from . import terms as T
from .ntriples import has_surrogate
from .store_writes import StoreWrites, one_line

_SCAN_CAP = 2_000  # matches read before ranking in find_entities (a common name can match thousands)


@dataclass(frozen=True)
class StoreStats:
    quads: int  # everything stored, label-index triples included
    subjects: int
    predicates: int
    labelled: int  # subjects with an rdfs:label

    def to_dict(self) -> dict[str, int]:
        return asdict(self)


class OxigraphStore(StoreWrites):
    """An on-disk (``path``) or in-memory (``path=None``) knowledge graph.

    ``lang`` is the language whose labels are shown when a graph holds several (Wikidata-style RDF); plain
    literals are always shown. One process at a time may open a given directory for writing (RocksDB's lock);
    ``read_only=True`` opens an existing store without that lock (and without creating anything), so any number of
    readers can share it. Open stores by path with ``open_store``, which checks what the folder holds.
    """

    def __init__(self, path: str | os.PathLike[str] | None = None, *, lang: str = "en", read_only: bool = False) -> None:
        self.path = Path(path) if path is not None else None
        self.lang = T.check_lang(lang)
        self.read_only = read_only and self.path is not None
        try:
            if self.path is None:
                self._store: ox.Store | None = ox.Store()
            elif self.read_only:
                self._store = ox.Store.read_only(str(self.path))
            else:
                self._store = ox.Store(str(self.path))
        except OSError as e:
            raise DataError(f"cannot open graph store {self.path}: {one_line(e)}") from None
        self._predicate_labels: dict[str, str] = {}  # predicate IRI -> label, "" for skipped predicates
        self._rdf_types: bool | None = None

    # ------------------------------------------------------------------ lifecycle

    @property
    def store(self) -> ox.Store:
        """The underlying pyoxigraph store (for SPARQL or dumps); raises once closed. Write through this class,
        not this object: the class caches predicate labels and forgets them on its own writes."""
        if self._store is None:
            raise DataError(f"graph store {self.path or '(memory)'} is closed")
        return self._store

    def close(self) -> None:
        """Flush and release the store (and its directory lock). Safe to call twice."""
        if self._store is not None:
            if self.path is not None and not self.read_only:
                self._store.flush()
            self._store = None

    def __enter__(self) -> "OxigraphStore":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"OxigraphStore({str(self.path) if self.path else 'memory'!r}{', read_only=True' if self.read_only else ''})"

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
        if not key or limit <= 0 or has_surrogate(label):
            return []
        wanted = label.strip()
        found: dict[str, ox.NamedNode | ox.BlankNode] = {}
        matches = self.store.quads_for_pattern(None, T.LABEL_KEY_NODE, ox.Literal(key), T.DEFAULT_GRAPH)
        for q in islice(matches, _SCAN_CAP):
            found.setdefault(T.node_id(q.subject), q.subject)
        ranked: list[tuple[tuple[int, int, str], Entity]] = []
        for eid, node in found.items():
            ent, names = self._describe(eid, node)
            exact = wanted in names
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
        return self._describe(T.node_id(node), node)[0]

    def entity_types(self, entity_id: str) -> tuple[str, ...]:
        """Values of ``instance of``, and labels of ``rdf:type`` / ``wdt:P31`` objects, sorted."""
        return self._types(T.entity_node(entity_id))

    def one_hop(self, entity_id: str) -> list[Triple]:
        """Every direct fact about the entity as triples of labels: ``name`` (its labels) first, then by property
        and value. Literals in other languages than ``lang`` and Wikidata bookkeeping are left out.

        One index scan over the entity's quads; predicate labels are cached (this is the retrieval hot path)."""
        node = T.entity_node(entity_id)
        eid = T.node_id(node)
        lang = self.lang
        plabels = self._predicate_labels
        names: list[ox.Literal] = []
        rows: set[tuple[str, str]] = set()
        for q in self.store.quads_for_pattern(node, None, None, T.DEFAULT_GRAPH):
            p = q.predicate.value
            prop = plabels.get(p)
            if prop is None:
                prop = plabels[p] = "" if T.skip_predicate(p) else self.predicate_label(p)
            if not prop:
                continue
            o = q.object
            if type(o) is ox.Literal:
                if p == T.RDFS_LABEL:
                    names.append(o)
                if o.language is not None and not T.literal_in_lang(o, lang):
                    continue
                value: str | None = o.value
            else:
                value = self._value(o)
                if value is None:
                    continue
            rows.add((prop, value))
        subject_label = T.pick_label(names, lang) or ""
        ordered = sorted(rows, key=lambda r: (r[0] != T.NAME, r[0], r[1]))
        return [Triple(eid, prop, value, subject_label) for prop, value in ordered]

    def __contains__(self, entity_id: object) -> bool:
        return isinstance(entity_id, str) and self.entity(entity_id) is not None

    def dump(self, output: str | os.PathLike[str], fmt: ox.RdfFormat = ox.RdfFormat.N_TRIPLES) -> None:
        """Write the default graph (label index included, so a server of the dump can use it)."""
        self.store.dump(str(output), fmt, from_graph=T.DEFAULT_GRAPH)

    # ------------------------------------------------------------------ helpers

    def _describe(self, eid: str, node: ox.NamedNode | ox.BlankNode) -> tuple[Entity, set[str]]:
        """The Entity record, and every label and alias in any language (what an exact lookup may match)."""
        labels = [q.object for q in self.store.quads_for_pattern(node, T.RDFS_LABEL_NODE, None, T.DEFAULT_GRAPH)]
        aliases = [q.object for q in self.store.quads_for_pattern(node, T.SKOS_ALT_LABEL_NODE, None, T.DEFAULT_GRAPH)]
        labels = [x for x in labels if isinstance(x, ox.Literal)]
        aliases = [x for x in aliases if isinstance(x, ox.Literal)]
        shown = tuple(sorted({a.value for a in aliases if T.literal_in_lang(a, self.lang)}))
        ent = Entity(eid, T.pick_label(labels, self.lang) or "", self._types(node), shown)
        return ent, {x.value for x in labels} | {x.value for x in aliases}

    def _label(self, node: Any) -> str | None:
        lits = (
            q.object
            for q in self.store.quads_for_pattern(node, T.RDFS_LABEL_NODE, None, T.DEFAULT_GRAPH)
            if isinstance(q.object, ox.Literal)
        )
        return T.pick_label(lits, self.lang)

    def _types(self, node: ox.NamedNode | ox.BlankNode) -> tuple[str, ...]:
        out: set[str] = set()
        predicates = [_INSTANCE_OF_NODE]
        if self._has_rdf_types():
            predicates += [ox.NamedNode(p) for p in T.TYPE_PREDICATES]
        for pred in predicates:
            for q in self.store.quads_for_pattern(node, pred, None, T.DEFAULT_GRAPH):
                v = self._value(q.object)
                if v:
                    out.add(v)
        return tuple(sorted(out))

    def _has_rdf_types(self) -> bool:
        """Whether any ``rdf:type``/``wdt:P31`` triple exists: vericite-style graphs have none, and then the
        two extra index scans per entity are skipped. Re-asked after every write."""
        if self._rdf_types is None:
            self._rdf_types = any(
                next(self.store.quads_for_pattern(None, ox.NamedNode(p), None, T.DEFAULT_GRAPH), None) is not None
                for p in T.TYPE_PREDICATES
            )
        return self._rdf_types

    def _value(self, obj: Any) -> str | None:
        if isinstance(obj, ox.Literal):
            return obj.value if T.literal_in_lang(obj, self.lang) else None
        if isinstance(obj, ox.NamedNode):
            return self._label(obj) or T.local_name(obj.value)
        if isinstance(obj, ox.BlankNode):
            return self._label(obj)  # an unlabelled blank node has nothing to show
        return None

    def predicate_label(self, iri: str) -> str:
        """A predicate's label: vericite's from its IRI; others' ``rdfs:label``, else (``wdt:Pn``) the label of
        ``wd:Pn``, else a default (``terms.default_property_label``)."""
        if iri.startswith(T.PROPERTY_NS) or iri in (T.RDFS_LABEL, T.SKOS_ALT_LABEL):
            return T.default_property_label(iri)
        label = self._label(ox.NamedNode(iri))
        wd = T.wikidata_property_entity(iri)
        if label is None and wd is not None:
            label = self._label(ox.NamedNode(wd))
        return normalise_property(label) if label else T.default_property_label(iri)


_INSTANCE_OF_NODE = ox.NamedNode(T.property_iri(T.INSTANCE_OF))


_QID = re.compile(r"Q([1-9][0-9]*)")


def _qid_number(eid: str) -> int:
    m = _QID.fullmatch(eid)
    return int(m.group(1)) if m else 1 << 62


def is_store(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` is a folder holding an on-disk Oxigraph store (RocksDB's ``CURRENT`` file marks one)."""
    p = Path(path)
    return p.is_dir() and (p / "CURRENT").is_file()


def open_store(path: str | os.PathLike[str], *, create: bool = False, lang: str = "en") -> OxigraphStore:
    """Open the on-disk store at ``path``; the one way every command opens a store by path.

    For reading (the default) the store must exist, and it is opened read-only: nothing is created or written,
    and other processes may read it at the same time. A missing folder, or one that holds no store (a run
    folder, an empty folder), is a ``DataError``: a typo in ``--store`` must not answer "no results".
    ``create=True`` (``vericite kg load``) opens it for writing, and makes it when the folder is missing or
    empty; a folder that holds other files is refused rather than filled with database files."""
    p = Path(path)
    hint = f"create one with `vericite kg load FILE --store {p}`"
    if p.exists() and not p.is_dir():
        raise DataError(f"--store {p} is a file, not a graph store folder")
    if is_store(p):
        return OxigraphStore(p, lang=lang, read_only=not create)
    if not p.exists():
        if create:
            p.parent.mkdir(parents=True, exist_ok=True)  # `--store runs/kg` on a fresh clone: runs/ is made too
            return OxigraphStore(p, lang=lang)
        raise DataError(f"no graph store at {p}: {hint}")
    if create and not any(p.iterdir()):
        return OxigraphStore(p, lang=lang)
    what = "is empty" if not any(p.iterdir()) else "holds other files"
    raise DataError(f"{p} is not a vericite graph store (the folder {what}): " + (hint if not create else "choose a new or empty folder for --store"))


__all__: Sequence[str] = ["OxigraphStore", "StoreStats", "from_spec", "is_store", "open_store"]


def from_spec(arg: str, *, ctx: Any, **options: Any) -> OxigraphStore:
    """Registry factory (``registry.graphs``): ``oxigraph:<store folder>`` opens an existing on-disk store (see
    :func:`open_store`); plain ``oxigraph`` is a new, empty in-memory graph."""
    return open_store(arg, **options) if arg else OxigraphStore(None, **options)
