"""CAQA test material: a hand-made graph (BioKaLMA's format) with namesakes, two-hop paths and shared values,
and a fake model that verbalises like a cooperative one (or drops the answer)."""

from __future__ import annotations

import json
import re
from pathlib import Path

from vericite.models.fake import FakeBackend, last_user_message


def person(qid: str, name: str, **facts: str) -> dict[str, str]:
    return {"qid": qid, "name": name, "instance of": "human", **{k.replace("_", " "): v for k, v in facts.items()}}


def caqa_pool() -> list:
    """People with: namesakes sharing relations (two "John Smith"s), fathers that are entities (two-hop paths),
    values shared by several people (trees), and a value with quotes and braces (SPARQL must bind it)."""
    people = [
        person("Q1", "John Smith", father="Robert Smith", place_of_birth="Leeds", occupation="painter", date_of_birth="1850-01-01"),
        person("Q2", "John Smith", father="Henry Smith", place_of_birth="York", occupation="banker", date_of_birth="1901-02-02"),
        person("Q3", "Robert Smith", place_of_birth="Leeds", occupation="sculptor", employer="Royal Academy", date_of_birth="1820-05-05"),
        person("Q4", "Henry Smith", place_of_birth="Bath", occupation="farmer", employer="Bank of Bath", date_of_birth="1870-03-03"),
        person("Q5", "Ann Brown", mother="Mary Brown", place_of_birth="Bristol", occupation="poet", notable_work='The "Sea" {at} Dusk'),
        person("Q6", "Mary Brown", place_of_birth="York", occupation="painter", employer="Bristol Museum", date_of_birth="1840-04-04"),
        person("Q7", "Carl Green", spouse="Ann Brown", place_of_birth="Bath", occupation="chemist", date_of_birth="1875-06-06"),
        person("Q8", "Dora White", father="Carl Green", place_of_birth="Leeds", occupation="banker", date_of_birth="1905-07-07"),
    ]
    return [["a question", [p]] for p in people]


def write_pool(folder: Path) -> Path:
    p = folder / "caqa_pool.json"
    p.write_text(json.dumps(caqa_pool()), encoding="utf-8")
    return p


_SUBGRAPH = re.compile(r'\("([^"]*)", "([^"]*)", "((?:[^"\\]|\\.|"(?!\)))*)"\)')


def verbaliser(*, drop_answers: bool = False, vague_statements: bool = False) -> FakeBackend:
    """Replies to the three CAQA prompts: a sentence per subgraph triple; the extended question as the template
    question; "The answer is A." as the answer statement. ``drop_answers``: citations leave values out;
    ``vague_statements``: answer statements leave the answer out."""

    def reply(messages, params) -> str:
        user = last_user_message(messages)
        if "Subgraph:" in user:
            triples = _SUBGRAPH.findall(user)
            if drop_answers:
                return " ".join(f"{s} has a {p}." for s, p, _v in triples)
            return " ".join(f"{s}'s {p} is {v}." for s, p, v in triples)
        if "Extended question:" in user:
            return "Extended question: " + user.split("Original question: ")[1].split("\n")[0].rstrip("?") + ", given the extra facts?"
        if "Answer statement:" in user:
            answer = user.split("\nAnswer: ")[1].split("\n")[0]
            return "Answer statement: It is a well-known fact." if vague_statements else f"Answer statement: The answer is {answer}."
        return "I cannot help."

    return FakeBackend("fake:caqa", replies=reply)
