"""CAQA's items of one query: the :class:`Sampler` draws query ``i`` of a build (a base query, extended with the
paper's odds, grounded), and :func:`make_items` turns it into the four classes' items, verbalised and checked."""

from __future__ import annotations

import random
import time
from collections import Counter
from typing import TYPE_CHECKING, Any

from .graph import FactGraph
from .queries import (
    Query,
    contradictory,
    extend_answer,
    extend_subject,
    extend_union,
    ground_query,
    insufficient,
    irrelevant,
    sample_path,
    sample_single,
    sample_tree,
)
from .verbalise import check_item

if TYPE_CHECKING:
    from .build import CaqaConfig


class Sampler:
    """Query ``i`` of a build: a base query drawn by ``base_weights``, extended with the paper's odds, grounded."""

    def __init__(self, g: FactGraph, cfg: CaqaConfig) -> None:
        self.g = g
        self.cfg = cfg
        self.starts = g.two_hop_starts()
        self.shared = sorted(k for k, fs in g.by_value.items() if len({f.subject for f in fs}) > 1)
        groups = []
        for ids in g.namesakes.values():
            ids = [e for e in ids if e in g.facts]
            for i, e in enumerate(ids):
                for e2 in ids[i + 1:]:
                    for r in sorted({f.relation for f in g.facts[e]} & {f.relation for f in g.facts[e2]}):
                        groups.append((e, e2, r))
        self.union_groups = groups
        self.grounding_s: list[float] = []
        self.grounded_to_nothing = 0  # sampled queries whose SPARQL grounding did not give back what was sampled

    def bases(self) -> list[tuple[str, float]]:
        have = {"single": bool(self.g.entities), "path": bool(self.starts), "tree": bool(self.shared)}
        return [(b, w) for b, w in self.cfg.base_weights.items() if have.get(b) and w > 0]

    def shape(self, rng: random.Random, base: str, extension: str, subject: str | None = None) -> Query | None:
        """A grounded query of the given base and extension (``None`` when none was found this time)."""
        g = self.g
        if extension == "union":
            groups = [x for x in self.union_groups if subject is None or subject in x[:2]] or (self.union_groups if subject else [])
            q = extend_union(g, rng, groups)
        else:
            if base == "single":
                q = sample_single(g, rng, subject if subject in g.facts else None)
            elif base == "path":
                starts = [f for f in self.starts if f.subject == subject] if subject else self.starts
                q = sample_path(g, rng, starts or self.starts)
            else:
                q = sample_tree(g, rng, self.shared)
            if q is not None and extension == "intersection-subject":
                q = extend_subject(g, rng, q)
            elif q is not None and extension == "intersection-answer":
                q = extend_answer(g, rng, q)
        if q is None:
            return None
        t = time.perf_counter()
        ok = ground_query(g, q)
        self.grounding_s.append(time.perf_counter() - t)
        if not ok:
            self.grounded_to_nothing += 1
        return q if ok else None

    def query(self, i: int) -> tuple[Query | None, str, random.Random]:
        """Query number ``i``, or (None, why)."""
        rng = random.Random(f"{self.cfg.seed}:{i}")
        bases = self.bases()
        base = rng.choices([b for b, _ in bases], weights=[w for _, w in bases])[0]
        if base == "single":
            ext = rng.choice(["union", "intersection-subject", "intersection-answer", "none"])
            if ext == "union" and not self.union_groups:
                return None, "no_namesakes_for_union", rng
        else:
            ext = rng.choice(["intersection-subject", "intersection-answer"])
        q = self.shape(rng, base, ext)
        if q is None:
            return None, f"no_{base}_{ext}", rng
        return q, "", rng


def make_items(g: FactGraph, sampler: Sampler, q: Query, rng: random.Random, verb: Any) -> tuple[list[dict[str, Any]], Counter]:
    """The items of one query (supportive, then insufficient, contradictory, irrelevant where each exists)."""
    dropped: Counter = Counter()
    edits: list[tuple[str, Any]] = [("supportive", (q.parts, {}))]
    edits.append(("insufficient", insufficient(q, rng)))
    edits.append(("contradictory", contradictory(g, q, rng)))
    edits.append(("irrelevant", irrelevant(g, q, rng, sampler.shape)))
    question = verb.question(g, q)
    answer = verb.answer(g, q, question)
    if not question.strip():
        dropped["empty_question"] += 1
        return [], dropped
    missing = [a for a in q.answers if not _mentions(answer, a)]
    fallback = False
    if missing:  # a model's statement that drops the answer is not kept: the template's is, and that is recorded
        dropped["answer_statement_lacks_answer_template_used"] += 1
        from .verbalise import template_answer

        answer, fallback = template_answer(g, q), True
    items = []
    for label, edit in edits:
        if edit is None:
            if not (label == "insufficient" and q.complexity == "single"):
                dropped[f"no_{label}_subgraph"] += 1
            continue
        parts, info = edit
        citation = verb.citation(g, parts)
        must = q.answers if label == "supportive" else []
        must_not = [info["replaced"]["from"]] if label == "contradictory" else (q.answers if label == "irrelevant" else [])
        why = check_item(citation, must, must_not)
        if why:
            dropped[f"{label}_{why}"] += 1
            continue
        subgraph = [p.triple(g) for p in parts]
        items.append({
            "question": question,
            "answer": answer,
            "citation": citation,
            "label": label,
            "complexity": q.complexity,
            "query": q.to_dict(),
            "subgraph": subgraph,
            "answers": [[a] for a in q.answers],
            "meta": {"answer_entities": list(q.answers), "all_answers": q.all_answers[:20], "solutions": q.n_solutions, **({"answer_statement": "template"} if fallback else {}), **info},
        })
    return items, dropped


def _mentions(text: str, value: str) -> bool:
    from .queries import mentions

    return mentions(text, value)
