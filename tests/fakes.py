"""Deterministic in-memory stand-ins used by unit tests (the real store and models have their own tests)."""

from __future__ import annotations

from dataclasses import dataclass, field

from vericite.types import Entity, Triple


@dataclass
class DictGraph:
    """A KnowledgeGraph over a list of triples; ``instance of`` values are the entity types."""

    triples: list[Triple]
    labels: dict[str, str] = field(default_factory=dict)

    def find_entities(self, label: str, *, case_insensitive: bool = True, limit: int = 50) -> list[Entity]:
        def match(name: str) -> bool:
            return name.casefold() == label.casefold() if case_insensitive else name == label

        ids = [i for i, name in self.labels.items() if match(name)]
        return [self.entity(i) for i in ids[:limit]]  # type: ignore[misc]

    def entity(self, entity_id: str) -> Entity | None:
        if entity_id not in self.labels:
            return None
        types = tuple(t.value for t in self.triples if t.subject == entity_id and t.property == "instance of")
        return Entity(entity_id, self.labels[entity_id], types)

    def one_hop(self, entity_id: str) -> list[Triple]:
        return [t for t in self.triples if t.subject == entity_id]


def graph_from(facts: dict[str, tuple[str, list[tuple[str, str]]]]) -> DictGraph:
    triples = [Triple(q, p, v, name) for q, (name, props) in facts.items() for p, v in props]
    return DictGraph(triples, {q: name for q, (name, _) in facts.items()})
