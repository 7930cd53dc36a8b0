"""Subgraphs, queries and answers in words (CAQA §4.2.3, App. A): deterministic templates, or a language model
with the paper's three instructions (Table 8: subgraph -> citation; Table 9: question extended as the query was;
Table 10: answer entity -> answer statement). The mode is recorded with every item.

In LLM mode the base question (there is no KGQA question here: the query was sampled from the graph) is the
template question of the base query, which the model extends (Table 9) when the query was extended; without an
extension the template question is kept. Replies are checked (``check_item``): the answer must appear in the
answer statement and in a supportive citation, and must not appear in a contradictory or irrelevant one.
"""

from __future__ import annotations

import re
from typing import Any, Sequence

from ....types import GenParams
from .graph import FactGraph
from .queries import Part, Query, mentions

PROMPT_VERSION = "caqa-verbalise@1"

CITATION_INSTRUCTION = (
    "Your task is to convert a specific subgraph from the knowledge graph into one or more coherent sentences "
    "that summarize the information encapsulated within the subgraph."
)
EXTEND_INSTRUCTION = (
    "Given an original question, its corresponding original logical form query, and an extended logical form "
    "query, your task is to generate an extended question. This involves expanding upon the original problem to "
    "align with the modifications made in the extended logical form query."
)
ANSWER_INSTRUCTION = "Your task is to convert a question along with its concise answer into a comprehensive answer statement."


# --------------------------------------------------------------------------- templates


def _subject(g: FactGraph, q: Query, eid: str) -> str:
    """The subject's name, with the query's constraints on it: "X (whose r is x)"."""
    cons = [p for p in q.parts if p.role == "constraint" and p.fact.subject == eid]
    name = g.label(eid)
    if cons:
        name += " (" + " and ".join(f"whose {p.fact.relation} is {p.fact.value}" for p in cons) + ")"
    return name


def _phrases(g: FactGraph, q: Query) -> list[str]:
    """One noun phrase per answer branch: "the r of X" or, for a path, "the r1 of the r0 of X"."""
    out = []
    for p in q.parts:
        if p.role != "answer":
            continue
        if q.base == "path" and p.branch == 0:
            hop = q.parts[0]
            out.append(f"the {p.fact.relation} of the {hop.fact.relation} of {_subject(g, q, hop.fact.subject)}")
        else:
            out.append(f"the {p.fact.relation} of {_subject(g, q, p.fact.subject)}")
    return out


def template_question(g: FactGraph, q: Query) -> str:
    if q.extension == "union":
        p = q.parts[0]
        return f"What is the {p.fact.relation} of {g.label(p.fact.subject)}?"
    return "What is " + " and also ".join(_phrases(g, q)) + "?"


def template_answer(g: FactGraph, q: Query) -> str:
    if q.extension == "union":
        p = q.parts[0]
        return f"The {p.fact.relation} of the people named {g.label(p.fact.subject)} include {q.answers[0]} and {q.answers[1]}."
    text = " and also ".join(_phrases(g, q))
    return text[:1].upper() + text[1:] + f" is {q.answers[0]}."


def template_citation(g: FactGraph, parts: Sequence[Part], values: Sequence[str] | None = None) -> str:
    vals = values or [p.fact.value for p in parts]
    return " ".join(f"{g.label(p.fact.subject)}'s {p.fact.relation} is {v}." for p, v in zip(parts, vals))


def base_query(q: Query) -> Query:
    """The query before its extension (the parts of branch 0, and branch 1 of a tree)."""
    if q.extension == "none":
        return q
    if q.extension == "union":
        keep = [q.parts[0]]
    else:
        keep = q.parts[:-1]
    return Query(q.base, "none", keep, [q.answers[0]])


def logical_form(g: FactGraph, q: Query) -> str:
    """A query as the paper's prompts show it: [(subject, relation, object), ...] with variables."""
    atoms = []
    for a, p in zip(q.atoms(), q.parts):
        s = a["s"] if a["s"].startswith("?") else g.label(a["s"])
        atoms.append(f'("{s}", "{a["r"]}", "{a["o"]}")')
    return ("∨" if q.extension == "union" else "∧").join(atoms) if len(atoms) > 1 else atoms[0]


# --------------------------------------------------------------------------- the LLM


_LEAD = re.compile(r"^\s*(extended question|question|answer statement|sentences?|citation|output|answer)\s*:\s*", re.I)


def clean_reply(text: str) -> str:
    """The first paragraph of a reply, without a leading "Answer statement:"-style label or quotes."""
    text = text.strip()
    text = _LEAD.sub("", text).strip()
    text = text.split("\n\n")[0].strip()
    text = " ".join(text.split())
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "\"'":
        text = text[1:-1].strip()
    return text


class LLMVerbaliser:
    """The paper's three prompts (App. A) sent to ``backend``, greedy, ``max_tokens`` each."""

    mode = "llm"

    def __init__(self, backend: Any, max_tokens: int = 96) -> None:
        self.backend = backend
        self.max_tokens = max_tokens
        self.calls = 0

    def _ask(self, instruction: str, body: str) -> str:
        messages = [{"role": "user", "content": f"Instruction: {instruction}\n{body}"}]
        self.calls += 1
        c = self.backend.generate([messages], GenParams(max_tokens=self.max_tokens, temperature=0.0, stop=("\n\n",)))[0]
        return clean_reply(c.text)

    def citation(self, g: FactGraph, parts: Sequence[Part], values: Sequence[str] | None = None) -> str:
        vals = values or [p.fact.value for p in parts]
        sub = ", ".join(f'("{g.label(p.fact.subject)}", "{p.fact.relation}", "{v}")' for p, v in zip(parts, vals))
        return self._ask(CITATION_INSTRUCTION, f"Subgraph: [{sub}]\nSentences:")

    def question(self, g: FactGraph, q: Query) -> str:
        base = base_query(q)
        original = template_question(g, base)
        if q.extension == "none":
            return original
        body = (
            f"Original question: {original}\nOriginal logical form query: {logical_form(g, base)}\n"
            f"Extended logical form query: {logical_form(g, q)}\nExtended question:"
        )
        return self._ask(EXTEND_INSTRUCTION, body)

    def answer(self, g: FactGraph, q: Query, question: str) -> str:
        return self._ask(ANSWER_INSTRUCTION, f"Question: {question}\nAnswer: {' and '.join(q.answers)}\nAnswer statement:")


class TemplateVerbaliser:
    mode = "template"
    calls = 0

    def citation(self, g: FactGraph, parts: Sequence[Part], values: Sequence[str] | None = None) -> str:
        return template_citation(g, parts, values)

    def question(self, g: FactGraph, q: Query) -> str:
        return template_question(g, q)

    def answer(self, g: FactGraph, q: Query, question: str) -> str:
        return template_answer(g, q)


def check_item(citation: str, must: Sequence[str] = (), must_not: Sequence[str] = ()) -> str | None:
    """Why an item is dropped, or None: an empty citation; a citation that lacks an answer it must state (a
    supportive one: every answer); one that states an answer it must not (a contradictory one: the replaced
    answer; an irrelevant one: every answer)."""
    if not citation.strip():
        return "empty_citation"
    if not all(mentions(citation, a) for a in must):
        return "citation_lacks_answer"
    if any(mentions(citation, a) for a in must_not):
        return "citation_states_answer"
    return None
