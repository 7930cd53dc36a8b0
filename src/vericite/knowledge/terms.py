"""How vericite's triples are written as RDF, and how any RDF graph is read back as vericite triples.

The embedded store (``store.py``) and the remote client (``sparql.py``) share these rules, so a graph dumped
from one and served by the other answers the same way.

Writing (vericite-style graphs):

- an entity id that looks like a Wikidata id (``Q42``, ``P31``, ``L7``) is ``http://www.wikidata.org/entity/Q42``,
  so a vericite graph and Wikidata name the same things alike; an ``http(s)://`` id that is a valid IRI is used as
  it is; any other id becomes ``urn:vericite:entity:<percent-encoded id>``;
- a property is ``urn:vericite:property:<percent-encoded normalised label>`` (``types.normalise_property``, so
  ``date_of_birth`` and ``date of birth`` are one predicate), and carries its label as ``rdfs:label``;
- a value is a plain string literal (BioKaLMA's values are labels, not entities);
- the entity's name (BioKaLMA's ``name`` property) is ``rdfs:label``;
- every ``rdfs:label`` and ``skos:altLabel`` gets one more triple ``<entity> LABEL_KEY "<casefolded label>"``, so a
  case-insensitive lookup is an index lookup rather than a scan of every label.

Reading (any graph): ``rdfs:label`` reads as the property ``name``; ``rdf:type`` and ``wdt:P31`` as
``instance of``; other predicates by their ``rdfs:label`` (for Wikidata's ``wdt:Pn``, the label of ``wd:Pn``),
else their local name; IRI values by their ``rdfs:label``, else their local name. Wikidata's statement, qualifier
and reference nodes and its bookkeeping predicates are skipped: one hop means direct facts only.
"""

from __future__ import annotations

import re
from typing import Iterable
from urllib.parse import quote, unquote

import pyoxigraph as ox

from ..types import normalise_property

WD_ENTITY = "http://www.wikidata.org/entity/"
WD_PROP = "http://www.wikidata.org/prop/"
WDT = "http://www.wikidata.org/prop/direct/"
VERICITE = "urn:vericite:"
ENTITY_NS = VERICITE + "entity:"
PROPERTY_NS = VERICITE + "property:"

RDFS_LABEL = "http://www.w3.org/2000/01/rdf-schema#label"
RDF_TYPE = "http://www.w3.org/1999/02/22-rdf-syntax-ns#type"
SKOS_ALT_LABEL = "http://www.w3.org/2004/02/skos/core#altLabel"
WIKIBASE_DIRECT_CLAIM = "http://wikiba.se/ontology#directClaim"
WDT_P31 = WDT + "P31"
LABEL_KEY = VERICITE + "index:label-key"

NAME = "name"  # how rdfs:label reads as a property (BioKaLMA's spelling)
INSTANCE_OF = "instance of"
ALIAS = "also known as"  # how skos:altLabel reads (Wikidata's label for aliases)

TYPE_PREDICATES = (RDF_TYPE, WDT_P31)

# Predicates that are bookkeeping, not facts about the entity (mostly Wikidata's RDF model). Wikidata's
# ``http://www.wikidata.org/prop/`` holds statement/qualifier/reference namespaces; only ``prop/direct/`` are facts.
_SKIP_EXACT = frozenset(
    {
        LABEL_KEY,
        "http://www.w3.org/2004/02/skos/core#prefLabel",  # duplicates rdfs:label in Wikidata
        "http://schema.org/name",
        "http://schema.org/version",
        "http://schema.org/dateModified",
    }
)
_SKIP_PREFIXES = ("http://wikiba.se/ontology#", "http://www.w3.org/ns/prov#")

_WIKIDATA_ID = re.compile(r"[QPL][1-9][0-9]*")
_LANG_TAG = re.compile(r"[A-Za-z]{1,8}(-[A-Za-z0-9]{1,8})*")

RDFS_LABEL_NODE = ox.NamedNode(RDFS_LABEL)
SKOS_ALT_LABEL_NODE = ox.NamedNode(SKOS_ALT_LABEL)
LABEL_KEY_NODE = ox.NamedNode(LABEL_KEY)
DEFAULT_GRAPH = ox.DefaultGraph()


def is_wikidata_id(entity_id: str) -> bool:
    return _WIKIDATA_ID.fullmatch(entity_id) is not None


def check_lang(lang: str) -> str:
    """Language tags reach SPARQL text unquoted (``"x"@en``), so only well-formed BCP 47 tags are accepted."""
    if not _LANG_TAG.fullmatch(lang):
        raise ValueError(f"not a language tag: {lang!r}")
    return lang.lower()


def entity_iri(entity_id: str) -> str:
    """The IRI that names ``entity_id``. Every IRI returned is safe to write between ``<>`` in SPARQL: it holds
    nothing but the Wikidata prefix and digits, a validated http(s) IRI, or percent-encoded text."""
    entity_id = entity_id.strip()
    if is_wikidata_id(entity_id):
        return WD_ENTITY + entity_id
    if entity_id.startswith(("http://", "https://")) and _safe_iri(entity_id):
        return entity_id
    return ENTITY_NS + quote(entity_id, safe="")


def _safe_iri(iri: str) -> bool:
    if any(c in iri for c in '<>"{}|^`\\') or any(ord(c) <= 0x20 or 0x7F <= ord(c) <= 0x9F for c in iri):
        return False
    try:
        ox.NamedNode(iri)
    except ValueError:
        return False
    return True


def entity_node(entity_id: str) -> ox.NamedNode | ox.BlankNode:
    if entity_id.startswith("_:") and len(entity_id) > 2:  # blank nodes keep the id the store gave them
        try:
            return ox.BlankNode(entity_id[2:])
        except ValueError:
            pass
    return ox.NamedNode(entity_iri(entity_id))


def node_id(node: ox.NamedNode | ox.BlankNode) -> str:
    """The vericite id of an RDF node: the inverse of ``entity_node``."""
    if isinstance(node, ox.BlankNode):
        return "_:" + node.value
    iri = node.value
    if iri.startswith(WD_ENTITY) and is_wikidata_id(iri[len(WD_ENTITY) :]):
        return iri[len(WD_ENTITY) :]
    if iri.startswith(ENTITY_NS):
        return unquote(iri[len(ENTITY_NS) :])
    return iri


def property_iri(label: str) -> str:
    return PROPERTY_NS + quote(normalise_property(label), safe="")


def label_key(label: str) -> str:
    """What case-insensitive lookups compare: casefolded, whitespace runs read as one space."""
    return " ".join(label.split()).casefold()


def local_name(iri: str) -> str:
    """The readable tail of an IRI: after the last ``#``, else the last ``/``, else the last ``:``."""
    if iri.startswith(PROPERTY_NS):
        return unquote(iri[len(PROPERTY_NS) :])
    if iri.startswith(ENTITY_NS):
        return unquote(iri[len(ENTITY_NS) :])
    for sep in ("#", "/", ":"):
        head, found, tail = iri.rstrip("/#").rpartition(sep)
        if found and tail:
            return unquote(tail)
    return iri


def skip_predicate(iri: str) -> bool:
    if iri in _SKIP_EXACT or iri.startswith(_SKIP_PREFIXES):
        return True
    return iri.startswith(WD_PROP) and not iri.startswith(WDT)


def wikidata_property_entity(iri: str) -> str | None:
    """``wdt:P19`` -> ``wd:P19``: Wikidata labels the property entity, not the direct-claim predicate."""
    if iri.startswith(WDT) and is_wikidata_id(iri[len(WDT) :]):
        return WD_ENTITY + iri[len(WDT) :]
    return None


def literal_in_lang(lit: ox.Literal, lang: str) -> bool:
    """Plain and ``lang`` literals are kept; other languages are dropped (Wikidata labels come in hundreds)."""
    tag = lit.language
    return tag is None or tag == lang or tag.startswith(lang + "-")


def pick_label(literals: Iterable[ox.Literal], lang: str) -> str | None:
    """One label for a node: the ``lang`` label, else a plain one, else any; ties go to the smallest string,
    so the answer does not depend on index order."""
    best: tuple[int, str] | None = None
    for lit in literals:
        tag = lit.language
        rank = 0 if tag is not None and (tag == lang or tag.startswith(lang + "-")) else 1 if tag is None else 2
        cand = (rank, lit.value)
        if best is None or cand < best:
            best = cand
    return None if best is None else best[1]


def default_property_label(iri: str) -> str:
    """The label of a predicate that has no ``rdfs:label`` in the graph."""
    if iri == RDFS_LABEL:
        return NAME
    if iri in TYPE_PREDICATES:
        return INSTANCE_OF
    if iri == SKOS_ALT_LABEL:
        return ALIAS
    return normalise_property(local_name(iri))
