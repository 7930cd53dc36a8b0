"""A sample: one question with its knowledge (triples or passages) and its gold answers."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

from .knowledge import Passage, Triple


@dataclass(frozen=True)
class QAPair:
    """A sub-question of an ambiguous question with its accepted short answers (ASQA's ``qa_pairs``)."""

    question: str
    short_answers: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {"question": self.question, "short_answers": list(self.short_answers)}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "QAPair":
        """Read ``{question, short_answers, ...}``; ASQA's other fields (``context``, ``wikipage``) are left out."""
        if not isinstance(d, Mapping) or not isinstance(d.get("question"), str):
            raise ValueError(f"a QA pair needs a 'question' string: {d!r}"[:200])
        if d.get("short_answers") is None:  # scored as "no answer found", STR-EM's silent 0 (ALCE's eval.py: a KeyError)
            raise ValueError(f"a QA pair needs its 'short_answers' (a list of strings): {d!r}"[:200])
        return cls(d["question"], tuple(_nonempty(_strings(d["short_answers"], "short_answers"), "short_answers")))


def _strings(v: Any, key: str) -> list[str]:
    if not isinstance(v, list) or not all(isinstance(x, str) for x in v):
        raise ValueError(f"field {key!r} must be a list of strings")
    return list(v)


def _nonempty(v: list[str], key: str) -> list[str]:
    """Gold texts must say something: an empty short answer is in every output (ALCE's STR-EM: always found), an
    empty claim is entailed by anything; either would be a silent pass."""
    if any(not x.strip() for x in v):
        raise ValueError(f"field {key!r} holds an empty text: {v!r}"[:200])
    return v


def _aliases(v: Any) -> list[str]:
    if not isinstance(v, list) or not v or not all(isinstance(x, str) for x in v) or not any(x.strip() for x in v):
        raise ValueError(f"each answer in field 'answers' must be a non-empty list of its aliases (strings, one not empty), not {v!r}"[:200])
    return list(v)


@dataclass
class Sample:
    """One question with what goes with it. Knowledge is ``knowledge`` (triples: KaLMA) or ``passages``
    (documents: ALCE, VTG); ``gold`` is the minimum knowledge set, ``absent`` the knowledge removed from the
    graph (conscious incompetence). Gold answers, by the shape the metric needs: ``answers`` (each answer a list
    of its accepted aliases: one answer for NQ or CONNER, one per answer cluster for QAMPARI), ``qa_pairs``
    (ASQA) and ``claims`` (ELI5). Every field but ``id``, ``question`` and ``knowledge`` is optional, and
    ``to_dict`` writes it only when given, so a record without them is written as before they existed."""

    id: str
    question: str
    knowledge: list[Triple] = field(default_factory=list)
    gold: list[Triple] | None = None
    absent: list[Triple] | None = None
    gold_entities: list[str] | None = None
    meta: dict[str, Any] = field(default_factory=dict)
    passages: list[Passage] = field(default_factory=list)
    answers: list[list[str]] | None = None
    qa_pairs: list[QAPair] | None = None
    claims: list[str] | None = None

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"id": self.id, "question": self.question}
        if self.knowledge or not self.passages:  # a passages-only sample carries no empty triple list
            d["knowledge"] = [t.to_dict() for t in self.knowledge]
        if self.gold is not None:
            d["gold"] = [t.to_dict() for t in self.gold]
        if self.absent is not None:
            d["absent"] = [t.to_dict() for t in self.absent]
        if self.gold_entities is not None:
            d["gold_entities"] = list(self.gold_entities)
        if self.passages:
            d["passages"] = [p.to_dict() for p in self.passages]
        if self.answers is not None:
            d["answers"] = [list(a) for a in self.answers]
        if self.qa_pairs is not None:
            d["qa_pairs"] = [q.to_dict() for q in self.qa_pairs]
        if self.claims is not None:
            d["claims"] = list(self.claims)
        if self.meta:
            d["meta"] = self.meta
        return d

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "Sample":
        """Read a record written by ``to_dict``. Passages are read from ``passages``, else from ALCE's ``docs``."""

        def triples(key: str) -> list[Triple] | None:
            v = d.get(key)
            if v is None:
                return None
            if not isinstance(v, list):
                raise ValueError(f"field {key!r} must be a list of triples")
            return [Triple.from_dict(t) for t in v]

        def records(key: str, what: str) -> list[Any] | None:
            v = d.get(key)
            if v is None:
                return None
            if not isinstance(v, list):
                raise ValueError(f"field {key!r} must be a list of {what}")
            return v

        if "question" not in d or not isinstance(d["question"], str):
            raise ValueError("missing field 'question'")
        docs_key = "passages" if d.get("passages") is not None else "docs"
        answers = records("answers", "answers, each a list of its aliases")
        qa_pairs = records("qa_pairs", "QA pairs")
        claims = d.get("claims")
        return cls(
            id=str(d.get("id", "")),
            question=d["question"],
            knowledge=triples("knowledge") or [],
            gold=triples("gold"),
            absent=triples("absent"),
            gold_entities=list(d["gold_entities"]) if d.get("gold_entities") is not None else None,
            meta=dict(d.get("meta") or {}),
            passages=[Passage.from_dict(p) for p in records(docs_key, "passages") or []],
            answers=None if answers is None else [_aliases(a) for a in answers],
            qa_pairs=None if qa_pairs is None else [QAPair.from_dict(q) for q in qa_pairs],
            claims=None if claims is None else _nonempty(_strings(claims, "claims"), "claims"),
        )
