"""Logical queries over a :class:`FactGraph` (CAQA §4.2.1-4.2.2, Table 3): sample one, extend it, ground it, and
edit its supportive subgraph into the other three classes.

A query is sampled *through* the graph (a fact, a path, two facts sharing a value), so it has at least one
answer; it is then written as atoms with variables (``?a`` the answer, ``?a0``/``?a1`` a union's answers, ``?v``
a path's middle entity) and grounded with SPARQL (``graph.ground``), which gives every answer of the query and
checks the sampled subgraph is one of its solutions (a query that grounds to nothing is dropped and counted).

Base queries: ``single`` (e, r, ?a); ``path`` [e, r0, ?v, r1, ?a] where the first value is an entity; ``tree``
(e0, r0, ?a) ∧ (e1, r1, ?a). Extensions, with the paper's odds: a single query gets, equally likely, a union
(e, r, ?a0) ∨ (e', r, ?a1) over a namesake e' of e, an intersection on the subject (a constraint (e, r', x) with a
relation r' not in the query), an intersection on the answer (e2, r2, ?a) with e2 another subject of the
answer, or nothing; path and tree queries get one of the two intersections, equally likely.

Complexity (Table 2, metrics.md §3): no extension -> single; union -> union; a path with a subject constraint
stays a path -> concatenation; everything else is a tree -> intersection (a single query with a subject
constraint is two facts about one common entity, the paper's definition of intersection).
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, field
from typing import Any

from .graph import Fact, FactGraph, ground, value_key

BASES = ("single", "path", "tree")
CLASSES = ("supportive", "insufficient", "contradictory", "irrelevant")
COMPLEXITIES = ("single", "union", "intersection", "concatenation")


@dataclass
class Part:
    """One triple of a subgraph: the fact, its role (``answer``: its value is an answer; ``hop``: the first
    triple of a path; ``constraint``), and the branch it belongs to (one path from a subject to the answer)."""

    fact: Fact
    role: str
    branch: int
    var: str = "?a"  # the variable its value stands for (answer triples), or "" (constants)

    def triple(self, graph: FactGraph, value: str | None = None) -> dict[str, str]:
        return {
            "subject": self.fact.subject,
            "subject_label": graph.label(self.fact.subject),
            "property": self.fact.relation,
            "value": self.fact.value if value is None else value,
        }


@dataclass
class Query:
    base: str
    extension: str
    parts: list[Part]
    answers: list[str] = field(default_factory=list)  # the sampled answers (one, or one per union branch)
    all_answers: list[str] = field(default_factory=list)  # every answer the grounded query has
    n_solutions: int = 0

    @property
    def complexity(self) -> str:
        if self.extension == "union":
            return "union"
        if self.extension == "none" and self.base == "single":
            return "single"
        if self.base == "path" and self.extension == "intersection-subject":
            return "concatenation"
        return "intersection"

    @property
    def relations(self) -> set[str]:
        return {p.fact.relation for p in self.parts}

    def atoms(self) -> list[dict[str, Any]]:
        """The query's atoms with variables: answers and the path's middle entity are variables."""
        out = []
        for p in self.parts:
            f = p.fact
            a: dict[str, Any] = {"s": f.subject, "r": f.relation, "pred": f.pred, "o": f.value, "obj": f.obj}
            if p.role == "hop":
                a["o"] = "?v"
                a["label_hop"] = f.target is not None and not _is_iri(f)
            elif p.role == "answer":
                a["o"] = p.var
            if p.role == "answer" and self.base == "path" and p.branch == 0:
                a["s"] = "?v"
            out.append(a)
        return out

    def to_dict(self) -> dict[str, Any]:
        """The logical form as written in the dataset: atoms of labels and variables, subjects' ids beside."""
        atoms = []
        for a, p in zip(self.atoms(), self.parts):
            atoms.append({
                "s": a["s"], "r": a["r"], "o": a["o"], "role": p.role, "branch": p.branch,
                **({"label_hop": True} if a.get("label_hop") else {}),
            })
        return {"base": self.base, "extension": self.extension, "atoms": atoms}

    def key(self) -> str:
        """What makes two queries the same question: the atoms with the answers as variables."""
        return "|".join(sorted(f"{a['s']}/{a['r']}/{a['o']}" for a in self.to_dict()["atoms"]))


def _is_iri(f: Fact) -> bool:
    return not hasattr(f.obj, "language")  # a Literal has a language attribute, a NamedNode has not


# --------------------------------------------------------------------------- sampling base queries


def _pick(rng: random.Random, seq: list[Any]) -> Any:
    return seq[rng.randrange(len(seq))] if seq else None


def sample_single(g: FactGraph, rng: random.Random, subject: str | None = None) -> Query | None:
    e = subject or _pick(rng, g.entities)
    f = _pick(rng, g.facts.get(e, []))
    return None if f is None else Query("single", "none", [Part(f, "answer", 0)], [f.value])


def sample_path(g: FactGraph, rng: random.Random, starts: list[Fact]) -> Query | None:
    f0 = _pick(rng, starts)
    if f0 is None:
        return None
    nxt = [f for f in g.facts.get(f0.target or "", []) if f.target != f0.subject and value_key(f.value) != value_key(g.label(f0.subject))]
    f1 = _pick(rng, nxt)
    if f1 is None:
        return None
    return Query("path", "none", [Part(f0, "hop", 0, ""), Part(f1, "answer", 0)], [f1.value])


def sample_tree(g: FactGraph, rng: random.Random, shared: list[str]) -> Query | None:
    key = _pick(rng, shared)
    if key is None:
        return None
    facts = g.by_value[key]
    f0 = _pick(rng, facts)
    others = [f for f in facts if f.subject != f0.subject]
    f1 = _pick(rng, others)
    if f1 is None:
        return None
    return Query("tree", "none", [Part(f0, "answer", 0), Part(f1, "answer", 1)], [f0.value])


# --------------------------------------------------------------------------- extensions (Table 3)


def extend_union(g: FactGraph, rng: random.Random, groups: list[tuple[str, str, str]]) -> Query | None:
    """(e, r, ?a0) ∨ (e', r, ?a1): ``groups`` are (e, e', r) with e and e' namesakes that both have r."""
    grp = _pick(rng, groups)
    if grp is None:
        return None
    e, e2, r = grp
    f0 = _pick(rng, [f for f in g.facts[e] if f.relation == r])
    f1 = _pick(rng, [f for f in g.facts[e2] if f.relation == r])
    return Query("single", "union", [Part(f0, "answer", 0, "?a0"), Part(f1, "answer", 1, "?a1")], [f0.value, f1.value])


def extend_subject(g: FactGraph, rng: random.Random, q: Query) -> Query | None:
    """Intersection on a subject: a constraint (e_k, r', x) with r' a relation not in the query."""
    subjects = sorted({p.fact.subject for p in q.parts if p.role != "answer" or q.base != "path"})
    if q.base == "path":
        subjects = [q.parts[0].fact.subject]
    e = _pick(rng, subjects)
    used_values = {value_key(p.fact.value) for p in q.parts} | {value_key(a) for a in q.answers}
    cands = [f for f in g.facts.get(e, []) if f.relation not in q.relations and value_key(f.value) not in used_values]
    f = _pick(rng, cands)
    if f is None:
        return None
    branch = max(p.branch for p in q.parts) + 1
    return Query(q.base, "intersection-subject", q.parts + [Part(f, "constraint", branch, "")], list(q.answers))


def extend_answer(g: FactGraph, rng: random.Random, q: Query) -> Query | None:
    """Intersection on the answer: (e2, r2, ?a) with e2 a new subject that has the answer as a value."""
    a = q.answers[0]
    subjects = {p.fact.subject for p in q.parts}
    cands = [f for f in g.by_value.get(value_key(a), []) if f.subject not in subjects and f.value == a]
    f = _pick(rng, cands)
    if f is None:
        return None
    branch = max(p.branch for p in q.parts) + 1
    return Query(q.base, "intersection-answer", q.parts + [Part(f, "answer", branch)], list(q.answers))


# --------------------------------------------------------------------------- grounding


def ground_query(g: FactGraph, q: Query) -> bool:
    """Ground ``q`` with SPARQL: fills ``all_answers`` and ``n_solutions``; False when no solution has the sampled
    answers (the query grounds to nothing, or not to what was sampled)."""
    rows = ground(g, q.atoms())
    q.n_solutions = len(rows)
    if q.extension == "union":
        want = {"?a0": q.answers[0], "?a1": q.answers[1]}
        ok = any(all(r.get(k) == v for k, v in want.items()) for r in rows)
        answers = {r[k] for r in rows for k in ("?a0", "?a1") if k in r}
    else:
        ok = any(r.get("?a") == q.answers[0] for r in rows)
        if ok and q.base == "path":
            ok = any(r.get("?a") == q.answers[0] and r.get("?v") == q.parts[0].fact.target for r in rows)
        answers = {r["?a"] for r in rows if "?a" in r}
    q.all_answers = sorted(answers)
    return ok


# --------------------------------------------------------------------------- edits into the other classes


def mentions(text: str, value: str) -> bool:
    """Whether ``value`` occurs in ``text`` as words (case-insensitive, whole words)."""
    v = " ".join(value.split())
    if not v:
        return False
    return re.search(r"(?<!\w)" + re.escape(v) + r"(?!\w)", " ".join(text.split()), re.IGNORECASE) is not None


def insufficient(q: Query, rng: random.Random) -> tuple[list[Part], dict[str, Any]] | None:
    """One triple deleted (a path), or one subject-to-answer branch (trees, unions); none for a single query."""
    if q.complexity == "single":
        return None
    if q.complexity == "concatenation":
        i = rng.randrange(len(q.parts))
        return [p for j, p in enumerate(q.parts) if j != i], {"deleted": [i]}
    branches = sorted({p.branch for p in q.parts})
    if len(branches) < 2:
        return None
    b = _pick(rng, branches)
    kept = [p for p in q.parts if p.branch != b]
    return kept, {"deleted": [i for i, p in enumerate(q.parts) if p.branch == b]}


def contradictory(g: FactGraph, q: Query, rng: random.Random) -> tuple[list[Part], dict[str, Any]] | None:
    """The answer replaced by another value of the same relation (its type here) that is no answer of the query
    and not in the subgraph; for a union, one of the answers."""
    if q.extension == "union":
        i = rng.randrange(2)
        target_var = f"?a{i}"
    else:
        target_var = "?a"
    answer_parts = [p for p in q.parts if p.role == "answer" and p.var == target_var]
    old = answer_parts[0].fact.value
    taken = {value_key(a) for a in q.all_answers + q.answers} | {value_key(p.fact.value) for p in q.parts}
    taken |= {value_key(g.label(p.fact.subject)) for p in q.parts}
    pool = [v for v in g.rel_values.get(answer_parts[0].fact.relation, []) if value_key(v) not in taken]
    pool = [v for v in pool if not any(mentions(v, a) or mentions(a, v) for a in q.answers)]
    new = _pick(rng, pool)
    if new is None:
        return None
    parts = []
    for p in q.parts:
        if p.role == "answer" and p.var == target_var:
            f = p.fact
            parts.append(Part(Fact(f.subject, f.relation, new, None, f.pred, None), p.role, p.branch, p.var))
        else:
            parts.append(p)
    return parts, {"replaced": {"from": old, "to": new}}


def irrelevant(g: FactGraph, q: Query, rng: random.Random, sampler: Any, tries: int = 30) -> tuple[list[Part], dict[str, Any]] | None:
    """A subgraph of the same shape (same base and extension) with other relations and other entities and values
    (the subject may stay, as in the paper), in which no answer is mentioned. ``sampler(rng, base, extension,
    subject)`` samples a query of that shape."""
    subject = q.parts[0].fact.subject
    rels = q.relations
    names = {value_key(p.fact.value) for p in q.parts} | {value_key(a) for a in q.all_answers + q.answers}
    names |= {value_key(g.label(p.fact.subject)) for p in q.parts if p.fact.subject != subject}
    ids = {p.fact.subject for p in q.parts} - {subject}
    for attempt in range(tries):
        other = sampler(rng, q.base, q.extension, subject if attempt < tries // 2 else None)
        if other is None:
            continue
        if other.relations & rels:
            continue
        if any(p.fact.subject in ids for p in other.parts):
            continue
        if any(value_key(p.fact.value) in names or value_key(g.label(p.fact.subject)) in (names - {value_key(g.label(subject))}) for p in other.parts):
            continue
        text = " ".join(f"{g.label(p.fact.subject)} {p.fact.value}" for p in other.parts)
        if any(mentions(text, a) for a in q.answers):
            continue
        return other.parts, {"from_query": other.key()}
    return None
