"""What the ALCE tests share: a judge's verdicts on two documents, as a table judge reads them; a tiny ALCE prompt
file with its demonstrations; an ALCE question file and that prompt file written for a test."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Mapping, Sequence

H1 = "Paul Simon wrote The Sound of Silence."
H2 = "Paul Simon is an American musician."


def premise(doc: Mapping[str, Any]) -> str:
    """A document as ALCE's judge reads it."""
    return f"Title: {doc['title']}\n{doc['text']}"


def verdicts(docs: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Both documents together and the first alone entail H1, the second alone does not; the second entails H2."""
    d0, d1 = premise(docs[0]), premise(docs[1])
    return [
        {"premise": d0 + "\n" + d1, "hypothesis": H1, "entailed": True},
        {"premise": d0, "hypothesis": H1, "entailed": True},
        {"premise": d1, "hypothesis": H1, "entailed": False},
        {"premise": d1, "hypothesis": H2, "entailed": True},
    ]


# A prompt file in ALCE's shape (instruction, demo_sep, demo_prompt, doc_prompt, demos), small enough to write out by
# hand what ALCE's run.py builds from it.
DEMOS = [
    {"question": "Q0?", "answer": "A0 [1].", "docs": [{"title": "T0a", "text": "t0a"}, {"title": "T0b", "text": "t0b"}, {"title": "T0c", "text": "t0c"}]},
    {"question": "Q1?", "answer": ["Check: [1]", "Output: A1 [1]."], "docs": [{"title": "T1a", "text": "t1a"}]},
    {
        "question": "Q2?",
        "answer": "A2 [2].",
        "docs": [
            {"title": "T2a", "text": "t2a", "summary": "Irrelevant to Q2.", "extraction": "e2a"},
            {"title": "T2b", "text": "t2b", "summary": "s2b", "extraction": "irrelevant"},
            {"title": "T2c", "text": "t2c", "summary": "s2c", "extraction": "e2c"},
        ],
    },
]
TINY = {
    "instruction": "Instruction: Answer with citations.",
    "demo_sep": "\n\n\n",
    "demo_prompt": "{INST}\n\nQuestion: {Q}\n\n{D}\nAnswer: {A}",
    "doc_prompt": "Document [{ID}](Title: {T}): {P}\n",
    "demos": DEMOS,
}


def write_alce_files(folder: Path, items: Sequence[Mapping[str, Any]]) -> tuple[Path, Path]:
    """``items`` as an ALCE question file (``asqa_eval.json``) and :data:`TINY` as its prompt file, in ``folder``."""
    data = folder / "asqa_eval.json"
    data.write_text(json.dumps(list(items)), encoding="utf-8")
    prompt = folder / "prompt.json"
    prompt.write_text(json.dumps(TINY), encoding="utf-8")
    return data, prompt
