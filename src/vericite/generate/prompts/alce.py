"""ALCE's prompts (``alce-prompt@1``), built from ALCE's prompt files exactly as ALCE's ``run.py`` builds them.

A prompt file (``../shared/data/alce/prompts/{asqa,qampari,eli5}_{default,sum_or_ext,closedbook}.json``, or a
user's file of the same shape) holds ``instruction``, ``demo_sep``, ``demo_prompt`` (with ``{INST}``, ``{Q}``,
``{D}``, ``{A}``), ``doc_prompt`` (with ``{ID}``, ``{T}``, ``{P}``) and ``demos`` (``question``, ``answer``,
``docs``; the sum_or_ext demos' documents carry ``summary`` and ``extraction``). What ALCE does, and so this
module:

* ``--shot`` demos are drawn with numpy's legacy generator seeded with the run's seed
  (``np.random.seed(seed); np.random.choice(len(demos), shot, replace=False)``, in the drawn order), so a seed
  picks the same demos as ALCE's (ALCE's own default seed is 42).
* A demo shows its first ``ndoc`` documents (``ndoc_in_demo`` instead: ALCE's ``--fewer_doc_in_demo
  --ndoc_in_demo N``; 0 is ``--no_doc_in_demo``), each ``doc_prompt`` with ``{T}``, then ``{P}``, then ``{ID}``
  (1-based) replaced, joined with nothing between them. With ``ndoc`` 0, ``{D}`` and its line break go.
* ``{INST}`` then ``{Q}`` are replaced, then ``{D}``; ``{A}`` is removed and the text right-stripped; a demo then
  gets its answer appended with nothing between (ALCE's demos read ``Answer:Several places ...``), a list
  answer as ``"\\n" + "\\n".join(answer)``; the question being asked ends at ``Answer:``.
* The prompt is every chosen demo followed by ``demo_sep``, then the question. Chat models get it as ALCE gives
  it to its chat models: one user message after ALCE's system message (:data:`SYSTEM`).
* With summaries or extractions (``use_shorter``), a document's text in the prompt is its summary/extraction,
  and documents are chosen by :func:`shorter_docs` (ALCE's ``get_shorter_text``).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from ...errors import DataError, VericiteError
from ...types import Message

PROMPT_ID = "alce-prompt@1"
#: the system message ALCE's run.py gives chat models before the prompt
SYSTEM = "You are a helpful assistant that answers the following questions with proper citations."
#: the prompt files of each method kind: ``{subtask}_{kind}.json``
KINDS = ("default", "sum_or_ext", "closedbook")
FIELDS = ("instruction", "demo_sep", "demo_prompt", "doc_prompt", "demos")

Doc = Mapping[str, Any]  # ALCE's document shape: title, text, and summary / extraction when it has them


@dataclass(frozen=True)
class PromptFile:
    """One ALCE prompt file, read and checked; ``sha256`` of its bytes is recorded with every run."""

    path: str
    instruction: str
    demo_sep: str
    demo_prompt: str
    doc_prompt: str
    demos: tuple[Mapping[str, Any], ...]
    sha256: str

    @property
    def name(self) -> str:
        return Path(self.path).name

    @classmethod
    def load(cls, path: str | Path) -> "PromptFile":
        p = Path(path)
        try:
            raw = p.read_bytes()
        except OSError as e:
            raise DataError(f"ALCE prompt file {p} cannot be read ({e.strerror or type(e).__name__})") from None
        try:
            d = json.loads(raw.decode("utf-8-sig"))
        except (UnicodeDecodeError, json.JSONDecodeError) as e:
            raise DataError(f"ALCE prompt file {p} is not UTF-8 JSON ({e})") from None
        if not isinstance(d, dict):
            raise DataError(f"ALCE prompt file {p}: expected a JSON object with {', '.join(FIELDS)}")
        missing = [k for k in FIELDS if k not in d]
        if missing:
            raise DataError(f"ALCE prompt file {p} lacks {', '.join(missing)}")
        if not all(isinstance(d[k], str) for k in FIELDS[:4]) or not isinstance(d["demos"], list):
            raise DataError(f"ALCE prompt file {p}: instruction, demo_sep, demo_prompt and doc_prompt are strings, demos a list")
        for n, demo in enumerate(d["demos"], 1):
            if not isinstance(demo, dict) or not isinstance(demo.get("question"), str) or "answer" not in demo:
                raise DataError(f"ALCE prompt file {p}: demo {n} needs a question and an answer")
            if not isinstance(demo.get("docs", []), list):
                raise DataError(f"ALCE prompt file {p}: demo {n}'s docs must be a list")
        return cls(str(p), d["instruction"], d["demo_sep"], d["demo_prompt"], d["doc_prompt"], tuple(d["demos"]), hashlib.sha256(raw).hexdigest())

    def to_dict(self) -> dict[str, Any]:
        """What a run's manifest records of it: its content (``sha256``), and where it is (``paths.display_path``:
        under the shared data folder as ``data:alce/prompts/...``), shown only."""
        from ...paths import display_path

        return {"file": display_path(self.path), "sha256": self.sha256}


def shipped_prompt(subtask: str, kind: str) -> Path:
    """ALCE's prompt file for a sub-task and kind, read in place from the shared data."""
    from ...paths import shared_data_dir

    if kind not in KINDS:
        raise VericiteError(f"unknown ALCE prompt kind {kind!r} (known: {', '.join(KINDS)})")
    data = shared_data_dir(required=False)
    path = data / "alce" / "prompts" / f"{subtask}_{kind}.json" if data is not None else None
    if path is None or not path.is_file():
        raise DataError(f"ALCE's prompt file {subtask}_{kind}.json is not in the shared data (alce/prompts/): set VERICITE_DATA, or give one with --method-arg prompt=FILE")
    return path


def choose_demos(n_demos: int, shot: int, seed: int) -> list[int]:
    """The demos ALCE's run.py draws for ``seed``: ``np.random.seed(seed); np.random.choice(n, shot, replace=False)``."""
    if shot > n_demos:
        raise VericiteError(f"--shot {shot} asks for more demos than the prompt file has ({n_demos})")
    if shot == 0:
        return []
    import numpy as np

    return [int(i) for i in np.random.RandomState(seed).choice(n_demos, shot, replace=False)]


def doc_block(doc: Doc, number: int, template: str, use_shorter: str | None = None) -> str:
    """One document as ALCE shows it (``make_doc_prompt``): ``{T}``, then ``{P}`` (the text, or its summary or
    extraction), then ``{ID}`` replaced, in that order."""
    text = doc[use_shorter] if use_shorter is not None else doc["text"]
    return template.replace("{T}", str(doc.get("title") or "")).replace("{P}", str(text)).replace("{ID}", str(number))


def shorter_docs(docs: Sequence[Doc], ndoc: int, key: str, lookup: Callable[[int, Doc], str | None] | None = None) -> tuple[list[dict[str, Any]], int]:
    """ALCE's ``get_shorter_text``: documents in order, skipping those whose summary/extraction (``key``) says
    "irrelevant" (or "Irrelevant", anywhere in it), until ``ndoc`` are kept. A document without one ends the
    scan; when nothing was kept by then, that document is used with its full text as its ``key``.
    ``lookup(i, doc)`` gives document i's value (default: its own ``key`` field, None when it has none).
    Returns the kept documents (copies, ``key`` set) and how many were skipped as irrelevant."""
    if lookup is None:
        lookup = lambda i, doc: doc.get(key) if isinstance(doc.get(key), str) else None  # noqa: E731
    kept: list[dict[str, Any]] = []
    skipped = 0
    if ndoc <= 0:
        return kept, skipped
    for i, doc in enumerate(docs):
        value = lookup(i, doc)
        if value is None:
            if not kept:
                kept.append({**doc, key: doc["text"]})
            break
        if "irrelevant" in value or "Irrelevant" in value:
            skipped += 1
            continue
        kept.append({**doc, key: value})
        if len(kept) >= ndoc:
            break
    return kept, skipped


def render(prompt: PromptFile, question: str, docs: Sequence[Doc] | None, *, use_shorter: str | None = None, answer: Any = None) -> str:
    """One demo (``answer`` given) or the question asked (``answer`` None), as ALCE's ``make_demo``. ``docs``:
    the documents shown, already chosen; None (ALCE's ``ndoc`` 0) removes ``{D}`` and its line break, while an
    empty list (every document skipped as irrelevant) leaves the line break, as ALCE does."""
    text = prompt.demo_prompt.replace("{INST}", prompt.instruction).replace("{Q}", question)
    if "{D}" in text:
        if docs is None:
            text = text.replace("{D}\n", "")
        else:
            text = text.replace("{D}", "".join(doc_block(d, i, prompt.doc_prompt, use_shorter) for i, d in enumerate(docs, 1)))
    text = text.replace("{A}", "").rstrip()
    if answer is None:
        return text
    return text + ("\n" + "\n".join(answer) if isinstance(answer, list) else str(answer))


def demo_docs(demo: Mapping[str, Any], ndoc: int, use_shorter: str | None) -> list[dict[str, Any]] | None:
    docs = list(demo.get("docs") or [])
    if ndoc <= 0:
        return None
    if use_shorter is not None:
        return shorter_docs(docs, ndoc, use_shorter)[0]
    return docs[:ndoc]


def head(prompt: PromptFile, demo_ids: Sequence[int], ndoc: int, use_shorter: str | None = None) -> str:
    """The demonstrations part: each chosen demo followed by ``demo_sep``."""
    parts = []
    for i in demo_ids:
        demo = prompt.demos[i]
        parts.append(render(prompt, demo["question"], demo_docs(demo, ndoc, use_shorter), use_shorter=use_shorter, answer=demo["answer"]))
        parts.append(prompt.demo_sep)
    return "".join(parts)


def messages(text: str) -> list[Message]:
    """The prompt as chat messages, as ALCE's run.py sends it to chat models."""
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": text}]


# --------------------------------------------------------------------------- summaries and extractions

#: the prompts ALCE's tools/gen_summary.py writes a missing summary / extraction with: (system, user)
SHORTER_PROMPTS: dict[str, tuple[str, str]] = {
    "summary": (
        "You are a helpful assistant that summarizes the following documents with respect to questions of interest.",
        'Summarize the following document within 50 words with the question of interest "{question}" Return "irrelevant" '
        "if the document is irrelevant to the question. Try to keep all the important dates, numbers, and names."
        "\n\nTitle: {title}\nText: {text}\nSummary:",
    ),
    "extraction": (
        "You are a helpful assistant that extracts answers to questions from given documents.",
        'Given the follow passage and the question "{question}", extract a useful span from the passage that can answer '
        "the question. Resolve all the coreference issues to make the extracted span understandable standalone. If the "
        'passage is not helpful for answering the question, return "irrelevant".\n\nTitle: {title}\nText: {text}\nExtracted span:',
    ),
}
SHORTER_PROMPT_IDS = {"summary": "alce-summary@1", "extraction": "alce-extraction@1"}


def shorter_messages(key: str, question: str, doc: Doc) -> list[Message]:
    """The chat messages that ask for a document's summary or extraction (ALCE's gen_summary.py)."""
    system, user = SHORTER_PROMPTS[key]
    # str.format does not read the values it puts in, so braces in a question or document are left alone
    text = user.format(question=question, title=str(doc.get("title") or ""), text=str(doc.get("text") or ""))
    return [{"role": "system", "content": system}, {"role": "user", "content": text}]
